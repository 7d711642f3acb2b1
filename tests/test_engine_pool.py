"""WorkerPool: one set of workers for many sweeps (docs/sweeps.md#one-pool-for-many-sweeps)."""
import json

import pytest

from validation.engine import WorkerPool, read_store, run_sweep
from validation.engine import _demo_trials as demo


def _ok(recs):
    assert all(r["status"] == "ok" for r in recs), [r for r in recs if r["status"] != "ok"][:1]
    return recs


def test_one_process_pool_serves_many_sweeps_bit_identically(tmp_path):
    lst = [{"seed": s, "n": 60, "d": 20, "reps": 2} for s in range(4)]
    ref = _ok(run_sweep(demo.lstsq_trial, lst, executor="inprocess", progress=False))
    with WorkerPool("processes", workers=2) as pool:
        assert pool.starts == 0                      # nothing starts before a trial needs it
        a = _ok(run_sweep(demo.import_probe, [{"i": i} for i in range(6)], executor=pool,
                          progress=False))
        b = _ok(run_sweep(demo.lstsq_trial, lst, executor=pool, store=tmp_path / "s.jsonl",
                          progress=False))
        c = _ok(run_sweep(demo.import_probe, [{"i": i} for i in range(6, 12)], executor=pool,
                          progress=False))
        assert pool.starts == 1                      # three sweeps, one start
        assert pool.trials == 16 and b.stats.shared_pool and b.stats.executor == "processes"
    # the first and the last sweep ran on the same (at most 2) worker processes: no process
    # was started for a later sweep.  Which of the two workers takes which task is up to
    # the scheduler (under load one worker may take all six tasks of a sweep), so the two
    # sets need not intersect.
    pids_a = {r["result"]["pid"] for r in a}
    pids_c = {r["result"]["pid"] for r in c}
    assert len(pids_a | pids_c) <= 2
    # exact equality of the JSON text: a shared pool changes no bit of a result
    for x, y in zip(ref, b):
        assert json.dumps(x["result"]) == json.dumps(y["result"]) and x["key"] == y["key"]
    assert len(read_store(tmp_path / "s.jsonl").ok) == 4


def test_workers_import_only_what_the_trial_needs():
    # a worker that ran the engine's trivial trial has not imported scipy, matplotlib,
    # sympy, mpmath, replica, nor hcizz beyond its shared layer (the caller has loaded
    # scipy and matplotlib)
    import matplotlib  # noqa: F401
    import scipy.stats  # noqa: F401

    with WorkerPool("processes", workers=1) as pool:
        rec = _ok(run_sweep(demo.import_probe, [{"i": 0}], executor=pool, progress=False))[0]
    assert rec["result"]["heavy"] == []


def test_store_only_sweep_starts_nothing(tmp_path):
    store = tmp_path / "s.jsonl"
    params = [{"x": x} for x in range(3)]
    _ok(run_sweep(demo.square, params, executor="inprocess", store=store, progress=False))
    with WorkerPool("processes", workers=2) as pool:
        recs = _ok(run_sweep(demo.square, params, executor=pool, store=store, progress=False))
        assert pool.starts == 0 and pool.trials == 0 and recs.stats.n_skipped == 3


def test_a_dead_worker_fails_its_trial_and_the_pool_restarts(tmp_path):
    with WorkerPool("processes", workers=1) as pool:
        recs = run_sweep(demo.die, [{"i": 0, "die": True}], executor=pool, progress=False)
        assert recs[0]["status"] == "error" and recs[0]["error"]["type"] == "BrokenProcessPool"
        again = _ok(run_sweep(demo.die, [{"i": 1}, {"i": 2}], executor=pool, progress=False))
        assert [r["result"]["i"] for r in again] == [1, 2]
        assert pool.starts == 2                      # the broken pool was replaced once


def test_inprocess_pool_counts_trials_and_cpu_time():
    with WorkerPool("inprocess") as pool:
        recs = _ok(run_sweep(demo.lstsq_trial, [{"seed": 0, "n": 200, "d": 50, "reps": 3}],
                             executor=pool, progress=False))
    assert pool.trials == 1 and not pool.in_workers and pool.starts == 0
    # CPU time of a trial is at most its wall time plus timer resolution (1 thread, 1 ms)
    assert 0 < pool.trial_cpu_seconds <= recs[0]["seconds"] + 1e-3
    assert recs.stats.cpu_seconds == pytest.approx(pool.trial_cpu_seconds, abs=1e-9)
    d = pool.to_dict()
    assert d["executor"] == "inprocess" and d["trials"] == 1 and json.dumps(d)


@pytest.mark.parametrize("kw, match", [
    ({"executor": "threads"}, "executor must be one of"),
    ({"executor": "processes", "workers": 0}, "workers must be"),
    ({"executor": "processes", "scheduler": "tcp://h:1"}, "scheduler is only used"),
])
def test_bad_pool_settings_raise(kw, match):
    with pytest.raises(ValueError, match=match):
        WorkerPool(**kw)


def test_run_sweep_refuses_scheduler_with_a_pool_and_unknown_executor_objects():
    with WorkerPool("inprocess") as pool:
        with pytest.raises(ValueError, match="scheduler must be None with a WorkerPool"):
            run_sweep(demo.square, [{"x": 1}], executor=pool, scheduler="tcp://h:1")
    with pytest.raises(ValueError, match="executor must be one of"):
        run_sweep(demo.square, [{"x": 1}], executor=object())


@pytest.mark.slow
def test_one_dask_local_cluster_serves_many_sweeps():
    pytest.importorskip("distributed")
    lst = [{"seed": s, "n": 60, "d": 20} for s in range(3)]
    ref = _ok(run_sweep(demo.lstsq_trial, lst, executor="inprocess", progress=False))
    with WorkerPool("dask", workers=2) as pool:
        a = _ok(run_sweep(demo.lstsq_trial, lst, executor=pool, progress=False))
        b = _ok(run_sweep(demo.import_probe, [{"i": i} for i in range(4)], executor=pool,
                          progress=False))
        assert pool.starts == 1 and pool.trials == 7
    assert [json.dumps(r["result"]) for r in a] == [json.dumps(r["result"]) for r in ref]
    assert all(r["result"]["pid"] > 0 for r in b)
