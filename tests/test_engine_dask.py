"""The Dask executor (skipped when dask.distributed is not installed)."""
import json

import pytest

pytest.importorskip("distributed")

from dask.distributed import Client, LocalCluster  # noqa: E402

from validation.engine import read_store, run_sweep  # noqa: E402
from validation.engine import _demo_trials as demo  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # one in-process cluster for the module: worker processes start too slowly for tests
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


def test_dask_matches_inprocess_and_processes_bit_for_bit(client):
    params = [{"seed": s, "n": 100, "d": 30, "reps": 2} for s in range(6)]
    ref = run_sweep(demo.lstsq_trial, params, executor="inprocess", progress=False)
    dsk = run_sweep(demo.lstsq_trial, params, executor="dask", scheduler=client, progress=False)
    prc = run_sweep(demo.lstsq_trial, params, executor="processes", workers=2, progress=False)
    for a, b, c in zip(ref, dsk, prc):
        assert json.dumps(a["result"]) == json.dumps(b["result"]) == json.dumps(c["result"])
        assert a["key"] == b["key"] == c["key"] and b["status"] == "ok"


def test_dask_resume_failures_and_scheduler_address(client, tmp_path):
    log, fix, store = str(tmp_path / "log"), str(tmp_path / "fix"), tmp_path / "s.jsonl"
    p = [{"i": i, "fail": i == 2, "log": log, "fix": fix} for i in range(5)]
    recs = run_sweep(demo.flaky, p[:4], executor="dask", scheduler=client, store=store,
                     progress=False)
    assert [r["status"] for r in recs] == ["ok", "ok", "error", "ok"]
    assert recs[2]["error"] == {**recs[2]["error"], "type": "ValueError",
                                "message": "trial 2 failed on purpose"}
    open(fix, "w").close()
    # by address: a new Client to the same scheduler, closed by run_sweep
    recs = run_sweep(demo.flaky, p, executor="dask", scheduler=client.scheduler.address,
                     store=store, progress=False)
    assert [r["status"] for r in recs] == ["ok"] * 5
    assert sorted(e["i"] for e in demo.read_log(log)) == [0, 1, 2, 2, 3, 4]
    assert recs.stats.n_retried == 1 and recs.stats.n_skipped == 3
    assert len(read_store(store).ok) == 5


def test_dask_bad_scheduler_argument():
    with pytest.raises(ValueError, match="scheduler must be"):
        run_sweep(demo.square, [{"x": 1}], executor="dask", scheduler=3.5, progress=False)


def test_dask_own_local_cluster_pins_blas_threads(monkeypatch):
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(k, "3")
    # scheduler=None: run_sweep starts (and closes) a LocalCluster of worker processes
    recs = run_sweep(demo.env_probe, [{"i": i} for i in range(2)], executor="dask", workers=1,
                     progress=False)
    for r in recs:
        assert r["status"] == "ok"
        env = r["result"]["env"]
        assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1"
