"""An installed helmbench, not a checkout: the wheel alone carries everything the pipeline needs.

The wheel is built from a copy of this repository's sources (no build isolation, no index:
setuptools is a pinned test dependency), installed with `--no-deps` into a fresh virtual
environment outside the repository. That environment sees the dependencies (litellm, mkdocs,
datasette, …) through a path entry to this test environment's site-packages, where helmbench
itself is only an editable hook that is never activated there; the test checks that the
`helmbench` imported is the wheel's. Then, in a folder holding only a benchmark (written by the
installed `helmbench init`), it runs lint → compile → run (fake OpenRouter) → report → publish
and queries Datasette, and checks the site has its leaderboard and case pages.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import httpx
import pytest

from tests.fakes.serving import wait_for_datasette

from packaged_helpers import REPO

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv with only the wheel of this repository installed in it; returns its paths and env."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(REPO / name, src / name)
    shutil.copytree(REPO / "helmbench", src / "helmbench", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "OPENROUTER_API_KEY")}
    clean["PIP_NO_INDEX"] = "1"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(tmp / "dist"), str(src)], tmp, clean)
    wheel = next((tmp / "dist").glob("helmbench-*.whl"))

    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, clean)
    py = venv / "bin" / "python"
    purelib = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp,
                        clean).stdout.strip())
    (purelib / "_helmbench_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q", str(wheel)],
         tmp, clean)
    shutil.rmtree(src)  # nothing of the sources is left to import from
    env = {**clean, "PATH": f"{venv / 'bin'}{os.pathsep}{clean.get('PATH', '/usr/bin:/bin')}", "COLUMNS": "200"}
    return {"venv": venv, "python": py, "helmbench": venv / "bin" / "helmbench", "purelib": purelib, "env": env,
            "tmp": tmp}


def test_the_wheel_is_what_runs(installed):
    where = _run([str(installed["python"]), "-c", "import helmbench, helmbench.publish.siteconfig as s; "
                  "print(helmbench.__file__); print(s.DEFAULT_CONFIG)"], installed["tmp"], installed["env"]).stdout
    module, config = where.split()
    assert Path(module).is_relative_to(installed["purelib"]), module
    assert Path(config).is_file() and Path(config).is_relative_to(installed["purelib"])
    assert str(REPO) not in where
    docs = installed["purelib"] / "helmbench" / "publish" / "site_default"
    for name in ("authors-guide.md", "javascripts/tables.js", "javascripts/vendor/tablesort/tablesort.min.js",
                 "javascripts/vendor/tablesort/LICENSE", "stylesheets/helmbench.css"):
        assert (docs / name).is_file(), name
    assert (installed["purelib"] / "helmbench" / "cli" / "init_template" / "_dot_github" / "workflows"
            / "helmbench.yml").is_file()
    # the built-in evaluators and rules come from the wheel's own entry points, as a third party's would
    plugins = json.loads(_run([str(installed["helmbench"]), "plugins", "--format", "json"], installed["tmp"],
                              installed["env"]).stdout)
    assert {p["name"]: p["source"] for p in plugins} == {"helmbench-evaluators": "built-in",
                                                         "helmbench-lint-rules": "built-in",
                                                         "crisis-resources": "built-in"}
    assert "crisis_resources" in {t for p in plugins for t in p["evaluators"]}


def test_installed_pipeline_in_a_folder_holding_only_a_benchmark(installed, tmp_path, fake_env):
    hb, env = str(installed["helmbench"]), installed["env"]
    _run([hb, "init", "bench"], tmp_path, env)
    bench = tmp_path / "bench"
    assert not (bench / "mkdocs.yml").exists() and not (bench / "site").exists()

    _run([hb, "lint", "--strict"], bench, env)
    _run([hb, "compile"], bench, env)
    run = _run([hb, "run"], bench, {**env, **fake_env})
    assert "Dry run" not in run.stdout
    report = json.loads(_run([hb, "report", "--format", "json"], bench, env).stdout)
    assert {r["model"] for r in report["rows"]} == {"openai/gpt-4.1-mini", "google/gemini-2.5-flash"}

    _run([hb, "publish"], bench, env)
    site = bench / "build" / "site"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="leaderboard"' in index and "openai/gpt-4.1-mini" in index
    cases = [json.loads(line)["id"] for line in (bench / "build" / "manifest.jsonl").read_text().splitlines()[1:]]
    assert all((site / "cases" / c / "index.html").is_file() for c in cases)
    assert (site / "authors-guide" / "index.html").is_file()
    assert (site / "javascripts" / "vendor" / "tablesort" / "tablesort.min.js").is_file()

    port = _free_port()
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen([hb, "serve", "--port", str(port)], cwd=bench, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_datasette(base, proc, tmp_path / "serve.log")
        rows = httpx.get(f"{base}/results.json", params={"sql": "select r.model, count(*) as n from results x join runs r "
                                                                "on r.id = x.run_id group by r.model order by r.model",
                                                         "_shape": "array"},
                         timeout=10).json()
        assert isinstance(rows, list), rows.get("error")
        assert rows == [{"model": "google/gemini-2.5-flash", "n": len(cases)},
                        {"model": "openai/gpt-4.1-mini", "n": len(cases)}]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
