"""Read a manifest, trusting nothing: every hash is recomputed before any case is used.

Later stages spend money on what a manifest says, so a hand-edited or truncated manifest
is refused with a message naming the line, rather than silently run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from helmbench.errors import HelmbenchError
from helmbench.manifest.canonical import canonical_normalised, hash_of, sha256_tag
from helmbench.manifest.emit import FORMAT, _ManifestHash
from helmbench.spec.naming import case_id, natural_key


class ManifestError(HelmbenchError):
    pass


def _number(text: str) -> float | int:
    """A JSON number with a fraction or an exponent, as `normalise` would leave it (a whole float is an int):
    lines parsed with it are normalised as they are read, so verifying a case does not walk it again."""
    value = float(text)
    return int(value) if value.is_integer() else value


def _case_hashes(case: dict) -> tuple[str, str]:
    """(hash, request_hash) of a case parsed by `Manifest._lines` (already normalised: see `_number`)."""
    req_c = canonical_normalised(case["request"])
    whole = '{"evaluation":' + canonical_normalised(case["evaluation"]) + ',"request":' + req_c + "}"
    return sha256_tag(whole.encode()), sha256_tag(req_c.encode())


def _expected_cases(cat: dict) -> Iterator[tuple[str, dict]]:
    """(id, scoring fields) of every case the catalog implies, in manifest order.

    The hashes cover only request and evaluation; this ties the rest of each line (its id,
    codes, severities, difficulty, weight) to the hash-checked catalog, and the order of
    the lines to the product of the catalog's components.
    """
    comps: dict[str, dict[str, list[str]]] = {}
    for c in cat.get("components", {}).values():
        comps.setdefault(c["scenario"], {}).setdefault(c["kind"], []).append(c["code"])
    components, behaviours = cat.get("components", {}), cat.get("behaviours", {})
    for sc in sorted(cat.get("scenarios", {}), key=natural_key):
        beh = cat["scenarios"][sc]["behaviour"]
        kinds = {k: sorted(v, key=natural_key) for k, v in comps.get(sc, {}).items()}
        for cond in kinds.get("condition", []):
            for uc in kinds.get("user_context", []) or [None]:
                for pt in kinds.get("perturbation", []):
                    sev_pt = components[f"{sc}-{pt}"]["severity"]
                    sev_uc = components[f"{sc}-{uc}"]["severity"] if uc else 0
                    yield case_id(sc, cond, uc, pt), {
                        "pillar": behaviours.get(beh, {}).get("pillar"), "behaviour": beh, "scenario": sc,
                        "condition": f"{sc}-{cond}", "user_context": f"{sc}-{uc}" if uc else None,
                        "perturbation": f"{sc}-{pt}",
                        "severity": {"perturbation": sev_pt, "user_context": sev_uc, "base": sev_pt + sev_uc},
                        "difficulty": components[f"{sc}-{cond}"]["difficulty"],
                        "weight": behaviours.get(beh, {}).get("weight"),
                    }


def _text(path: Path, n: int, raw: bytes) -> str:
    """One line as text; a manifest is written as UTF-8, so anything else was edited or is another file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}:{n}: not UTF-8 text (byte {raw[exc.start:exc.start + 1]!r} at column "
                            f"{exc.start + 1}); the manifest was modified or is not a manifest",
                            hint="recompile with `helmbench compile` instead of editing the manifest") from None


def read_header(path: str | Path) -> dict:
    """The header line of a manifest (not verified), or a ManifestError naming the file."""
    path = Path(path)
    if not path.is_file():
        raise ManifestError(f"manifest not found: {path}", hint="run `helmbench compile` first")
    with open(path, "rb") as f:
        first = _text(path, 1, f.readline())
    hint = "pass the manifest.jsonl written by `helmbench compile`, or compile again"
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        raise ManifestError(f"{path}:1: the header is not JSON; is this a manifest?", hint=hint) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ManifestError(f"{path}:1: unsupported manifest format {header.get('format')!r}"
                            if isinstance(header, dict) else f"{path}:1: not a manifest header", hint=hint)
    return header


class Manifest:
    """A verified manifest; iterate it to stream its cases (dicts)."""

    def __init__(self, path: str | Path, *, verify: bool = True):
        self.path = Path(path)
        self.header = read_header(self.path)
        if verify:
            self.verify()

    @property
    def hash(self) -> str:
        return self.header["manifest_hash"]

    @property
    def catalog(self) -> dict:
        return self.header.get("catalog", {})

    def _lines(self) -> Iterator[tuple[int, dict]]:
        with open(self.path, "rb") as f:
            f.readline()
            for n, raw in enumerate(f, start=2):
                try:
                    yield n, json.loads(_text(self.path, n, raw), parse_float=_number)
                except json.JSONDecodeError as exc:
                    raise ManifestError(f"{self.path}:{n}: not valid JSON ({exc.msg})",
                                        hint="recompile with `helmbench compile` instead of editing the manifest") from None

    def verify(self) -> None:
        hint = "recompile with `helmbench compile` instead of editing the manifest"
        if "catalog" in self.header and hash_of(self.header["catalog"]) != self.header.get("catalog_hash"):
            raise ManifestError(f"{self.path}:1: catalog does not match catalog_hash; the header was modified",
                                hint=hint)
        expected = _expected_cases(self.header["catalog"]) if "catalog" in self.header else None

        def next_expected():
            try:
                return next(expected, (None, None))
            except (KeyError, TypeError, AttributeError):
                raise ManifestError(f"{self.path}:1: the catalog is malformed", hint=hint) from None

        mh = _ManifestHash()
        n = 1
        for n, case in self._lines():
            try:
                full, request = _case_hashes(case)
            except (KeyError, TypeError, ValueError):
                raise ManifestError(f"{self.path}:{n}: not a case record") from None
            if request != case.get("request_hash") or full != case.get("hash"):
                raise ManifestError(
                    f"{self.path}:{n}: case {case.get('id')} does not match its hash; the manifest was modified",
                    hint=hint,
                )
            if expected is not None:
                want_id, want = next_expected()
                if case.get("id") != want_id:
                    what = f"expected case {want_id}" if want_id else "expected no more cases"
                    raise ManifestError(f"{self.path}:{n}: {what}, found {case.get('id')}; "
                                        "a case line was deleted, added or moved", hint=hint)
                for key, value in want.items():
                    if case.get(key) != value:
                        raise ManifestError(f"{self.path}:{n}: case {want_id}: `{key}` is {case.get(key)!r} but the "
                                            f"catalog says {value!r}; the manifest was modified", hint=hint)
            mh.add(case["hash"])
        if expected is not None and (missing := next_expected()[0]):
            raise ManifestError(f"{self.path}:{n + 1}: the manifest ends before case {missing}; "
                                "a case line was deleted", hint=hint)
        if mh.count != self.header.get("cases"):
            raise ManifestError(f"{self.path}:1: header says {self.header.get('cases')} cases, file has {mh.count}",
                                hint=hint)
        if mh.manifest_hash(str(self.header.get("catalog_hash"))) != self.header.get("manifest_hash"):
            raise ManifestError(f"{self.path}:1: manifest_hash does not match its cases; the manifest was modified",
                                hint=hint)

    def __iter__(self) -> Iterator[dict]:
        for _, case in self._lines():
            yield case


def read_manifest(path: str | Path, *, verify: bool = True) -> Manifest:
    return Manifest(path, verify=verify)
