"""Where trials run: in this process, in local worker processes, or on Dask.

Every executor is a generator ``iter_*(fn, tasks, ...)`` over ``tasks`` (a
list of ``(index, params)``) that yields ``(index, outcome)`` as trials
finish, in any order; ``outcome`` is what :func:`run_trial` returns. Workers
never touch the store: they return outcomes to the parent, which writes them.

BLAS threads
------------
``"processes"`` workers are started with the ``spawn`` method while
``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``,
``VECLIB_MAXIMUM_THREADS`` and ``NUMEXPR_NUM_THREADS`` are set to ``"1"`` in
the parent's environment (restored when the pool closes), so each worker
loads numpy's BLAS single-threaded: ``workers`` processes use ``workers``
cores, no oversubscription. If ``threadpoolctl`` happens to be installed the
worker initializer also calls ``threadpool_limits(1)`` (it is not a
dependency). The ``LocalCluster`` that ``"dask"`` starts when no scheduler is
given has single-threaded workers whose nannies set the same variables
(``env=``). Workers of an existing Dask cluster are configured by whoever
started them: ``OMP_NUM_THREADS=1 ... dask worker ADDRESS --nthreads 1``
(``docs/sweeps.md``).
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import time
import traceback

from hcizz.jsonout import to_json_value
from validation._threads import BLAS_ENV_VARS as _BLAS_ENV_VARS
from validation._docparams import fill_doc

__all__ = ["run_trial", "iter_inprocess", "iter_processes", "iter_dask",
           "EXECUTORS", "BLAS_ENV_VARS", "pinned_blas_env", "ProcessBackend",
           "open_dask", "dask_run"]

#: Names accepted by ``run_sweep(executor=...)``.
EXECUTORS = ("inprocess", "processes", "dask")

#: Thread-count variables pinned in worker processes (see :func:`pinned_blas_env`);
#: defined, numpy-free, in ``validation._threads``.
BLAS_ENV_VARS = _BLAS_ENV_VARS

_TRACEBACK_CHARS = 4000


@fill_doc
def run_trial(fn, params):
    """Run one trial; never raises for an ``Exception`` in ``fn``.

    Parameters
    ----------
    fn : callable
        Trial function ``fn(params) -> dict``.
    params : dict
        Its parameter record.

    Returns
    -------
    dict
        ``{"status": "ok", "result": dict, "seconds": float, "cpu_seconds":
        float}`` or ``{"status": "error", "error": {"type", "message",
        "traceback"}, "seconds": float, "cpu_seconds": float}``: wall and CPU
        time of the trial in the process that ran it (``cpu_seconds`` is not
        written to the store; :class:`validation.engine.WorkerPool` adds it up).
        A result that is not a dict of JSON values is an error (``TypeError``).

    See Also
    --------
    validation.engine.executors.iter_inprocess : Runs trials one after the other.

    %(ref_writing_a_trial)s
    """
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        result = fn(params)
        if not isinstance(result, dict):
            raise TypeError(f"trial function must return a dict, got {type(result).__name__}")
        # plain Python values; non-finite floats stay floats (the parent writes
        # the record under the JSON policy, docs/reliability.md#json)
        result = to_json_value(result, nonfinite="keep", where="result", strict_types=True,
                               type_error=TypeError)
    except Exception as exc:  # the trial failed: record it, the sweep goes on
        tb = traceback.format_exc()
        return {"status": "error", "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0, "error": error_info(exc, tb)}
    return {"status": "ok", "result": result, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0}


def error_info(exc, tb=None):
    """``{"type", "message", "traceback"}`` of an exception."""
    tb = "" if tb is None else tb
    if len(tb) > _TRACEBACK_CHARS:
        tb = "..." + tb[-_TRACEBACK_CHARS:]
    return {"type": type(exc).__name__, "message": str(exc), "traceback": tb}


def _infra_error(exc):
    """Outcome for a trial whose worker failed (died, was killed, ...)."""
    return {"status": "error", "seconds": math.nan,
            "error": error_info(exc, "".join(traceback.format_exception_only(type(exc), exc)))}


# --------------------------------------------------------------------- inprocess
@fill_doc
def iter_inprocess(fn, tasks):
    """Run the trials one after the other in this process.

    Parameters
    ----------
    %(fn)s %(tasks)s

    %(trial_yields)s

    See Also
    --------
    validation.engine.executors.iter_processes : The same on worker processes.
    validation.engine.executors.iter_dask : The same on Dask.

    %(ref_local_sweep)s
    """
    for idx, params in tasks:
        yield idx, run_trial(fn, params)


# --------------------------------------------------------------------- processes
@contextlib.contextmanager
def pinned_blas_env():
    """Set the BLAS thread variables to ``"1"`` in ``os.environ`` within the block.

    The previous values are restored afterwards; processes spawned meanwhile
    inherit them before they import numpy.

    Yields
    ------
    None
        Control returns to the ``with`` block.

    See Also
    --------
    validation.engine.executors.ProcessBackend : Starts its workers within this block.

    References
    ----------
    docs/sweeps.md#costs
    """
    old = {k: os.environ.get(k) for k in BLAS_ENV_VARS}
    os.environ.update({k: "1" for k in BLAS_ENV_VARS})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_LIMITER = None


def _watch_parent(parent_pid, poll=0.25):
    """Exit this worker as soon as the parent is gone (e.g. SIGKILLed), so no
    orphan keeps computing trials whose results nobody will store."""
    while True:
        time.sleep(poll)
        if os.getppid() != parent_pid:
            os._exit(1)


def _init_worker(parent_pid):
    global _LIMITER
    os.environ.update({k: "1" for k in BLAS_ENV_VARS})
    try:  # optional: limits BLAS pools already loaded (not a dependency)
        from threadpoolctl import threadpool_limits
        _LIMITER = threadpool_limits(1)
    except Exception:
        pass
    if os.name == "posix":
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                         name="parent-watch").start()


@fill_doc
def iter_processes(fn, tasks, workers):
    """Run the trials on a pool of ``workers`` spawned processes.

    At most ``workers`` trials are in the pool at a time (the next one is
    submitted as soon as one finishes). If a worker process dies (a crash,
    ``os._exit``, an out-of-memory kill), the pool breaks: the trials in it at
    that moment are reported as failed (``BrokenProcessPool``, retried by the
    next sweep) and a fresh pool carries on with the rest. The pool is started
    for this call and shut down after it; :class:`validation.engine.WorkerPool`
    keeps one pool for many sweeps.

    Parameters
    ----------
    %(trial_fn)s %(tasks)s
    workers : int
        Maximum number of worker processes.

    %(trial_yields)s

    See Also
    --------
    validation.engine.executors.ProcessBackend : The pool of processes it uses.
    validation.engine.executors.iter_inprocess : The same in this process.

    %(ref_local_sweep)s
    """
    backend = ProcessBackend(min(workers, max(1, len(tasks))))
    try:
        yield from backend.run(fn, tasks)
    finally:
        backend.close()


def _ready():
    """No-op task: returns this worker's pid once it has started."""
    return os.getpid()


@fill_doc
class ProcessBackend:
    """Keep a pool of spawned, BLAS-pinned worker processes across sweeps.

    A ``ProcessPoolExecutor`` that outlives one sweep; restarted (fresh
    processes) when a worker dies.

    Parameters
    ----------
    workers : int
        Number of worker processes.

    See Also
    --------
    validation.engine.executors.iter_processes : One sweep on such a pool.
    validation.engine.pool.WorkerPool : The pool shared by many sweeps.

    Notes
    -----
    All ``workers`` processes are spawned when the pool starts (not on
    demand), with the BLAS variables pinned in the parent's environment at that
    moment only (:func:`pinned_blas_env`); ``start_seconds`` adds up the
    start-ups (spawn, interpreter start, first imports of the engine).

    %(ref_one_pool)s
    """

    def __init__(self, workers):
        self.workers = int(workers)
        self._pool = None
        self.starts = 0
        self.start_seconds = 0.0

    def start(self):
        """Start the worker processes now if none are running.

        Returns
        -------
        ProcessBackend
            ``self``.
        """
        if self._pool is not None:
            return self
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        t0 = time.perf_counter()
        ctx = multiprocessing.get_context("spawn")
        with pinned_blas_env():
            pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx,
                                       initializer=_init_worker, initargs=(os.getpid(),))
            # one no-op per worker spawns them all now (the executor spawns on
            # demand, one process per submit while none is idle), under the pin
            futs = [pool.submit(_ready) for _ in range(self.workers)]
        self._pool = pool
        try:
            for f in futs:
                f.result()
        except Exception:  # a worker that cannot start: report it at the first trial
            pass
        self.starts += 1
        self.start_seconds += time.perf_counter() - t0
        return self

    def close(self):
        """Shut the worker processes down (waits for them)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    @fill_doc
    def run(self, fn, tasks):
        """Run ``tasks`` on the pool (started if needed), as :func:`iter_processes` does.

        Parameters
        ----------
        %(trial_fn)s %(tasks)s

        %(trial_yields)s
        """
        import collections
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        queue = collections.deque(tasks)
        workers = self.workers

        def fill(pool, inflight):
            """Submit queued trials up to ``workers`` in flight; False if the pool is broken."""
            while queue and len(inflight) < workers:
                idx, params = queue[0]
                try:
                    fut = pool.submit(run_trial, fn, params)
                except BrokenProcessPool:
                    return False
                queue.popleft()
                inflight[fut] = idx
            return True

        inflight = {}
        try:
            while queue:
                pool = self.start()._pool
                n_yielded = 0
                alive = fill(pool, inflight)
                while inflight:
                    done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
                    finished = []
                    for fut in done:
                        idx = inflight.pop(fut)
                        try:
                            outcome = fut.result()
                        except BrokenProcessPool as exc:
                            alive = False
                            outcome = _infra_error(exc)
                        except Exception as exc:  # e.g. an unpicklable argument
                            outcome = _infra_error(exc)
                        finished.append((idx, outcome))
                    if alive:  # keep the workers busy while the parent records results
                        alive = fill(pool, inflight)
                    if not alive:  # every trial still in the dead pool failed with it
                        for fut, idx in inflight.items():
                            try:
                                outcome = fut.result()
                            except Exception as exc:
                                outcome = _infra_error(exc)
                            finished.append((idx, outcome))
                        inflight.clear()
                    n_yielded += len(finished)
                    yield from finished
                if not alive:
                    self.close()  # the next round (or sweep) starts fresh processes
                    if not n_yielded:
                        raise RuntimeError("the worker process pool broke before running any "
                                           "trial (could a worker process start at all?)")
        finally:
            # the consumer stopped early: drop the queued trials; those already
            # running finish in the pool and their outcomes are discarded
            for fut in inflight:
                fut.cancel()


# --------------------------------------------------------------------- dask
def import_distributed():
    try:
        import distributed  # noqa: F401
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise ValueError("executor='dask' needs dask.distributed, which is not installed "
                         f"({exc}); install it with: pip install -e .[dask]") from None
    return Client, LocalCluster, as_completed


@fill_doc
def open_dask(stack, workers, scheduler=None):
    """Return a ``distributed.Client`` for ``scheduler`` (see :func:`iter_dask`).

    Parameters
    ----------
    stack : contextlib.ExitStack
        What this call starts (a LocalCluster, a client) is closed with it.
    workers : int
        Workers of the LocalCluster started when ``scheduler`` is None.
    scheduler : str, distributed.Client or cluster, optional
        Where to run: an address, an existing client (returned as it is) or a
        cluster.

    Returns
    -------
    distributed.Client
        The client.

    See Also
    --------
    validation.engine.executors.dask_run : Runs trials on the client.
    validation.engine.pool.check_scheduler_address : Checks an address first.

    %(ref_dask_cluster)s
    """
    Client, LocalCluster, _ = import_distributed()
    if scheduler is None:
        cluster = stack.enter_context(LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True,
            dashboard_address=":0", env={k: "1" for k in BLAS_ENV_VARS}))
        return stack.enter_context(Client(cluster))
    if isinstance(scheduler, Client):
        return scheduler
    if isinstance(scheduler, str) or hasattr(scheduler, "scheduler_address"):
        return stack.enter_context(Client(scheduler))
    raise ValueError("scheduler must be None, a scheduler address string, a "
                     f"distributed.Client or a cluster, got {scheduler!r:.80}")


@fill_doc
def dask_run(client, fn, tasks):
    """Run ``tasks`` on a Dask ``client``, as :func:`iter_dask` does.

    Parameters
    ----------
    client : distributed.Client
        Where to run (not closed).
    %(trial_fn)s %(tasks)s

    %(trial_yields)s

    See Also
    --------
    validation.engine.executors.open_dask : Opens the client.

    %(ref_dask_cluster)s
    """
    _, _, as_completed = import_distributed()
    pending = {}  # future key -> (future, index); results are dropped once yielded
    try:
        futs = client.map(run_trial, [fn] * len(tasks), [p for _, p in tasks], pure=False)
        for fut, (idx, _) in zip(futs, tasks):
            pending[fut.key] = (fut, idx)
        done = as_completed(futs, with_results=True, raise_errors=False)
        del futs
        for batch in done.batches():
            for fut, res in batch:
                _, idx = pending.pop(fut.key)
                if isinstance(res, BaseException):  # KilledWorker, lost connection, ...
                    res = _infra_error(res)
                yield idx, res
    finally:
        if pending:
            client.cancel([f for f, _ in pending.values()])


@fill_doc
def iter_dask(fn, tasks, workers, scheduler=None):
    """Run the trials on Dask distributed.

    ``scheduler`` is a scheduler address (``"tcp://host:8786"``), an existing
    ``distributed.Client`` or cluster object (used, not closed), or None: a
    ``LocalCluster`` of ``workers`` single-threaded worker processes is
    started for this sweep and closed after it.

    Parameters
    ----------
    %(trial_fn)s %(tasks)s
    workers : int
        Workers of the LocalCluster (when ``scheduler`` is None).
    scheduler : str, distributed.Client or cluster, optional
        Where to run.

    %(trial_yields)s

    See Also
    --------
    validation.engine.executors.open_dask : The client it opens.
    validation.engine.executors.dask_run : Runs the trials on that client.

    %(ref_dask_cluster)s
    """
    with contextlib.ExitStack() as stack:
        client = open_dask(stack, workers, scheduler)
        yield from dask_run(client, fn, tasks)
