"""Canonical JSON and tagged hashes: the byte-level contract of the manifest (see FORMAT.md).

Pinned by a golden test: changing anything here changes every hash ever published.
"""

from __future__ import annotations

import hashlib
import json


def normalise(obj):
    """Whole floats become ints so that `12` and `12.0` hash alike on every machine."""
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)
    if isinstance(obj, dict):
        return {k: normalise(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [normalise(v) for v in obj]
    return obj


def canonical(obj) -> str:
    return canonical_normalised(normalise(obj))


def canonical_normalised(obj) -> str:
    """`canonical` of an object already passed through `normalise` (no whole floats left).

    The compiler normalises each scenario's shared parts once instead of walking every
    record; a test checks that the two functions agree on every compiled record.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_bytes(obj) -> bytes:
    return canonical(obj).encode("utf-8")


def sha256_tag(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def hash_of(obj) -> str:
    return sha256_tag(canonical_bytes(obj))
