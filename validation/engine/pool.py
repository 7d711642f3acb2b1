"""One pool of workers for many sweeps: :class:`WorkerPool`.

``run_sweep(fn, params, executor="processes")`` starts a process pool for the
call and shuts it down after it: every worker pays its interpreter start and
the import of the trial's module again (1.5-3 s per call on 2 cores, more under
load).  A :class:`WorkerPool` is started once (lazily, by the first sweep that
has something to compute) and serves every ``run_sweep(..., executor=pool)``
until it is closed; ``python -m validation reproduce`` runs the whole report on
one.
"""
from __future__ import annotations

import contextlib
import math
import os
import time

from validation._docparams import fill_doc

from .executors import EXECUTORS, ProcessBackend, dask_run, import_distributed, iter_inprocess, open_dask

__all__ = ["WorkerPool", "check_scheduler_address"]


_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


@fill_doc
def check_scheduler_address(address):
    """Check the syntax of a Dask scheduler address before anything connects to it.

    Parameters
    ----------
    address : str
        ``SCHEME://HOST:PORT`` (scheme one of tcp, tls, inproc, ucx, ws, wss)
        or ``HOST:PORT``, the port an integer in [1, 65535]; ``inproc://``
        addresses need no port.

    Returns
    -------
    str
        ``address``.

    Raises
    ------
    ValueError
        Naming the address and the accepted form.

    See Also
    --------
    validation.engine.executors.open_dask : Connects to the address.

    %(ref_dask_cluster)s

    Examples
    --------
    >>> check_scheduler_address("tcp://10.0.0.5:8786")
    'tcp://10.0.0.5:8786'
    >>> check_scheduler_address("not-a-url")
    Traceback (most recent call last):
    ...
    ValueError: scheduler must be an address SCHEME://HOST:PORT or HOST:PORT (scheme tcp, tls, inproc, ucx, ws, wss; port 1..65535), got 'not-a-url'
    """
    msg = (f"scheduler must be an address SCHEME://HOST:PORT or HOST:PORT (scheme {', '.join(_SCHEMES)}; "
           f"port 1..65535), got {address!r:.200}")
    if not isinstance(address, str) or address != address.strip() or not address:
        raise ValueError(msg)
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in _SCHEMES or not rest:
        raise ValueError(msg)
    if scheme == "inproc":
        return address
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")                      # [::1]:8786
    if not colon or not host or any(c in host for c in " /?#@") or not port.isdigit() \
            or not 1 <= int(port) <= 65535:
        raise ValueError(msg)
    return address


@fill_doc
class WorkerPool:
    """Workers that live for many :func:`validation.engine.run_sweep` calls.

    Parameters
    ----------
    executor : {"processes", "dask", "inprocess"}
        ``"processes"``: ``workers`` spawned local processes, BLAS pinned to
        one thread each (as ``run_sweep(executor="processes")``).
        ``"dask"``: one Dask client for the pool's lifetime, to ``scheduler``
        or to a ``LocalCluster`` of ``workers`` single-threaded processes
        started with the pool. ``"inprocess"``: trials run in the calling
        process (tests, debugging); nothing is started.
    workers : int, optional
        Worker processes (``"processes"``, or the LocalCluster of ``"dask"``
        without a ``scheduler``); default ``os.cpu_count()``. ``"inprocess"``
        has one (the caller).
    scheduler : str or distributed.Client, optional
        Dask only: a scheduler address (``"tcp://host:8786"``) or an existing
        client or cluster (used, never closed by the pool).

    Attributes
    ----------
    starts : int
        How many times workers were started (1 for a healthy pool that ran
        anything; a dead worker process makes the next trials start a fresh
        set).
    startup_seconds : float
        Wall time spent starting workers (processes: spawn, interpreter and
        engine imports, until every worker answered; Dask: cluster and client).
    trials : int
        Trials run through the pool.
    trial_seconds, trial_cpu_seconds : float
        Wall and CPU seconds spent inside those trials, as measured by the
        process that ran each one (:func:`validation.engine.executors.run_trial`).

    Raises
    ------
    ValueError
        Unknown ``executor``, ``workers < 1``, ``scheduler`` without Dask, Dask
        not installed.

    See Also
    --------
    validation.engine.sweep.run_sweep : The sweeps that run on it.

    Notes
    -----
    *Lifetime.* Nothing starts before the first sweep with a trial to compute
    (a report whose sweeps all come from stores starts no process). ``close``
    (or leaving a ``with`` block) shuts the workers down; a closed pool starts
    afresh if used again.

    *Results.* A trial's result does not depend on which pool, worker or
    executor ran it (``run_sweep``, Notes): the same trials give the same bits
    through a shared pool as through a pool per sweep.

    *Imports.* A spawned worker imports the engine (numpy) when it starts and
    then the module of each trial function the first time it runs one; it
    does not import the caller's packages, matplotlib or the report code.
    With one pool, each worker pays each module's import once per run.

    %(ref_one_pool)s

    Examples
    --------
    >>> from validation.engine import WorkerPool, run_sweep
    >>> from validation.engine._demo_trials import square
    >>> with WorkerPool("inprocess") as pool:
    ...     a = run_sweep(square, [{"x": 2}], executor=pool, progress=False)
    ...     b = run_sweep(square, [{"x": 3}], executor=pool, progress=False)
    >>> [a[0]["result"]["y"], b[0]["result"]["y"], pool.trials]
    [4, 9, 2]
    """

    def __init__(self, executor="processes", *, workers=None, scheduler=None):
        from hcizz.checks import check_int

        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}, "
                             f"got {executor!r}")
        if scheduler is not None and executor != "dask":
            raise ValueError(f"scheduler is only used by executor='dask', got executor={executor!r}")
        if isinstance(scheduler, str):
            check_scheduler_address(scheduler)       # before Dask is imported or anything starts
        self.executor = executor
        self.workers = (os.cpu_count() or 1) if workers is None else check_int("workers", workers, low=1, high=1024)
        if executor == "inprocess":
            self.workers = 1
        self.scheduler = scheduler
        if executor == "dask":
            import_distributed()  # ValueError now if dask is missing
        self._backend = ProcessBackend(self.workers) if executor == "processes" else None
        self._stack = None
        self._client = None
        self._dask_starts = 0
        self._dask_start_seconds = 0.0
        self.trials = 0
        self.trial_seconds = 0.0
        self.trial_cpu_seconds = 0.0

    # ------------------------------------------------------------------ state
    @property
    def in_workers(self):
        """Whether trials run in other processes than the caller's (bool)."""
        return self.executor != "inprocess"

    @property
    def starts(self):
        """How many times workers were started (int)."""
        if self._backend is not None:
            return self._backend.starts
        return self._dask_starts

    @property
    def startup_seconds(self):
        """Wall seconds spent starting workers (float)."""
        if self._backend is not None:
            return self._backend.start_seconds
        return self._dask_start_seconds

    def describe(self):
        """Name the executor and its size in a few words (progress lines).

        Returns
        -------
        str
            E.g. ``"shared processes pool of 2 workers"``.
        """
        if self.executor == "inprocess":
            return "in-process pool"
        if self.executor == "dask" and self.scheduler is not None:
            return f"shared Dask client ({self.scheduler!r:.60})"
        return f"shared {self.executor} pool of {self.workers} workers"

    def to_dict(self):
        """Return the pool's counters as plain JSON values (``report.json`` ``meta.pool``).

        Returns
        -------
        dict
            ``executor``, ``workers``, ``scheduler`` (address text or None),
            ``starts``, ``startup_seconds``, ``trials``, ``trial_seconds``,
            ``trial_cpu_seconds``.
        """
        sched = self.scheduler
        if sched is not None and not isinstance(sched, str):
            sched = getattr(sched, "scheduler_address", None) or type(sched).__name__
        return {"executor": self.executor, "workers": self.workers, "scheduler": sched,
                "starts": self.starts, "startup_seconds": self.startup_seconds,
                "trials": self.trials, "trial_seconds": self.trial_seconds,
                "trial_cpu_seconds": self.trial_cpu_seconds}

    # -------------------------------------------------------------- lifetime
    def start(self):
        """Start the workers now (else the first sweep with trials does).

        Returns
        -------
        WorkerPool
            ``self``.
        """
        if self._backend is not None:
            self._backend.start()
        elif self.executor == "dask" and self._client is None:
            t0 = time.perf_counter()
            stack = contextlib.ExitStack()
            try:
                self._client = open_dask(stack, self.workers, self.scheduler)
            except BaseException:
                stack.close()
                raise
            self._stack = stack
            self._dask_starts += 1
            self._dask_start_seconds += time.perf_counter() - t0
        return self

    def close(self):
        """Shut down what the pool started (processes, LocalCluster, client)."""
        if self._backend is not None:
            self._backend.close()
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return (f"WorkerPool({self.executor!r}, workers={self.workers}, starts={self.starts}, "
                f"trials={self.trials})")

    # ------------------------------------------------------------------- run
    @fill_doc
    def run(self, fn, tasks):
        """Run trials on the pool (used by ``run_sweep``).

        Parameters
        ----------
        %(fn)s %(tasks)s

        %(trial_yields)s
        """
        if self._backend is not None:
            it = self._backend.run(fn, tasks)
        elif self.executor == "dask":
            it = dask_run(self.start()._client, fn, tasks)
        else:
            it = iter_inprocess(fn, tasks)
        try:
            for idx, outcome in it:
                self.trials += 1
                sec, cpu = outcome.get("seconds", math.nan), outcome.get("cpu_seconds", math.nan)
                if math.isfinite(sec):
                    self.trial_seconds += sec
                if math.isfinite(cpu):
                    self.trial_cpu_seconds += cpu
                yield idx, outcome
        finally:
            it.close()
