"""The canonical JSON form and tagged hashes are a documented contract (FORMAT.md).

Every expectation here is recomputed independently with the standard library, so a change
in helmbench.manifest.canonical cannot pass by agreeing with itself.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from helmbench.manifest import canonical, hash_of
from helmbench.manifest.canonical import canonical_bytes

from ._util import GOLDEN_TREE, read_lines


def independent(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def independent_hash(obj) -> str:
    return "sha256:" + hashlib.sha256(independent(obj).encode("utf-8")).hexdigest()


def test_keys_sorted_at_every_depth_and_no_whitespace():
    obj = {"b": 1, "a": {"z": [1, 2, {"y": None, "x": True}], "c": "d"}}
    assert canonical(obj) == '{"a":{"c":"d","z":[1,2,{"x":true,"y":null}]},"b":1}'


def test_non_ascii_is_kept_as_utf8():
    text = canonical({"t": "é ’ 🙂 \u2028"})
    assert "é" in text and "\\u00e9" not in text and "🙂" in text
    assert canonical_bytes({"t": "é"}) == '{"t":"é"}'.encode("utf-8")


def test_control_characters_are_escaped_as_json_requires():
    assert canonical({"t": "a\nb\t\"c\"\\"}) == '{"t":"a\\nb\\t\\"c\\"\\\\"}'


@pytest.mark.parametrize("value, written", [(12.0, "12"), (-0.0, "0"), (0.5, "0.5"), (7.5, "7.5"), (3, "3"),
                                            (1e3, "1000"), (True, "true")])
def test_whole_floats_are_written_as_ints(value, written):
    assert canonical({"w": value}) == f'{{"w":{written}}}'
    assert canonical([value]) == f"[{written}]"


def test_whole_floats_hash_like_ints():
    assert hash_of({"weight": 12.0, "scores": {"PASS": 1.0}}) == hash_of({"weight": 12, "scores": {"PASS": 1}})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused(bad):
    with pytest.raises(ValueError):
        canonical({"x": bad})


def test_hash_is_tagged_sha256_of_the_canonical_utf8_bytes():
    obj = {"é": ["x", 1, 2.0], "a": None}
    h = hash_of(obj)
    assert h.startswith("sha256:") and len(h) == len("sha256:") + 64
    assert h == "sha256:" + hashlib.sha256('{"a":null,"é":["x",1,2]}'.encode("utf-8")).hexdigest()


def test_pinned_value():
    """A literal value: if this changes, every published hash changes."""
    assert hash_of({"request": {"messages": [{"role": "user", "content": "café"}]}}) == (
        "sha256:e6f2a6b863abee9733dfda79620ce2f054f5d12311f8fab6a1aaff7e9d9387b3"
    )


def test_every_manifest_line_is_canonical(golden_manifest):
    for line in golden_manifest.read_text(encoding="utf-8").splitlines():
        assert line == independent(json.loads(line))


def test_case_hashes_recomputed_independently(golden_manifest):
    header, *cases = read_lines(golden_manifest)
    assert cases
    for case in cases:
        assert case["request_hash"] == independent_hash(case["request"]), case["id"]
        assert case["hash"] == independent_hash({"evaluation": case["evaluation"], "request": case["request"]}), case["id"]
        for src in case["sources"]:
            assert src["sha256"].startswith("sha256:")
        assert [s["path"] for s in case["sources"]] == sorted(s["path"] for s in case["sources"])
    assert header["catalog_hash"] == independent_hash(header["catalog"])
    cases_digest = independent_hash([c["hash"] for c in cases])
    assert header["manifest_hash"] == independent_hash({"cases": cases_digest, "catalog": header["catalog_hash"]})


def test_sources_are_sha256_of_the_raw_file_bytes(golden_manifest):
    for case in read_lines(golden_manifest)[1:]:
        for src in case["sources"]:
            raw = (GOLDEN_TREE / src["path"]).read_bytes()
            assert src["sha256"] == "sha256:" + hashlib.sha256(raw).hexdigest()


def test_header_fields(golden_manifest):
    from helmbench import __version__

    header = read_lines(golden_manifest)[0]
    assert header["format"] == "helmbench-manifest/1"
    assert header["compiler"] == f"helmbench {__version__}"
    assert header["benchmark"] == {"name": "HELMBench golden", "version": "1.0",
                                   "description": "A tiny tree pinning the manifest contract — café, naïve, 🙂"}
    assert header["cases"] == 14
    # a whole float weight (12.0 in benchmark.yml) is written as an int, a fractional one kept
    assert independent(header["catalog"]["behaviours"]["P1-B1"]["weight"]) == "12"
    assert header["catalog"]["behaviours"]["P2-B1"]["weight"] == 7.5


def test_compiled_records_need_no_further_normalisation(upstream):
    """The writer serialises records with `canonical_normalised` (no walk for whole floats):
    that is only right if every record the compiler yields is already normalised."""
    from helmbench.manifest.canonical import canonical_normalised
    from helmbench.manifest.cases import all_cases
    from helmbench.spec import load_benchmark

    from ._util import SHIPPED

    for root in (GOLDEN_TREE, upstream, SHIPPED):
        bench, _ = load_benchmark(root)
        for case in all_cases(bench):
            assert canonical_normalised(case) == canonical(case), case["id"]



def test_a_whole_number_written_as_a_float_verifies_and_reads_as_the_int(golden_manifest, tmp_path):
    """The reader normalises numbers as it parses (no second walk to verify a case): a whole number inside a
    hashed part written `1.0` hashes as `1`, as `canonical` says, and reads as the int; `1.5` is another case."""
    from helmbench.manifest import read_manifest
    from helmbench.manifest.reader import ManifestError

    header, *lines = golden_manifest.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if '"PASS":1' in line)  # a judged case's verdict scores
    for text, verifies in (('"PASS":1.0', True), ('"PASS":1e0', True), ('"PASS":1.5', False)):
        path = tmp_path / "manifest.jsonl"
        edited = lines[n].replace('"PASS":1', text)
        assert edited != lines[n]
        path.write_text("\n".join([header, *lines[:n], edited, *lines[n + 1:]]) + "\n", encoding="utf-8")
        if not verifies:
            with pytest.raises(ManifestError, match="does not match its hash"):
                read_manifest(path)
            continue
        text = json.dumps(list(read_manifest(path))[n]["evaluation"])
        assert '"PASS": 1' in text and '"PASS": 1.' not in text, text
