"""`helmbench ARGS` as a real OS process forked from the test worker: a `subprocess.Popen` without the exec.

Why: a test whose point is a separate process (kill -9 mid-run, Ctrl-C, two runs at once on one database)
needs a real one, with its own pid, its own signals, its own file descriptors and locks, that the kernel can
kill while it writes. It does not need a fresh interpreter: `python -m helmbench` pays ~4.5 s of CPU importing
litellm (and more for helmbench and its dependencies) before it runs a line of the command, and the worker has
all of that imported already. `start()` forks the worker and runs the command line in the child, the same
`helmbench/__main__.py` `python -m helmbench` runs (through `runpy`, so `sys.argv[0]` and the program name in
usage messages are the same), and the handle is a real `subprocess.Popen` (its POSIX `_execute_child` forks
instead of exec-ing): pid, poll(), wait(timeout=), send_signal(), kill(), terminate(), communicate(timeout=),
text pipes, returncode -N for a death by signal N, `cwd=`, `env=` (a whole environment) and
`start_new_session=`, all as subprocess does them.

The child: everything a fresh interpreter would not have is dropped before the command runs.
- Threads: only the forking thread exists in the child (the fake servers' threads stay in the parent, which
  is what the tests want: the servers count the child's requests). A lock another thread held at the fork
  stays held in the child: logging re-creates its locks (its own at-fork handler), and the child writes
  through new std streams, never through the parent's (whose buffer locks another thread may hold).
  litellm is imported to the end in the parent before the fork, for a command that calls a model (once per
  worker, not 4.5 s per child) and whenever helmbench's background import thread has started (a half-done
  import would leave its module lock held in the child for ever). litellm's cached HTTP clients
  (`in_memory_llm_clients_cache`, `module_level_[a]client`: connection pools over sockets the parent shares,
  keyed by an event loop's id, which a new loop may reuse) are forgotten; its logging thread pool starts no
  thread in the child unless used, and helmbench does not use it. asyncio's policy (and any loop set for
  this thread) is replaced by a fresh one; the wakeup fd, if any, is unset.
- Signals: dispositions as exec and a fresh interpreter leave them: a signal ignored in the parent stays
  ignored, every Python handler becomes SIG_DFL (pytest-timeout's SIGALRM, say), SIGPIPE and SIGXFSZ are
  ignored (Python's start-up) and SIGINT raises KeyboardInterrupt (`signal.default_int_handler`). The
  signal mask is inherited, as through exec. A death by an uncaught KeyboardInterrupt re-raises SIGINT, as
  Python does (returncode -2).
- File descriptors: the pipes are dup2'd onto 0, 1, 2 and `sys.stdin/stdout/stderr` (and `sys.__std*__`)
  are new text streams over them with Python's start-up settings (PYTHONIOENCODING, PYTHONUNBUFFERED; stderr
  line-buffered, backslashreplace); pytest's capture objects are never used. Every other inherited pipe and
  socket (the fake servers' listening sockets, xdist's channel to its controller, the pipes of other forked
  children, so a second child cannot hold the first one's stdin open) is pointed at /dev/null instead of
  closed: Python objects of the parent still hold those numbers, and a closed number reused by a file the
  child opens could be closed under it by a stale object. The cyclic garbage collector is frozen for the
  objects inherited (`gc.freeze()`), so no parent object's finaliser runs in the child (a
  `TemporaryDirectory` of the parent removed by the child's collector, say); the child's own objects are
  collected as usual.
- State: cwd, `os.environ` (replaced whole), `sys.argv`, `sys.path` (the child's cwd first and its
  PYTHONPATH, as `python -m` makes it; the parent's entries after), importlib's directory caches
  invalidated (a plugin installed since the parent last looked is found), warning filters those of a fresh
  interpreter plus the child's PYTHONWARNINGS, `sys.excepthook`/`threading.excepthook`/
  `sys.unraisablehook` Python's own (pytest's record into pytest), faulthandler off unless
  PYTHONFAULTHANDLER, every logger's handlers dropped except litellm's import-time one (it writes to the
  current `sys.stderr`, as in a fresh process; pytest's capture handlers and any a command left behind are
  dropped), `logging.disable` off, atexit handlers cleared (the parent's are pytest's, coverage's, the
  parent's temporary folders') and Python's exit run in the child: non-daemon threads joined, the child's
  own atexit handlers run, the streams flushed, then `os._exit` (never a return into pytest).
- helmbench's module-level caches, none of which may carry an earlier in-process test into the child:
  every `functools.lru_cache` of a loaded `helmbench.*` module is cleared (among them
  `publish.cache.signing_key`, whose key file depends on XDG_CACHE_HOME/HOME, `code_digest`,
  `_package_digest`, `spec.models._with_models`/`_criterion_with` (plugin evaluation types), `lint.where._parse`,
  `lint.jsonpos._offsets`, `crisis.services._parsed`/`phone_key`/`digit_forms`, `spec.markdown._md`/
  `_structure`, `publish.render.environment`/`_authored_markdown`, `publish.codec._dataclass`,
  `publish.charts._mpl`, `publish.reader._case_order`, `run.evaluate.parse._validator`,
  `run.neutralise._tag_pattern`); `plugins.registry` is reset (plugins are discovered again under the
  child's environment); `run.provider._litellm`/`_preloading` are unset, so the child's first call runs
  `load_litellm()` again (its settings, logger levels and warning filter; the import itself is a
  `sys.modules` hit); `store.db._copies` (read-only copies to remove at exit) starts empty, so the child
  removes its own copies at exit and never the parent's; `store.ledger._random` (seeded from the OS at
  import, it draws every call's and invocation's uid) is reseeded from the OS: Python reseeds only
  `random`'s own generator at a fork, and a child and its parent's next in-process run drew the same uids
  (a kill -9 test counted the re-run's calls as the killed child's); any other module-level
  `random.Random` in helmbench stops the child until it is listed in `_RESEEDED`.
- SQLite: the child never touches a connection of the parent (helmbench keeps none at module level; the
  tests' helpers open and close theirs). SQLite's per-file lock bookkeeping is process memory, so a child
  must not be forked while the parent holds a connection *open on the file the child will use* in the
  middle of a transaction; no test does.
- Coverage: under pytest-cov (`[tool.coverage.run] patch = ["subprocess"]`, parallel data files) the
  parent's tracer is stopped in the child and a new `Coverage` started with the parent's configuration
  (coverage's own after-fork routine, `patch = fork`'s), saved at the child's exit to a data file with its
  own suffix (machine, pid, random), which pytest-cov combines with the others. A child killed with
  SIGKILL saves nothing, as a fresh interpreter killed so would.

What differs from exec (nothing a test relies on): the modules are the parent's, imported under the parent's
environment (the tests change only OPENROUTER_*/HELMBENCH_* variables, which helmbench reads when a command
runs, never at import); the interpreter's start-up flags are the worker's (no -X/-W options either way);
modules a plugin test loaded in the parent stay in `sys.modules`; warning filters a library added while
being imported are not restored (pytest's catch_warnings already dropped them in the parent; only a
warning they would hide could print); `/proc/<pid>/cmdline` shows the worker's command line. Regular files
stay open in the child, as a fresh process would not have them: a `flock` the parent held (the run lock,
store/lock.py) would be shared by the child; no test forks while holding one. The entry point's own
start-up (a fresh interpreter's signal set-up, imports, `__main__`) is what two tests still check with
`python -m helmbench`: the kill -9 and the Ctrl-C test of tests/run/test_run_cli.py; the import checks
(tests/test_lazy.py, "never imports litellm") and the packaged entry point (tests/packaged) need a fresh
interpreter too, and tests/plugins starts one per command (a plugin's new version must be imported anew).

A child still running when its test ends (the test failed first) is killed by an autouse fixture
(tests/conftest.py), so it cannot go on asking the worker's shared fake server during the next test.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT

#: Module-level `random.Random`s of helmbench seeded from the OS at import: reseeded so in the child (Python
#: reseeds only `random`'s own instance at a fork). The ledger's names every call and invocation (`new_uid`):
#: unreseeded, a child and its parent's next in-process run gave the same uids, and the re-run's calls were
#: counted as the killed child's.
_RESEEDED = {"helmbench.store.ledger._random"}

#: A fresh CPython 3.11 (non-debug, no -W/-X options) installs these warning filters, last one lowest.
_FRESH_FILTERS = (("default", None, DeprecationWarning, "__main__", 0),
                  ("ignore", None, DeprecationWarning, None, 0),
                  ("ignore", None, PendingDeprecationWarning, None, 0),
                  ("ignore", None, ImportWarning, None, 0),
                  ("ignore", None, ResourceWarning, None, 0))


def start(*args, cwd: Path | str | None = None, env: dict | None = None, stdin=None, stdout=PIPE, stderr=PIPE,
          text: bool = True, start_new_session: bool = False) -> Forked:
    """`helmbench ARGS` in a forked child, in `cwd` with `env` (a whole environment, as for subprocess: a
    variable it leaves out is unset); pipes by default (text), like `Popen(..., stdout=PIPE, stderr=PIPE,
    text=True)`."""
    return Forked([str(a) for a in args], cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                  start_new_session=start_new_session)


def run(*args, cwd: Path | str | None = None, env: dict | None = None, input: str | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """`helmbench ARGS` in a forked child, waited for: a CompletedProcess, as `subprocess.run(...,
    capture_output=True, text=True)` gives."""
    with start(*args, cwd=cwd, env=env, stdin=PIPE if input is not None else DEVNULL) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:
            proc.kill()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


_STARTED: set[Forked] = set()  # held until seen to end (a test that drops its handle still has it killed)


def live() -> set[Forked]:
    """The children started by this process that have not been seen to end."""
    _STARTED.difference_update([p for p in _STARTED if p.poll() is not None])
    return set(_STARTED)


def kill_all(keep: set[Forked] = frozenset()) -> list[Forked]:
    """Kill (SIGKILL) and reap every live child but `keep`: a test that fails while its child runs must not
    leave it asking the worker's shared fake server for another test's calls. Returns those it killed."""
    killed = [p for p in live() - set(keep)]
    for proc in killed:
        proc.kill()
        proc.wait()
    return killed


class Forked(subprocess.Popen):
    """A Popen whose child is this process forked, running the helmbench command line `argv` (or `target()`,
    whose return value is the exit code: tests/test_forked.py compares the child with a fresh interpreter)."""

    def __init__(self, argv: list[str], *, env: dict | None, target=None, **kw):
        self._argv, self._target = argv, target
        self._env = {str(k): str(v) for k, v in (os.environ if env is None else env).items()}
        super().__init__(["helmbench", *argv], env=self._env, **kw)

    def _execute_child(self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env, startupinfo,
                       creationflags, shell, p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite,
                       restore_signals, gid, gids, uid, umask, start_new_session, process_group=-1):
        if cwd is not None and not os.path.isdir(cwd):  # subprocess raises this in the parent too
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(cwd))
        _ready_to_fork(self._argv if self._target is None else None)
        pid = os.fork()
        if pid == 0:  # the child: never returns
            _child(self._target or self._argv, self._env, cwd, (p2cread, c2pwrite, errwrite),
                   {p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite} - {-1}, start_new_session, process_group)
        self.pid = pid
        self._child_created = True
        _STARTED.add(self)
        self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)


#: The commands that call a model (they import litellm, 4.5 s of CPU): litellm is imported in the parent once,
#: not in each child. Other commands' children import it only if they need it.
_CALLING = {"run", "run-batch", "run-all", "run-single", "generate", "import"}


def _ready_to_fork(argv) -> None:
    """In the parent: nothing half-done that the child would inherit stuck. A litellm import under way in
    helmbench's background thread is finished (the import lock waits for it): the child would find its
    module lock held for ever."""
    from helmbench.run import provider

    import helmbench.cli  # noqa: F401 - the command line, imported once per worker, not once per child

    if provider._preloading or (isinstance(argv, list) and argv[:1] and argv[0] in _CALLING):
        provider.load_litellm()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # what the parent printed is written once, by the parent
        except Exception:  # noqa: BLE001 - a closed capture stream: nothing to flush
            pass


def _child(argv, env, cwd, fds, pipe_fds, new_session, process_group) -> None:
    """Become a fresh `python -m helmbench ARGV` process as far as a test can tell, run it, exit."""
    code = 1
    try:
        import gc

        gc.freeze()  # the parent's objects are never finalised here
        _fresh_signals()
        _std_fds(fds, pipe_fds)
        if new_session:
            os.setsid()
        elif process_group is not None and process_group >= 0:
            os.setpgid(0, process_group)
        if cwd is not None:
            os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        _fresh_streams(env)
        _fresh_state(env)
        _restart_coverage()
    except BaseException:  # noqa: BLE001 - set-up failed: say why on fd 2 and exit 1
        import traceback

        os.write(2, ("helmbench (forked test child): set-up failed\n" + traceback.format_exc()).encode())
        os._exit(1)
    try:
        code = _main(argv) if isinstance(argv, list) else _call(argv)
        code = _finalize(code)
    finally:
        os._exit(code)


def _fresh_signals() -> None:
    import signal

    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            current = signal.getsignal(sig)
        except (OSError, ValueError):
            continue
        if current is signal.SIG_IGN and sig not in (signal.SIGPIPE, signal.SIGXFSZ):
            continue  # ignored: exec keeps it ignored (subprocess resets only SIGPIPE and SIGXFSZ)
        fresh = signal.SIG_DFL
        if sig in (signal.SIGPIPE, signal.SIGXFSZ):
            fresh = signal.SIG_IGN  # Python's start-up
        elif sig == signal.SIGINT:
            fresh = signal.default_int_handler
        if current is not fresh:
            try:
                signal.signal(sig, fresh)
            except (OSError, ValueError, RuntimeError):
                pass
    try:
        signal.set_wakeup_fd(-1)
    except (ValueError, OSError):
        pass


def _std_fds(fds: tuple[int, int, int], pipe_fds: set[int]) -> None:
    """The child's ends of the pipes onto 0, 1, 2 (-1: inherited, as subprocess leaves it); every other
    inherited pipe or socket pointed at /dev/null (see the module's docstring)."""
    import fcntl
    import stat

    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 3) if fd != -1 else -1 for fd in fds]  # never clobbered by a dup2
    for target, fd in enumerate(high):
        if fd != -1:
            os.dup2(fd, target)
    for fd in {*high, *pipe_fds} - {-1, 0, 1, 2}:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2 or fd == null:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue  # the listing's own descriptor
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            os.dup2(null, fd, inheritable=False)
    os.close(null)


def _stream(fd: int, write: bool, encoding: str, errors: str, unbuffered: bool) -> IO[str] | None:
    """A standard stream as CPython's start-up makes it (pylifecycle.c, create_stdio)."""
    import io

    try:
        os.fstat(fd)
    except OSError:
        return None  # a closed standard descriptor: Python sets the stream to None
    raw = io.FileIO(fd, "w" if write else "r", closefd=False)
    if write and unbuffered:
        buffered = raw  # PYTHONUNBUFFERED: written straight through to the descriptor
    else:
        buffered = (io.BufferedWriter if write else io.BufferedReader)(raw)
    return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline="\n",
                            line_buffering=not unbuffered and (raw.isatty() or fd == 2), write_through=unbuffered)


def _fresh_streams(env: dict) -> None:
    """New text streams over 0, 1, 2 with Python's start-up settings."""
    spec = env.get("PYTHONIOENCODING", "")
    encoding, _, errors = spec.partition(":")
    original = sys.__stdout__
    encoding = encoding or getattr(original, "encoding", None) or "utf-8"
    errors = errors or getattr(original, "errors", None) or "strict"
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = _stream(0, False, encoding, errors, unbuffered)
    sys.stdout = sys.__stdout__ = _stream(1, True, encoding, errors, unbuffered)
    sys.stderr = sys.__stderr__ = _stream(2, True, encoding, "backslashreplace", unbuffered)


def _fresh_state(env: dict) -> None:
    import asyncio
    import atexit
    import faulthandler
    import functools
    import importlib
    import logging
    import random
    import threading
    import warnings

    atexit._clear()
    atexit.register(logging.shutdown)  # a fresh interpreter's, registered when logging is imported
    # paths: what `python -m` puts first (the current folder, then PYTHONPATH)
    first = [os.getcwd(), *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    sys.path[:] = [*first, *(p for p in sys.path if p not in first and p != "")]
    importlib.invalidate_caches()
    # warnings, hooks, faulthandler, tracemalloc: a fresh interpreter's
    warnings.filters[:] = [(a, m, c, mod, ln) for a, m, c, mod, ln in _FRESH_FILTERS]
    sys.warnoptions[:] = [o for o in env.get("PYTHONWARNINGS", "").split(",") if o]
    warnings._processoptions(sys.warnoptions)
    warnings._filters_mutated()
    sys.excepthook, sys.unraisablehook = sys.__excepthook__, sys.__unraisablehook__
    threading.excepthook = threading.__excepthook__
    faulthandler.disable()
    faulthandler.cancel_dump_traceback_later()
    if env.get("PYTHONFAULTHANDLER"):
        faulthandler.enable()
    import tracemalloc

    if tracemalloc.is_tracing() and not env.get("PYTHONTRACEMALLOC"):
        tracemalloc.stop()
    # logging: no handler of the parent's (pytest's capture, a command's left behind) but litellm's own
    logging.disable(logging.NOTSET)
    for lg in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        if isinstance(lg, logging.Logger):
            for handler in list(lg.handlers):
                if type(handler).__name__ != "LevelRoutingStreamHandler":  # litellm's, at import
                    lg.removeHandler(handler)
    # asyncio: no loop or policy of the parent's
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop_policy(None)
    # litellm's cached clients (connection pools over the parent's sockets)
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        for name in ("in_memory_llm_clients_cache", "module_level_aclient", "module_level_client"):
            litellm.__dict__.pop(name, None)
    rich = sys.modules.get("rich")
    if rich is not None:
        rich._console = None
    # helmbench's module-level state (listed in the module's docstring)
    for name, module in list(sys.modules.items()):
        if name == "helmbench" or name.startswith("helmbench."):
            for attr, value in list(vars(module).items()):
                if isinstance(value, functools._lru_cache_wrapper):
                    value.cache_clear()
                elif isinstance(value, random.Random) and not isinstance(value, random.SystemRandom):
                    if f"{name}.{attr}" not in _RESEEDED:  # a new one: is it seeded from the OS, or fixed?
                        raise RuntimeError(f"{name}.{attr} is a module-level random.Random the forked child does not "
                                           "know: add it to tests/forked.py's _RESEEDED if it is seeded from the OS")
                    value.seed(os.urandom(16))  # as a fresh import seeds it: never the parent's sequence
    from helmbench.plugins import registry
    from helmbench.run import provider
    from helmbench.store import db

    registry.reset()
    provider._litellm, provider._preloading = None, False
    db._copies.clear()
    atexit.register(db._remove_copies)


def _restart_coverage() -> None:
    """Under pytest-cov: stop the parent's tracer and start this process's own (saved at exit, by the atexit
    handler coverage registers: the parent's were cleared)."""
    try:
        import coverage
        from coverage.control import _after_fork_in_child
    except ImportError:
        return
    if coverage.Coverage.current() is not None:
        _after_fork_in_child()


def _main(argv: list[str]) -> int:
    """What `python -m helmbench ARGV` does with the exit: SystemExit's code, a traceback and 1 for an
    uncaught exception, a re-raised SIGINT for an uncaught KeyboardInterrupt."""
    import runpy
    import traceback

    sys.argv[:] = ["-m", *argv]  # runpy puts __main__.py's path first, as `python -m` does
    try:
        runpy.run_module("helmbench", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return -2
    except BaseException:  # noqa: BLE001 - what Python prints for an uncaught exception
        traceback.print_exc()
        return 1
    return 0


def _call(target) -> int:
    import traceback

    try:
        return _exit_code(target())
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return -2
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        return 1


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:  # noqa: BLE001
        pass
    return 1


def _finalize(code: int) -> int:
    """Python's exit in this child: threads joined, atexit handlers, streams flushed (a failed flush of
    stdout is code 120, as Python makes it); -2 is a death by SIGINT."""
    import atexit
    import signal
    import threading

    try:
        threading._shutdown()
    except BaseException:  # noqa: BLE001
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001
            if stream is sys.stdout and code == 0:
                code = 120
    if code == -2:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    return code
