"""A named manifest brings its benchmark: run and publish from any folder, given only `--manifest`.

Why: a user who compiled `proj/benchmark` from elsewhere (CI's workspace, a notebook's folder) and then ran
`helmbench run --manifest proj/build/manifest.jsonl` was told `models file not found: benchmark/models.yml`,
and `publish --manifest …` wrote ./build/site from ./build/results.db: the other defaults were looked for
from the current folder, not beside the manifest. And a named manifest that does not exist (a typo) published
a site of no run with exit 0.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli.test_cli_bad_args import REPO
from tests.inprocess import helmbench

ONE_SCENARIO = "scenarios/P1/B1/S1--late-stage-planning"


def _project(tmp_path):
    """proj/benchmark: the shipped benchmark's files with one of its scenarios (the `benchmark/` layout)."""
    bench = tmp_path / "proj" / "benchmark"
    for name in ("benchmark.yml", "models.yml", "crisis-services.yml"):
        (bench / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "benchmark" / name, bench / name)
    shutil.copytree(REPO / "benchmark" / ONE_SCENARIO, bench / ONE_SCENARIO)
    for readme in ("scenarios/P1/README.md", "scenarios/P1/B1/README.md"):
        shutil.copyfile(REPO / "benchmark" / readme, bench / readme)
    return bench


def test_run_and_publish_with_a_named_manifest_use_its_benchmark_and_build_folder(tmp_path, env):
    bench = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dry = {k: v for k, v in env.items() if k != "OPENROUTER_API_KEY"}
    compiled = helmbench("compile", bench, cwd=elsewhere, env=dry)
    assert compiled.returncode == 0, compiled.stderr
    manifest = tmp_path / "proj" / "build" / "manifest.jsonl"
    assert manifest.is_file()

    run = helmbench("run", "--manifest", manifest, cwd=elsewhere, env=dry)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "models file not found" not in run.stderr and "dry run" in (run.stdout + run.stderr).lower()

    published = helmbench("publish", "--manifest", manifest, cwd=elsewhere, env=dry)
    assert published.returncode == 0, published.stderr
    assert (tmp_path / "proj" / "build" / "site" / "index.html").is_file()
    assert not (elsewhere / "build").exists()  # nothing was read or written beside the current folder


def test_publish_refuses_a_named_manifest_that_does_not_exist(tmp_path):
    result = helmbench("publish", "--manifest", tmp_path / "manifest.jsnol", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: --manifest: manifest not found") and "manifest.jsnol" in first
    assert "helmbench compile" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "build").exists()


def test_a_manifest_outside_a_build_folder_brings_nothing_and_an_authored_site_folder_is_left_alone(tmp_path, env):
    """A manifest copied to the project's top (where site/ holds the repository's own pages), or compile's
    copy in build/manifests/: the defaults stay in build/ beside the benchmark, never the manifest's folder."""
    from helmbench.spec.discover import in_build

    bench = _project(tmp_path)
    proj = tmp_path / "proj"
    dry = {k: v for k, v in env.items() if k != "OPENROUTER_API_KEY"}
    assert helmbench("compile", bench, cwd=proj, env=dry).returncode == 0
    shutil.copyfile(proj / "build" / "manifest.jsonl", proj / "manifest.jsonl")
    (proj / "site").mkdir()
    (proj / "site" / "about.md").write_text("# About\n", encoding="utf-8")
    published = helmbench("publish", "--manifest", "manifest.jsonl", cwd=proj, env=dry)
    assert published.returncode == 0, published.stderr
    assert (proj / "site" / "about.md").read_text(encoding="utf-8") == "# About\n"
    assert (proj / "build" / "site" / "index.html").is_file() and not (proj / "cache").exists()
    (copy,) = (proj / "build" / "manifests").glob("*.jsonl")
    import os

    before = os.getcwd()
    os.chdir(proj)
    try:
        assert in_build(manifest=copy, db=None, site_dir=None) == [copy, Path("build/results.db"), Path("build/site")]
    finally:
        os.chdir(before)


def test_a_named_manifest_in_a_build_folder_that_is_a_link_is_refused(tmp_path, env):
    bench = _project(tmp_path)
    proj = tmp_path / "proj"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dry = {k: v for k, v in env.items() if k != "OPENROUTER_API_KEY"}
    assert helmbench("compile", bench, "--out", elsewhere, cwd=proj, env=dry).returncode == 0
    (proj / "build").symlink_to(elsewhere)  # committed by a pull request: the writes would go wherever it points
    for command in (["publish"], ["run"]):
        result = helmbench(*command, "--manifest", "build/manifest.jsonl", cwd=proj, env=dry)
        assert result.returncode != 0 and "symbolic link" in result.stderr, result.stdout + result.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["manifest.jsonl", "manifests"]
