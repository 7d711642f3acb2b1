"""A sweep against a real Dask cluster: a scheduler and two workers started as
separate processes by the ``dask scheduler`` / ``dask worker`` commands (the shape
of a multi-machine cluster, on loopback), with results identical to the local run.

Marked slow (about 15-30 s: the worker processes import numpy and scipy).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from validation.engine import read_store, run_sweep  # noqa: E402
from validation.engine import _demo_trials as demo  # noqa: E402

pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_command():
    exe = Path(sys.executable).with_name("dask")
    if exe.exists():
        return [str(exe)]
    if shutil.which("dask"):
        return [shutil.which("dask")]
    pytest.skip("the dask command is not installed")


@pytest.fixture
def cluster(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    dask = _dask_command()
    procs = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port", str(port),
                                      "--dashboard-address", ":0"],
                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / "scheduler.log", "w"),
                              env=env, start_new_session=True)]
    procs.append(subprocess.Popen(dask + ["worker", address, "--nworkers", "2", "--nthreads", "1",
                                          "--no-dashboard", "--local-directory", str(tmp_path / "w")],
                                  stdout=subprocess.DEVNULL, stderr=open(tmp_path / "worker.log", "w"),
                                  env=env, start_new_session=True))
    try:
        from dask.distributed import Client

        deadline = time.monotonic() + 120
        while True:
            try:
                with Client(address, timeout=5) as c:
                    c.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        yield address
    finally:
        for p in procs[::-1]:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def test_sweep_on_a_cli_started_cluster_matches_local_run(cluster, tmp_path):
    params = [{"seed": s, "n": 120, "d": 30, "reps": 2} for s in range(8)]
    local = run_sweep(demo.lstsq_trial, params, executor="inprocess", progress=False)
    store = tmp_path / "cluster.jsonl"
    remote = run_sweep(demo.lstsq_trial, params, executor="dask", scheduler=cluster,
                       store=store, progress=False)
    for a, b in zip(local, remote):
        assert b["status"] == "ok" and a["key"] == b["key"]
        assert json.dumps(a["result"]) == json.dumps(b["result"])   # bit for bit
    # the store written from cluster results resumes locally with nothing to compute
    again = run_sweep(demo.lstsq_trial, params, executor="inprocess", store=store, progress=False)
    assert again.stats.n_skipped == len(params)
    assert len(read_store(store).records) == len(params)


def test_report_runs_on_one_client_of_a_cli_started_cluster(cluster, tmp_path, monkeypatch):
    # `reproduce --executor dask --scheduler ADDRESS`: every section's sweeps go to the
    # cluster through one WorkerPool (one client), with the local results bit for bit
    import types

    from validation import report as rep

    params = [{"seed": s, "n": 120, "d": 30} for s in range(4)]

    def build(ctx):
        a = run_sweep(demo.lstsq_trial, params, executor=ctx.executor, progress=False)
        b = run_sweep(demo.import_probe, [{"i": i} for i in range(4)], executor=ctx.executor,
                      progress=False)
        return rep.SectionResult("x", {"a": [r["result"] for r in a],
                                       "pids": sorted({r["result"]["pid"] for r in b})})

    mod = types.ModuleType("fake_a")
    mod.KEY, mod.TITLE, mod.build = "a", "A", build
    monkeypatch.setattr(rep, "SECTIONS", [("a", "fake_a")])
    monkeypatch.setattr(rep, "_load", lambda name: mod)
    data = rep.reproduce(tmp_path / "r", quick=True, executor="dask", scheduler=cluster)
    local = run_sweep(demo.lstsq_trial, params, executor="inprocess", progress=False)
    assert json.dumps(data["a"]["a"]) == json.dumps([r["result"] for r in local])
    pool = data["meta"]["pool"]
    assert pool["scheduler"] == cluster and pool["starts"] == 1 and pool["trials"] == 8
    assert os.getpid() not in data["a"]["pids"]              # the trials ran on the workers
    assert data["meta"]["command"].endswith(f"--executor dask --scheduler {cluster}")
