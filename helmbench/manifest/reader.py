"""Read a manifest, trusting nothing: every hash is recomputed before any case is used.

Later stages spend money on what a manifest says, so a hand-edited or truncated manifest
is refused with a message naming the line, rather than silently run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from helmbench.errors import HelmbenchError
from helmbench.manifest.canonical import canonical, hash_of, sha256_tag
from helmbench.manifest.writer import FORMAT, _ManifestHash


class ManifestError(HelmbenchError):
    pass


def _case_hashes(case: dict) -> tuple[str, str]:
    req_c = canonical(case["request"])
    whole = '{"evaluation":' + canonical(case["evaluation"]) + ',"request":' + req_c + "}"
    return sha256_tag(whole.encode()), sha256_tag(req_c.encode())


class Manifest:
    """A verified manifest; iterate it to stream its cases (dicts)."""

    def __init__(self, path: str | Path, *, verify: bool = True):
        self.path = Path(path)
        if not self.path.is_file():
            raise ManifestError(f"manifest not found: {self.path}", hint="run `helmbench compile` first")
        with open(self.path, encoding="utf-8") as f:
            first = f.readline()
        try:
            self.header = json.loads(first)
        except json.JSONDecodeError:
            raise ManifestError(f"{self.path}:1: the header is not JSON; is this a manifest?") from None
        if not isinstance(self.header, dict) or self.header.get("format") != FORMAT:
            raise ManifestError(f"{self.path}:1: unsupported manifest format {self.header.get('format')!r}"
                                if isinstance(self.header, dict) else f"{self.path}:1: not a manifest header")
        if verify:
            self.verify()

    @property
    def hash(self) -> str:
        return self.header["manifest_hash"]

    @property
    def catalog(self) -> dict:
        return self.header.get("catalog", {})

    def _lines(self) -> Iterator[tuple[int, dict]]:
        with open(self.path, encoding="utf-8") as f:
            f.readline()
            for n, line in enumerate(f, start=2):
                try:
                    yield n, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ManifestError(f"{self.path}:{n}: not valid JSON ({exc.msg})") from None

    def verify(self) -> None:
        mh = _ManifestHash()
        for n, case in self._lines():
            try:
                full, request = _case_hashes(case)
            except (KeyError, TypeError, ValueError):
                raise ManifestError(f"{self.path}:{n}: not a case record") from None
            if request != case.get("request_hash") or full != case.get("hash"):
                raise ManifestError(
                    f"{self.path}:{n}: case {case.get('id')} does not match its hash; the manifest was modified",
                    hint="recompile with `helmbench compile` instead of editing the manifest",
                )
            mh.add(case["hash"])
        if mh.count != self.header.get("cases"):
            raise ManifestError(f"{self.path}: header says {self.header.get('cases')} cases, file has {mh.count}")
        if mh.hexdigest() != self.header.get("manifest_hash"):
            raise ManifestError(f"{self.path}: manifest hash does not match its cases; the manifest was modified")
        if "catalog" in self.header and hash_of(self.header["catalog"]) != self.header.get("catalog_hash"):
            raise ManifestError(f"{self.path}:1: catalog does not match catalog_hash; the header was modified")

    def __iter__(self) -> Iterator[dict]:
        for _, case in self._lines():
            yield case


def read_manifest(path: str | Path, *, verify: bool = True) -> Manifest:
    return Manifest(path, verify=verify)
