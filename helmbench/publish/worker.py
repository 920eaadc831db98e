"""A helper process that draws the charts while the main process renders pages.

Why a plain subprocess (`python -m helmbench.publish.worker`) and not multiprocessing: spawn
and forkserver re-import the caller's `__main__` (a script calling `build_site` without a
main guard would build twice), and fork is unsafe in a process with threads (`mkdocs serve`).
Tasks and results travel over the worker's stdin/stdout as length-prefixed JSON (`codec.py`, the build
cache's encoding: data, never code); a reader thread resolves each task's `Future`.
"""

from __future__ import annotations

import queue
import struct
import subprocess
import sys
import threading
from concurrent.futures import Executor, Future

from .codec import DecodeError, decode, encode

_LENGTH = struct.Struct(">Q")


def send(stream, message) -> None:
    body = encode(message)
    stream.write(_LENGTH.pack(len(body)) + body)
    stream.flush()


def receive(stream):
    """The next message, or EOFError at the end of the stream (a cut message included)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(head)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError
    return decode(body)


class _Tasks(dict):
    """name → function, importing matplotlib (via charts) only where a chart is drawn."""

    def __missing__(self, name):
        from helmbench.publish import charts

        self.update(model=charts.run_model_job, leaderboard=charts.run_leaderboard_job, ready=charts.ready)
        if not dict.__contains__(self, name):  # an unknown task: say so, rather than asking again forever
            raise KeyError(f"no chart task {name!r}")
        return dict.__getitem__(self, name)


TASKS = _Tasks()


class WorkerError(RuntimeError):
    pass


class ChartWorker(Executor):
    """`submit(name, *args)` runs `TASKS[name](*args)` in the worker process."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "helmbench.publish.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.futures: dict[int, Future] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.exited = False  # set by the reader, under the lock, once the worker's output ends
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.reader = threading.Thread(target=self._read, name="helmbench-chart-results", daemon=True)
        self.writer = threading.Thread(target=self._write, name="helmbench-chart-tasks", daemon=True)
        self.reader.start()
        self.writer.start()

    def submit(self, name, /, *args, **kwargs) -> Future:  # type: ignore[override]
        """Queue a task; never blocks (a writer thread feeds the worker as fast as it reads)."""
        future: Future = Future()
        with self.lock:
            if self.exited:  # nothing would ever answer: fail now rather than hang a waiter
                future.set_exception(WorkerError("the chart worker exited before finishing"))
                return future
            task_id, self.next_id = self.next_id, self.next_id + 1
            self.futures[task_id] = future
        self.outbox.put((task_id, name, args))
        return future

    def _write(self) -> None:
        while (task := self.outbox.get()) is not None:
            try:
                send(self.proc.stdin, task)
            except (BrokenPipeError, OSError, TypeError, ValueError):
                break  # the reader fails whatever is pending
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def _read(self) -> None:
        try:
            while True:
                task_id, ok, value = receive(self.proc.stdout)
                with self.lock:
                    future = self.futures.pop(task_id)
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(WorkerError(value))
        except (EOFError, OSError, DecodeError, ValueError):
            pass
        with self.lock:  # the worker exited: nothing more will come
            pending, self.futures = self.futures, {}
            self.exited = True
        for future in pending.values():
            future.set_exception(WorkerError("the chart worker exited before finishing"))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.outbox.put(None)  # the writer closes the worker's stdin after the queued tasks
        if wait:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.reader.join(timeout=10)
            if not self.reader.is_alive():  # the reader is done with it: close our end of the pipe
                self.proc.stdout.close()


def main() -> None:
    tasks_in = sys.stdin.buffer
    results_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by a library must not corrupt the result stream
    while True:
        try:
            task_id, name, args = receive(tasks_in)
        except (EOFError, DecodeError, ValueError):
            return
        try:
            result = (task_id, True, TASKS[name](*args))
        except Exception as exc:  # noqa: BLE001 - reported to the waiting future
            result = (task_id, False, f"{type(exc).__name__}: {exc}")
        try:
            send(results_out, result)
        except (TypeError, ValueError) as exc:
            send(results_out, (task_id, False, f"{type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    main()
