"""The suite's shared fixtures: the isolated environment, the one fake OpenRouter of the session, and
the environment that points helmbench at it.

Why here: every folder used to start its own fake and set its own variables (and put the repository
on sys.path; `pythonpath = ["."]` in pyproject.toml does that once now). A folder's conftest keeps only
what is its own: a separately configured fake where its tests need one (the publishing pipeline's XSS
fake, the conversation tests' simulated user), and its own pipelines.

The suite runs under pytest-xdist (`make test` is `pytest -n auto`): everything here is per worker
process (a session fixture is built once per worker), ports come from the OS and files go under
pytest's per-worker temporary folders, never into the repository.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# pytest rewrites the asserts of every test module it imports (~300 of them: ~5 s of CPU in each xdist worker) and
# keeps the result only where bytecode may be written; this image sets PYTHONDONTWRITEBYTECODE. Where bytecode goes
# to a prefix outside the checkout (the Makefile's PYTHONPYCACHEPREFIX, .venv/pycache), this process may keep it
# there: a worker then collects in ~2 s instead of ~7. The environment the suite's subprocesses get is unchanged.
if sys.pycache_prefix:
    sys.dont_write_bytecode = False

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings

from tests.fakes.openrouter import FakeOpenRouter
from tests import shared
from tests.shared import build_once

REPO = Path(__file__).resolve().parents[1]
SENTINEL_KEY = "sk-or-v1-SENTINEL-0f9e8d7c6b5a4f3e2d1c"
#: Backoff in hundredths of a second, so a test that retries waits for nothing.
FAST_RETRIES = {"HELMBENCH_RETRY_BASE_DELAY": "0.01", "HELMBENCH_RETRY_MAX_DELAY": "0.05", "HELMBENCH_MAX_ATTEMPTS": "12"}


# Property tests check what holds, not how fast: Hypothesis's timing checks (a 200 ms deadline per example,
# the "input generation is slow" health check) fail on a shared 2-core machine under load while the property
# holds. Every other health check stays on, and so does the number of examples.
settings.register_profile("helmbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("helmbench")


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: `-p no:xdist` runs without the hook
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores when the `slow` tests run (`make test`), the cores when `-m`
    leaves them out (`make test-fast`). Why: a run's tests spend ~100 s of a core waiting, not working (a fake's
    latency that keeps calls in flight for a kill -9 or a Ctrl-C, two runs racing for one lock, a server
    starting; measured with benchmarks/suite_time.py and /proc/stat beside benchmarks/suite_profile.py), and with
    one worker per core those seconds leave a core idle. A third worker fills them. The tests that wait are all
    `slow`: without them a third worker fills nothing and only adds its start-up and the cores' contention
    (2026-12-03, test-fast, two pairs: 161-166 s of CPU with two workers against 182-190 s with three, wall
    95-102 s both). PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set (xdist's own setting)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1 if selects_slow_tests(config.getoption("markexpr", "") or "") else cores


def selects_slow_tests(markexpr: str) -> bool:
    """Whether `-m markexpr` keeps a test marked `slow` (and nothing else): what the extra worker is for."""
    if not markexpr:
        return True
    from _pytest.mark.expression import Expression

    return bool(Expression.compile(markexpr).evaluate(lambda name, **_: name == "slow"))


def pytest_configure(config):
    """Isolate the suite from the shell that started it: a developer's real OpenRouter key or base URL,
    or a HELMBENCH_* setting, must never reach a test (tests never reach the internet or need a key);
    the one HELMBENCH_* setting the suite sets itself is HELMBENCH_INLINE_CHARTS (below).
    Runs in the controller before xdist starts its workers, so they inherit the clean environment."""
    for name in list(os.environ):
        if name.startswith(("OPENROUTER_", "HELMBENCH_")):
            del os.environ[name]
    # Charts drawn in the building process (helmbench.publish.site._executor), in every test and in every
    # `helmbench publish` a test starts: a chart worker is a fresh interpreter importing matplotlib (~0.9 s of
    # CPU each, 25 of them a suite run), and the worker is not what those tests check. Its own tests
    # (tests/publish/test_publish_worker.py, the "worker dies" build) unset this, and one of them proves the
    # worker's charts byte-identical to these.
    os.environ["HELMBENCH_INLINE_CHARTS"] = "1"
    config.pluginmanager.register(_BuildAhead(), "helmbench-build-ahead")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    """Fail the session when a test wrote into a shared artifact (tests.shared.touched: why). In the process that
    ran the session: the xdist controller, after every worker has ended (a worker's own check would race the
    others' tests), or pytest itself without xdist."""
    if hasattr(session.config, "workerinput"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or factory._basetemp is None:
        return  # no test asked for a temporary folder: nothing was built
    changed = shared.touched(factory.getbasetemp())
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["a test wrote into a shared artifact (write to a copy: tests/shared.py):", *changed[:20]]
        if reporter is not None:
            reporter.write_sep("=", "shared artifacts changed", red=True)
            reporter.write_line("\n".join(lines))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def fake_server():
    """The session's fake OpenRouter (one per xdist worker); its answers are chosen by model id.
    Tests use it through `fake`, which restores its defaults first."""
    server = FakeOpenRouter().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server):
    """The session's fake, restored to a fresh server's behaviour and counters for this test."""
    return fake_server.restore()


@pytest.fixture
def env(fake, monkeypatch):
    """OPENROUTER_* pointing at the fake, tiny backoff delays; returns a dict for subprocesses (with the
    repository on PYTHONPATH, so they can import `tests.fakes`)."""
    values = {"OPENROUTER_API_BASE": fake.api_base, "OPENROUTER_API_KEY": SENTINEL_KEY, **FAST_RETRIES}
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    full = dict(os.environ)
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    return full


@pytest.fixture(autouse=True)
def _forked_children_end_with_their_test():
    """A `helmbench` child forked by a test (tests/forked.py) and still running when the test ends (it failed
    before killing it) is killed: left running, it would go on asking this worker's fake server, and the
    next test would count its calls."""
    from tests import forked

    before = forked.live()
    yield
    forked.kill_all(keep=before)


@pytest.fixture(autouse=True)
def _logging_handlers_end_with_their_test():
    """The logging handlers a test added (a command run through CliRunner directly, mkdocs' log shown) are
    dropped when it ends: each holds a stream lent for that test, and a later test's log line written to it
    prints "--- Logging error ---" with a traceback into that test's output (tests.inprocess.logging_restored)."""
    from tests.inprocess import logging_restored

    with logging_restored():
        yield


@pytest.fixture(scope="session")
def stats_floored(tmp_path_factory):
    """The shipped benchmark with its safety floors, run on good/twin/partial models (tests.score.stats_pipeline);
    read-only (the report and score tests read it)."""
    from tests.score.stats_pipeline import build

    return build_once(tmp_path_factory, "stats-floored", build)


@pytest.fixture(scope="session")
def stats_plain(stats_floored, tmp_path_factory):
    """The same runs on the shipped benchmark without floors: the tie groups of the weighted scores. Derived from
    `stats_floored`'s database, not run again (tests.score.stats_pipeline.without_floors: why). Read by the
    report tests; the publishing tests build their statistics site from it (into its root's site/)."""
    from tests.score.stats_pipeline import without_floors

    return build_once(tmp_path_factory, "stats-plain", lambda root: without_floors(stats_floored, root))


@pytest.fixture(scope="session")
def playwright_thread():
    """This worker's Playwright and its one headless Chromium, in a thread of their own
    (tests/publish/browser_helpers.py: why); closed with the session."""
    from tests.publish.browser_helpers import PlaywrightThread

    thread = PlaywrightThread()
    yield thread
    thread.close()


@pytest.fixture
def browser(playwright_thread):
    """The worker's Chromium (launched by the first test that asks; again if it went away). A test that asks
    for it runs in the Playwright thread (pytest_pyfunc_call below); a fixture that drives it goes through
    `playwright_thread.run`."""
    return playwright_thread.browser()


@pytest.fixture
def shared_page(browser, playwright_thread):
    """`with shared_page(base_url, color_scheme=..., viewport=...) as page:` the worker's page of that colour
    scheme (one context per scheme, kept for the session), recording like browser_helpers.recording_page: for
    read-only checks of a static site, where a fresh context's cost buys no isolation a test needs."""
    return playwright_thread.page


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A test that drives the browser runs in the Playwright thread (the thread that may call Playwright's
    objects); every other test as pytest runs it."""
    if "playwright_thread" not in pyfuncitem.fixturenames:
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    result = pyfuncitem.funcargs["playwright_thread"].run(pyfuncitem.obj, **args)
    assert result is None, f"{pyfuncitem.nodeid} returned {result!r}"
    return True


BROWSER_GROUP = "browser"


def drives_browser(item) -> bool:
    """The test asks for Chromium (the `browser` fixture, itself or through another fixture)."""
    return "browser" in getattr(item, "fixturenames", ())


def xdist_group_of(item, browser_modules: frozenset[str] = frozenset()) -> str | None:
    """The worker group of a test (`make test` runs `--dist loadgroup`): tests in one group run on one worker.

    Session artifacts that take seconds (a pipeline run against the fake, a mkdocs build, a pip install) are
    built once per session whichever worker asks (tests.shared.build_once), so they need no group: the tests
    using them spread over the workers. A module-scoped fixture is still one per worker that runs the module's
    tests, so a module whose tests share one (a wheel installed into a venv, a compiled benchmark) is one
    group. Every test that drives Chromium is one group, "browser": the browser is one per worker that asks
    (`playwright_thread`, session-scoped), and each costs CPU of its own beyond what its pages cost (a launch,
    Playwright's driver, its caches warmed again, a shared page per colour scheme): one Chromium for the session,
    not one per worker. A module holding browser tests (`browser_modules`: their files) whose other tests share a
    module-scoped fixture with them is in that group too, so the fixture is still set up once."""
    if drives_browser(item):
        return BROWSER_GROUP
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    module_scoped = {name for name, defs in info.name2fixturedefs.items() if defs and defs[-1].scope == "module"}
    if not module_scoped:
        return None
    module = item.nodeid.split("::", 1)[0]
    return BROWSER_GROUP if module in browser_modules else module


#: Session artifacts that take tens of seconds of CPU to build (pipelines of the shipped benchmark against the fake,
#: their mkdocs sites, a plugin installed with pip): a test that asks for one is `slow`, so `make test-fast` builds
#: none of them (measured with benchmarks/suite_profile.py: together they were most of the inner loop's CPU).
SLOW_FIXTURES = frozenset({
    ("tests", "stats_floored"), ("tests", "stats_plain"),
    *(("tests/publish", name) for name in ("pipeline", "stats_site", "stats_url", "hostile_pipeline", "hostile_site",
                                           "hostile_url", "site", "site_url", "empty_site", "empty_url")),
    ("tests/plugins", "regex_site"), ("tests/plugins", "plugin_env"),
})


def _asks_for_a_slow_artifact(item) -> bool:
    """Whether `item` asks (directly or through another fixture) for one of SLOW_FIXTURES, each known by its full
    key: the folder whose conftest defines it and its name. By name alone, tests/cli's `pipeline` (a 9-case run,
    cheap) would be taken for tests/publish's (the shipped benchmark on three models, ~9 s of CPU)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and (defs[-1].baseid, name) in SLOW_FIXTURES for name, defs in info.name2fixturedefs.items())


#: The artifacts of SLOW_FIXTURES that this session's tests ask for, in the order first asked; the full keys of the
#: session fixtures each of them asks for (its closure's next step); which ones this worker has set up; the
#: session fixtures being set up now (innermost last) and the test they are set up for. For `_build_ahead`.
_NEEDED: list[tuple[str, str]] = []
_ASKS: dict[tuple[str, str], set[tuple[str, str]]] = {}
_SET_UP: set[tuple[str, str]] = set()
_SETTING_UP: list[tuple[pytest.FixtureRequest, tuple[str, str]]] = []
_AHEAD = {"item": None, "building": False}


def pytest_collection_finish(session):
    """What `_build_ahead` may build: the slow artifacts the tests left after deselection ask for."""
    _NEEDED.clear()
    for item in session.items:
        info = getattr(item, "_fixtureinfo", None)
        defs_of = info.name2fixturedefs if info is not None else {}
        for name, defs in defs_of.items():
            if not defs:
                continue
            key = (defs[-1].baseid, name)
            _ASKS.setdefault(key, set()).update((defs_of[arg][-1].baseid, arg) for arg in defs[-1].argnames
                                                if defs_of.get(arg))
            if key in SLOW_FIXTURES and key not in _NEEDED:
                _NEEDED.append(key)


def _artifacts_of(key: tuple[str, str]) -> set[tuple[str, str]]:
    """The slow artifacts `key` is or asks for, directly or through other fixtures (the locks its build holds)."""
    seen, todo = set(), [key]
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(_ASKS.get(k, ()))
    return seen & SLOW_FIXTURES


def _build_ahead() -> bool:
    """Called by tests.shared.build_once while another worker holds the lock of the artifact being set up: set up
    one slow artifact the session needs that this worker has not, that the current test's folder can see (a
    conftest's fixture is visible below its folder), and that shares nothing with the one being waited for (the
    other worker holds that one's locks). Returns whether it set one up. Never nested: a build ahead that has to
    wait just waits. Its failure is pytest's to report, to the tests that ask for it (the fixture's error is
    cached), never to the test whose wait it filled."""
    item = _AHEAD["item"]
    if _AHEAD["building"] or not _SETTING_UP or item is None:
        return False
    request, waiting = _SETTING_UP[-1]
    key = shared.ahead_candidate(_NEEDED, _SET_UP, item.nodeid.split("::", 1)[0], _artifacts_of(waiting), _artifacts_of)
    if key is None:
        return False
    _AHEAD["building"] = True
    try:
        request.getfixturevalue(key[1])
    except (Exception, pytest.skip.Exception, pytest.fail.Exception):
        pass
    finally:
        _AHEAD["building"] = False
        _SET_UP.add(key)
    return True


class _BuildAhead:
    """The hooks `_build_ahead` needs, as a plugin registered for the whole session (pytest_configure): a
    conftest's own hooks see only the nodes under its folder, and a session fixture is set up for the session."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        _AHEAD["item"] = item
        try:
            return (yield)
        finally:
            _AHEAD["item"] = None

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        """Each session fixture's set-up is where tests.shared.build_once may wait for another worker: give it
        `_build_ahead` for the time, and note the fixture as set up in this worker."""
        if fixturedef.scope != "session":
            return (yield)
        key = (fixturedef.baseid, fixturedef.argname)
        _SETTING_UP.append((request, key))
        shared.while_waiting = _build_ahead
        try:
            return (yield)
        finally:
            _SETTING_UP.pop()
            _SET_UP.add(key)
            if not _SETTING_UP:
                shared.while_waiting = None


def ungrouped(items) -> list[str]:
    """The tests marked with an xdist group whose node id does not carry it: pytest-xdist's loadgroup tells the
    scheduler a test's group only through a suffix it adds to the node id (`…::test@group`), and a pytest whose node
    ids take no such change (9.2: pytest-xdist#1386) loses every group without a word, so each worker builds its own
    copy of what a group shares (a module-scoped venv, the browser). tests/test_workers.py checks the session's."""
    out = []
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names and not item.nodeid.endswith("@" + "_".join(names)):
            out.append(item.nodeid)
    return out


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Groups for xdist, the `browser` mark on every test that drives Chromium (`-m "not browser"`), the `slow`
    mark on every test that asks for an expensive session artifact (SLOW_FIXTURES), and the `slow` tests first (a
    stable sort): xdist hands out ungrouped tests in collection order, and a long test handed out last keeps one
    worker busy while the other has nothing left to do."""
    browser_modules = frozenset(item.nodeid.split("::", 1)[0] for item in items if drives_browser(item))
    for item in items:
        if drives_browser(item):
            item.add_marker(pytest.mark.browser)
        if _asks_for_a_slow_artifact(item):
            item.add_marker(pytest.mark.slow)
        group = xdist_group_of(item, browser_modules)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
