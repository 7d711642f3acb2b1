"""``run_sweep``: run a list of independent trials, in parallel, resumably."""
from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import sys
import time
from datetime import datetime, timezone

from hcizz.results import Result
from validation._docparams import fill_doc, returned_by

from .executors import EXECUTORS, import_distributed, iter_dask, iter_inprocess, iter_processes
from .keys import canonical_json, check_fn, key_of, normalize_params
from .progress import Progress
from .store import TrialStore, decode_record, read_store

__all__ = ["run_sweep", "SweepStats", "SweepRecords"]


@fill_doc
@dataclasses.dataclass
class SweepStats(Result):
    """Counts of one :func:`run_sweep` call (``records.stats``).

    Parameters
    ----------
    n_params : int
        Length of ``params``.
    n_unique : int
        Distinct trials (duplicates in ``params`` are computed once).
    n_skipped : int
        Trials found with status ok in the store (not recomputed).
    n_computed : int
        Trials run by this call (ok or failed).
    n_failed : int
        Trials run by this call that failed.
    n_retried : int
        Trials that had only failed records in the store and were rerun.
    wall_seconds : float
        Wall-clock duration of the call.
    executor : str
        The executor used (for a :class:`validation.engine.WorkerPool`, its
        executor name).
    shared_pool : bool
        Whether the trials ran on a :class:`validation.engine.WorkerPool`
        that outlives the call.
    cpu_seconds : float
        CPU seconds spent inside the trials computed by this call, as
        measured by the process that ran each one.
    store : str or None
        Path of the store, if any.
    store_damaged : list of DamagedLine
        Damaged store lines found when the sweep started (also warned about
        on stderr).

    See Also
    --------
    validation.engine.sweep.run_sweep : The call it counts.

    %(ref_local_sweep)s
    """

    n_params: int = 0
    n_unique: int = 0
    n_skipped: int = 0
    n_computed: int = 0
    n_failed: int = 0
    n_retried: int = 0
    wall_seconds: float = 0.0
    executor: str = ""
    shared_pool: bool = False
    cpu_seconds: float = 0.0
    store: str | None = None
    store_damaged: list = dataclasses.field(default_factory=list)


@fill_doc(record_links=returned_by("validation.engine.sweep.run_sweep", "docs/sweeps.md#records"))
class SweepRecords(list):
    """The list of records returned by :func:`run_sweep`, with its ``.stats``.

    It is aligned with ``params``; ``.stats`` is the sweep's :class:`SweepStats`.

    %(record_links)s
    """

    stats: SweepStats


def _now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _make_line(key, name, params_text, outcome):
    # strict JSON under the project's one policy (hcizz.jsonout): non-finite
    # result floats are written as the strings "nan", "inf", "-inf"
    from hcizz.jsonout import to_json_value

    rec = {"key": key, "fn": name, "params": json.loads(params_text),
           "status": outcome["status"]}
    if outcome["status"] == "ok":
        rec["result"] = outcome["result"]
    else:
        rec["error"] = outcome["error"]
    sec = outcome["seconds"]
    rec["seconds"] = round(sec, 6) if math.isfinite(sec) else None
    rec["finished"] = _now()
    try:
        return json.dumps(to_json_value(rec), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # cannot happen for plain results; be safe
        rec.pop("result", None)
        rec["status"] = "error"
        rec["error"] = {"type": type(exc).__name__, "message": str(exc), "traceback": ""}
        return json.dumps(to_json_value(rec), ensure_ascii=False, allow_nan=False)


def run_sweep(fn, params, *, store=None, executor="processes", workers=None,
              scheduler=None, progress=True, label="sweep"):
    """Run ``fn`` on every parameter record of ``params``; resumable, parallel.

    Parameters
    ----------
    fn : callable
        Trial function ``fn(params: dict) -> dict``: importable at module
        level (workers import it by name), a pure function of its parameter
        record (the seed is one of the parameters), returning a dict of JSON
        values (numpy scalars and arrays are converted; NaN/inf are kept: the
        store writes them as the strings ``"nan"``, ``"inf"``, ``"-inf"`` and
        reads them back as floats, ``docs/reliability.md#json``).
    params : list of dict
        Parameter records: plain JSON values (see
        :func:`validation.engine.keys.normalize_params`). ``fn`` receives a
        fresh copy of the normalised record.
    store : str or Path, optional
        Append-only JSONL file holding one record per finished trial. Trials
        with an ok record there are not recomputed; trials with only failed
        records are retried. None: nothing is persisted.
    executor : {"processes", "inprocess", "dask"} or WorkerPool
        ``"processes"`` (default): a pool of spawned local processes, BLAS
        pinned to one thread each, started for this call. ``"inprocess"``:
        one after the other in this process (tests, debugging, ``pdb``).
        ``"dask"``: Dask distributed (``pip install -e .[dask]``). A
        :class:`validation.engine.WorkerPool`: its workers, which outlive
        the call (one pool for many sweeps; started here if not yet).
    workers : int, optional
        Worker processes (``"processes"``) or LocalCluster workers
        (``"dask"`` without ``scheduler``); default ``os.cpu_count()``.
        Ignored by ``"inprocess"``, by a given Dask scheduler and by a
        ``WorkerPool`` (which has its own size).
    scheduler : str or distributed.Client, optional
        Dask only: scheduler address (``"tcp://host:8786"``) or an existing
        client/cluster. None starts a LocalCluster for this call. Not with
        a ``WorkerPool`` (give it to the pool).
    progress : bool
        Progress lines (done/total, rate, ETA; throttled) and a final
        summary line on stderr.
    label : str
        Prefix of the progress lines.

    Returns
    -------
    SweepRecords
        A list aligned with ``params`` (duplicates get equal records), each
        ``{"key", "fn", "params", "status", "result" | "error", "seconds",
        "finished"}`` where ``status`` is ``"ok"`` or ``"error"`` and
        ``error`` is ``{"type", "message", "traceback"}``; every record is
        exactly what the store holds (the same JSON text parsed back), so a
        record read back on a rerun equals the one returned when it was
        computed. ``.stats`` is a :class:`SweepStats`.

    Raises
    ------
    ValueError
        Unknown ``executor``, ``workers < 1``, non-JSON ``params``, ``fn``
        not importable or not picklable, dask missing.

    See Also
    --------
    validation.engine.pool.WorkerPool : A pool shared by many sweeps.
    validation.engine.store.read_store : Reads the store it writes.

    Notes
    -----
    *Keys.* Trial ``i`` is identified by ``trial_key(params[i], fn)``, the
    SHA-256 of the canonical JSON of ``{"fn": "module:qualname", "params":
    params[i]}`` (see :mod:`validation.engine.keys`).

    *Crash safety.* Only this process writes the store, one complete line per
    finished trial (single ``O_APPEND`` write + ``fsync``) as soon as it
    finishes; killing the sweep at any moment (SIGKILL included) loses at most
    the trials still running, and a rerun recomputes exactly those. See
    :mod:`validation.engine.store`.

    *Reproducibility.* Results depend only on ``params``: which executor or
    how many workers ran a trial does not change a bit of its result (on one
    machine; BLAS kernels may differ between CPU models of a cluster), as
    long as ``fn`` draws its randomness from a seed in ``params`` and its
    BLAS reductions are deterministic (one BLAS thread, as in the workers;
    ``"inprocess"`` uses the caller's BLAS settings).
    ``seconds`` and ``finished`` are timing metadata, not results.

    References
    ----------
    docs/sweeps.md#running-a-sweep-locally; docs/sweeps.md#resuming;
    docs/sweeps.md#one-pool-for-many-sweeps; docs/sweeps.md#running-on-a-dask-cluster

    Examples
    --------
    >>> from validation.engine import run_sweep
    >>> from validation.engine._demo_trials import square
    >>> recs = run_sweep(square, [{"x": 2}, {"x": 3}], executor="inprocess", progress=False)
    >>> [r["result"]["y"] for r in recs]
    [4, 9]
    """
    # imported here, not at module level: worker processes import this package
    # to unpickle run_trial, and importing hcizz (scipy.stats) costs seconds
    from hcizz.checks import check_int

    from .pool import WorkerPool

    t0 = time.monotonic()
    pool = executor if isinstance(executor, WorkerPool) else None
    if pool is None and (not isinstance(executor, str) or executor not in EXECUTORS):
        raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))} or a "
                         f"WorkerPool, got {executor!r:.80}")
    workers = (os.cpu_count() or 1) if workers is None else check_int("workers", workers, low=1, high=1024)
    if pool is not None:
        if scheduler is not None:
            raise ValueError("scheduler must be None with a WorkerPool executor (give it to the "
                             f"pool), got {scheduler!r:.80}")
        executor, workers = pool.executor, pool.workers
    if executor == "dask":
        import_distributed()  # ValueError now if dask is missing, even if nothing is left to run
    name = check_fn(fn, picklable=executor != "inprocess")
    if not isinstance(params, (list, tuple)):
        raise ValueError(f"params must be a list of dicts, got {type(params).__name__}")
    if not isinstance(label, str):
        raise ValueError(f"label must be a str, got {label!r}")
    if store is not None and (not isinstance(store, (str, os.PathLike)) or os.path.isdir(store)):
        raise ValueError(f"store must be None or a file path, got {store!r:.80}")
    if scheduler is not None and executor != "dask":
        raise ValueError(f"scheduler is only used by executor='dask', got executor={executor!r}")

    # keys, duplicates
    texts, keys, order = [], [], {}
    for i, p in enumerate(params):
        norm = normalize_params(p, f"params[{i}]")
        ptext = canonical_json(norm)
        key = key_of(name, norm)
        texts.append(ptext)
        keys.append(key)
        order.setdefault(key, i)
    unique = list(order.items())  # (key, first index)

    stats = SweepStats(n_params=len(params), n_unique=len(unique), executor=executor,
                       shared_pool=pool is not None, store=None if store is None else str(store))
    done = {}  # key -> record
    store_obj = None
    if store is not None:
        scan = read_store(store, warn=True)
        stats.store_damaged = list(scan.damaged)
        for key, _ in unique:
            if key in scan.ok:
                done[key] = scan.ok[key]
        stats.n_skipped = len(done)
        stats.n_retried = sum(k in scan.failed for k, _ in unique if k not in done)
    todo = [(key, i) for key, i in unique if key not in done]

    if store is not None and todo:
        # the lock first: a second writer is refused before a progress line or a worker exists
        store_obj = TrialStore(store).open()
    it = None
    try:
        bar = Progress(len(todo), label=label, enabled=bool(progress), skipped=stats.n_skipped)
        if progress and todo:
            where = (pool.describe() if pool is not None else f"executor={executor!r}"
                     + (f" with {workers} workers" if executor != "inprocess" and scheduler is None else ""))
            print(f"{label}: {len(todo)} trials to run ({stats.n_skipped} of {len(unique)} already "
                  f"in store, {stats.n_retried} retried) on {where}", file=sys.stderr)
        tasks = [(i, json.loads(texts[i])) for _, i in todo]
        if not tasks:  # everything is in the store: start no pool or cluster
            it = iter(())
        elif pool is not None:
            it = pool.run(fn, tasks)
        elif executor == "inprocess":
            it = iter_inprocess(fn, tasks)
        elif executor == "processes":
            it = iter_processes(fn, tasks, workers)
        else:
            it = iter_dask(fn, tasks, workers, scheduler)
        for i, outcome in it:
            line = _make_line(keys[i], name, texts[i], outcome)
            if store_obj is not None:
                store_obj.append_line(line)
            rec = decode_record(json.loads(line))
            done[keys[i]] = rec
            stats.n_computed += 1
            stats.n_failed += rec["status"] != "ok"
            cpu = outcome.get("cpu_seconds", math.nan)
            stats.cpu_seconds += cpu if math.isfinite(cpu) else 0.0
            bar.update(failed=rec["status"] != "ok")
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()
        if store_obj is not None:
            store_obj.close()
    stats.wall_seconds = time.monotonic() - t0
    extra = ""
    if stats.store_damaged:
        extra = f"; {len(stats.store_damaged)} damaged store line(s) skipped (see warnings)"
    if stats.n_failed:
        extra += "; rerun to retry the failed trials"
    bar.finish(n_params=len(params), n_unique=len(unique), extra=extra)

    out = SweepRecords()
    first_use = set()
    for key in keys:
        rec = done[key]
        out.append(rec if key not in first_use else copy.deepcopy(rec))
        first_use.add(key)
    out.stats = stats
    return out


@fill_doc
def stored_runner(fn, store, *, compute=True):
    """Return ``run(params) -> results`` for one trial function and one store.

    Parameters
    ----------
    fn : callable
        Trial function (importable by its ``module:qualname``, as for
        :func:`run_sweep`).
    store : str or path-like
        JSONL trial store.
    compute : bool
        ``True``: ``run`` is :func:`run_sweep` in this process on ``store``
        (finished trials are read back, missing ones computed and appended).
        ``False``: ``run`` only reads ``store`` and computes nothing (a replay,
        e.g. of a committed store by a report).

    Returns
    -------
    callable
        ``run(params)`` taking a list of parameter records and returning the
        list of their result records, in order.

    Raises
    ------
    RuntimeError
        From ``run`` (``compute=True``) when a trial failed.
    LookupError
        From ``run`` (``compute=False``) when a trial is not in the store.

    See Also
    --------
    validation.engine.sweep.run_sweep : The sweep it runs.

    Notes
    -----
    The store is read once when ``compute=False``; every ``run`` then looks the
    trials up by :func:`validation.engine.trial_key`. Sequential designs
    (:func:`validation.adaptive.adaptive_threshold`) call ``run`` once per round,
    so the same design code either runs or replays a study.

    %(ref_adaptive_threshold_design)s

    Examples
    --------
    >>> import tempfile, os
    >>> from validation.engine._demo_trials import square
    >>> path = os.path.join(tempfile.mkdtemp(), "s.jsonl")
    >>> [r["y"] for r in stored_runner(square, path)([{"x": 3}])]
    [9]
    >>> [r["y"] for r in stored_runner(square, path, compute=False)([{"x": 3}])]
    [9]
    """
    from pathlib import Path

    from .keys import trial_key
    from .store import read_store

    if compute:
        def run(params):
            recs = run_sweep(fn, params, store=store, executor="inprocess", progress=False)
            bad = [r for r in recs if r["status"] != "ok"]
            if bad:
                raise RuntimeError(f"{len(bad)} of {len(recs)} trials failed; first: {bad[0]['error']}")
            return [r["result"] for r in recs]
        return run
    ok = read_store(store, warn=False).ok if Path(store).exists() else {}

    def look(params):
        out = []
        for q in params:
            rec = ok.get(trial_key(q, fn))
            if rec is None:
                raise LookupError(f"trial not in {Path(store).name}: {q}")
            out.append(rec["result"])
        return out
    return look
