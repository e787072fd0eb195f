"""The local executor: a run's episodes in this process and in worker processes spawned beside
it (``ghostei run``; ``--executor local``, the default).

:mod:`ghostei.runner` runs an episode and keeps the run's books (what is pending, the records,
the manifest); this module places the pending episodes: each runs here or in a worker, and its
record is appended to the run folder here, as it finishes. The Ray executor (:mod:`.ray`)
places the same episodes on a cluster.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.managers import BaseManager
from multiprocessing.pool import ThreadPool
from pathlib import Path
from typing import Any, TypeVar

from ..cases.schema import Case
from ..providers.ratelimit import Endpoint, endpoint, forget_cells, install_cells, shared_cell
from ..rundir import EpisodeRecord, RunDir
from ..runner import Job, RunConfig, pending, run_episode

J = TypeVar("J")
R = TypeVar("R")


def _worker(args: Job) -> EpisodeRecord:
    case, agent, config, out = args
    return run_episode(case, agent, config, Path(out))


def execute(
    run: RunDir,
    config: RunConfig,
    cases: list[Case],
    workers: int = 1,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    *,
    concurrency: int | None = None,
) -> list[EpisodeRecord]:
    """Run every pending episode of a run folder, recording each as it finishes.

    ``concurrency`` episodes are in flight at once (default: ``workers``), as threads spread
    over ``workers`` processes (this one and ``workers - 1`` spawned beside it): a run
    against a remote model waits on the model, not on the CPU, so a few processes keep many
    episodes going. Records are appended here, in this process, as each episode finishes, so
    an interruption loses at most the episodes in flight; episodes never depend on each
    other, so results are the same whatever the numbers. The Android backend runs one
    episode at a time (one device).
    """
    todo = pending(run, config, cases)
    return execute_jobs(run, config, todo, workers, on_record, concurrency=concurrency)


def execute_jobs(
    run: RunDir,
    config: RunConfig,
    todo: Sequence[tuple[Case, str]],
    workers: int = 1,
    on_record: Callable[[EpisodeRecord], None] | None = None,
    *,
    concurrency: int | None = None,
    prepare: Callable[[EpisodeRecord], EpisodeRecord] | None = None,
) -> list[EpisodeRecord]:
    """Run the (case, agent) episodes ``todo`` into a run folder, as :func:`execute` runs a
    run's pending ones; ``prepare`` completes each record before it is appended (a labelled
    set gives it its true label)."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    concurrency = workers if concurrency is None else concurrency
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    finished: list[EpisodeRecord] = []

    def record(r: EpisodeRecord) -> None:
        if prepare is not None:
            r = prepare(r)
        run.append(r)
        finished.append(r)
        if on_record is not None:
            on_record(r)

    if config.backend != "sim":
        concurrency = 1  # one Android device runs one episode at a time
    concurrency = min(concurrency, len(todo))
    jobs = [(c, a, config, str(run.path)) for c, a in todo]
    if concurrency <= 1:
        for job in jobs:
            record(_worker(job))
        return finished
    with _episode_runner(min(workers, concurrency), config) as run_one:
        for r in in_flight(run_one, jobs, concurrency):
            record(r)
    return finished


def in_flight(run_one: Callable[[J], R], jobs: Sequence[J], limit: int) -> Iterator[R]:
    """Each job's result as it finishes, ``limit`` jobs running at a time.

    At most ``limit`` jobs run at once; the others wait, unstarted. The threads are daemons
    (multiprocessing's ThreadPool): an interruption (^C) ends the run at once, losing at most
    the episodes in flight, instead of waiting for them as an executor's threads would.
    """
    if limit <= 1:
        for job in jobs:
            yield run_one(job)
        return
    with ThreadPool(limit) as threads:
        results = threads.imap_unordered(run_one, jobs)
        while True:
            # Never an untimed wait: the kernel hands SIGINT to any thread of the process,
            # and Python runs its handler only when the main thread next runs bytecode. A
            # main thread asleep on a lock until an episode ends (a program that never
            # exits) would never see the ^C.
            try:
                yield results.next(timeout=0.2)
            except multiprocessing.TimeoutError:
                continue
            except StopIteration:
                return


@contextlib.contextmanager
def _episode_runner(workers: int, config: RunConfig) -> Iterator[Callable[[Job], EpisodeRecord]]:
    """How a thread of execute() runs an episode: in this process, or in the process of the
    ``workers`` (this one among them) that the thread is bound to."""
    if workers <= 1:
        yield _worker
        return
    with _EpisodeWorkers(workers, config) as pool:
        yield pool.run


# ----- worker processes ------------------------------------------------------------------------
#
# The processes of a run are this one and workers spawned beside it. A worker is a process
# serving an _EpisodeRunner through multiprocessing's managers: its server runs each
# connection's calls in a thread of its own, so a worker runs as many episodes at once as
# threads of execute() call into it. Each thread of execute() stays with one process (round
# robin), which spreads the episodes in flight evenly over the processes.


class _EpisodeRunner:
    """Runs episodes in a worker process, one per calling connection at a time."""

    def run(self, job: Job) -> EpisodeRecord:
        return _worker(job)


class _WorkerManager(BaseManager):
    pass


_WorkerManager.register("EpisodeRunner", _EpisodeRunner, exposed=("run",))


def _start_worker(cells: dict[Endpoint, Any], lifeline: Connection) -> None:
    """A worker's initializer: share the parent's rate limits, and exit with the parent."""
    install_cells(cells)
    threading.Thread(target=_exit_with_parent, args=(lifeline,), daemon=True).start()


def _exit_with_parent(lifeline: Connection) -> None:
    # The parent never writes: recv() returns only when its end closes, which is when the
    # parent is gone (killed, perhaps) or done. The worker must not outlive it.
    with contextlib.suppress(EOFError, OSError):
        lifeline.recv()
    os._exit(0)


class _EpisodeWorkers:
    """The ``count`` processes that run a run's episodes: this one, already warm, and
    ``count - 1`` workers spawned beside it, all sharing the rate limit of the run's model
    endpoint (a 429 seen in one slows them all). Every thread starts on its episodes at
    once: one bound to a worker that is not up yet runs them here until it is."""

    def __init__(self, count: int, config: RunConfig) -> None:
        self.count = count
        self.config = config
        self._managers: list[_WorkerManager] = []
        self._runners: list[Future[Any]] = []
        self._cells: dict[Endpoint, Any] = {}
        self._local = threading.local()
        self._next = itertools.count()
        self._starter = ThreadPoolExecutor(max_workers=max(1, count - 1))

    def __enter__(self) -> _EpisodeWorkers:
        # Spawned, not forked: a forked simulator would share fonts, caches and locks.
        ctx = multiprocessing.get_context("spawn")
        if self.config.model is not None:
            self._cells = {endpoint(self.config.model): shared_cell(ctx)}
        install_cells(self._cells)  # this process is one of the run's processes
        self._lifeline_in, self._lifeline = ctx.Pipe(duplex=False)
        self._managers = [_WorkerManager(ctx=ctx) for _ in range(self.count - 1)]
        self._runners = [self._starter.submit(self._start, m) for m in self._managers]
        return self

    def _start(self, manager: _WorkerManager) -> Any:
        manager.start(_start_worker, (self._cells, self._lifeline_in))
        return manager.EpisodeRunner()  # type: ignore[attr-defined]

    def run(self, job: Job) -> EpisodeRecord:
        """Run ``job`` in the process of the calling thread."""
        index = getattr(self._local, "index", None)
        if index is None:
            index = self._local.index = next(self._next) % self.count
        starting = self._runners[index - 1] if index else None
        if starting is None or not starting.done():
            # This process, or a worker still starting (spawning it and importing costs a
            # second or two): meanwhile its threads run their episodes here, already warm.
            return _worker(job)
        runner = starting.result()  # a worker that failed to start fails the run here
        try:
            record: EpisodeRecord = runner.run(job)
        except (EOFError, ConnectionError) as exc:
            raise RuntimeError(f"worker process {index} of {self.count - 1} died") from exc
        return record

    def __exit__(self, *exc: object) -> None:
        self._starter.shutdown(wait=True)  # a worker still starting is stopped below
        # Episodes still running in a worker stop with it (its server ignores ^C).
        with ThreadPoolExecutor(max_workers=max(1, len(self._managers))) as stopper:
            for manager in self._managers:
                stopper.submit(_stop, manager)
        self._lifeline.close()
        self._lifeline_in.close()
        forget_cells(self._cells)


def _stop(manager: BaseManager) -> None:
    shutdown = getattr(manager, "shutdown", None)  # there once the worker is up
    process = getattr(manager, "_process", None)  # there once it was spawned
    if shutdown is not None:
        shutdown()
    elif process is not None and process.is_alive():
        process.terminate()
