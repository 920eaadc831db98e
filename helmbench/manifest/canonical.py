"""Canonical JSON and tagged hashes: the byte-level contract of the manifest (see FORMAT.md).

Pinned by a golden test: changing anything here changes every hash ever published.
"""

from __future__ import annotations

import hashlib
import json


def _normalise(obj):
    """Whole floats become ints so that `12` and `12.0` hash alike on every machine."""
    if isinstance(obj, float) and obj.is_integer():
        return int(obj)
    if isinstance(obj, dict):
        return {k: _normalise(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_normalise(v) for v in obj]
    return obj


def canonical(obj) -> str:
    return json.dumps(_normalise(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_bytes(obj) -> bytes:
    return canonical(obj).encode("utf-8")


def sha256_tag(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def hash_of(obj) -> str:
    return sha256_tag(canonical_bytes(obj))
