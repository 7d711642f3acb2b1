"""run_sweep: resume, crash safety (SIGKILL), duplicates, failures, executors."""
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from validation.engine import read_store, run_sweep, trial_key
from validation.engine import _demo_trials as demo
from validation.engine.progress import Progress, format_seconds
from validation.token_retrieval.trials import train_trial


def _run(fn, params, **kw):
    kw.setdefault("executor", "inprocess")
    kw.setdefault("progress", False)
    return run_sweep(fn, params, **kw)


def test_results_aligned_with_params():
    params = [{"x": x} for x in (3, -1, 0.5, 2)]
    recs = _run(demo.square, params)
    assert [r["result"]["y"] for r in recs] == [9, 1, 0.25, 4]
    assert [r["params"] for r in recs] == params
    assert all(r["fn"] == "validation.engine._demo_trials:square" for r in recs)
    assert recs.stats.n_computed == 4 and recs.stats.store is None


def test_duplicates_computed_once(tmp_path):
    log = str(tmp_path / "log")
    p = [{"i": i, "log": log} for i in (0, 1, 0, 2, 1, 0)]
    # a duplicate written with another key order / numpy scalar is the same trial
    import numpy as np
    p.append({"log": log, "i": np.int64(2)})
    recs = _run(demo.counted, p, store=tmp_path / "s.jsonl")
    assert sorted(e["i"] for e in demo.read_log(log)) == [0, 1, 2]
    assert [r["result"]["i"] for r in recs] == [0, 1, 0, 2, 1, 0, 2]
    assert recs[0] == recs[2] == recs[5] and recs[0] is not recs[2]
    assert recs.stats.n_unique == 3 and recs.stats.n_computed == 3
    assert len(read_store(tmp_path / "s.jsonl").records) == 3


def test_resume_skips_finished_trials(tmp_path):
    log, store = str(tmp_path / "log"), tmp_path / "sub" / "s.jsonl"
    p = [{"i": i, "log": log} for i in range(6)]
    first = _run(demo.counted, p[:4], store=store)
    again = _run(demo.counted, p, store=store)
    assert [e["i"] for e in demo.read_log(log)] == [0, 1, 2, 3, 4, 5]  # none recomputed
    assert list(again[:4]) == list(first)  # the stored records, timestamps included
    assert again.stats.n_skipped == 4 and again.stats.n_computed == 2
    third = _run(demo.counted, p, store=store)
    assert third.stats.n_computed == 0 and list(third) == list(again)
    assert len(demo.read_log(log)) == 6


def test_store_shared_by_two_trial_functions(tmp_path):
    store = tmp_path / "s.jsonl"
    a = _run(demo.square, [{"i": 3, "x": 3}], store=store)
    b = _run(demo.counted, [{"i": 3, "x": 3}], store=store)
    assert b.stats.n_skipped == 0  # same params, other function: not a store hit
    assert a[0]["key"] != b[0]["key"]
    assert a[0]["result"] == {"y": 9} and b[0]["result"] == {"i": 3, "y": 9}


def test_failure_recorded_sweep_goes_on_rerun_retries_only_failures(tmp_path):
    log, fix, store = str(tmp_path / "log"), str(tmp_path / "fixed"), tmp_path / "s.jsonl"
    p = [{"i": i, "fail": i in (1, 4), "log": log, "fix": fix} for i in range(6)]
    recs = _run(demo.flaky, p, store=store)
    assert [r["status"] for r in recs] == ["ok", "error", "ok", "ok", "error", "ok"]
    err = recs[1]["error"]
    assert err["type"] == "ValueError" and err["message"] == "trial 1 failed on purpose"
    assert "raise ValueError" in err["traceback"]
    assert "result" not in recs[1]
    assert recs.stats.n_failed == 2
    open(fix, "w").close()  # the bug is fixed: failures now succeed
    recs2 = _run(demo.flaky, p, store=store)
    assert [e["i"] for e in demo.read_log(log)] == [0, 1, 2, 3, 4, 5, 1, 4]
    assert [r["status"] for r in recs2] == ["ok"] * 6
    assert recs2.stats.n_retried == 2 and recs2.stats.n_computed == 2
    scan = read_store(store)
    assert len(scan.ok) == 6 and not scan.failed and len(scan.records) == 8


def test_bad_result_is_a_failure():
    (rec,) = _run(demo.bad_result, [{"i": 0}])
    assert rec["status"] == "error" and rec["error"]["type"] == "TypeError"
    assert "set" in rec["error"]["message"]


def _unimportable(p):
    return p


_unimportable.__module__ = "no_such_module_for_engine_tests"


@pytest.mark.parametrize("kw, match", [
    ({"executor": "threads"}, "executor must be one of"),
    ({"workers": 0}, "workers must be an integer in \\[1, 1024\\]"),
    ({"workers": 1.5}, "workers must be an integer in \\[1, 1024\\]"),
    ({"params": [{"x": float("nan")}]}, r"params\[0\]\['x'\].*JSON"),
    ({"params": [{"x": 1}, {"x": {1}}]}, r"params\[1\]\['x'\].*JSON"),
    ({"params": [3]}, r"params\[0\] must be a dict"),
    ({"params": {"x": 1}}, "params must be a list"),
    ({"fn": lambda p: p}, "fn must be an importable module-level function.*lambda"),
    ({"fn": functools.partial(demo.square)}, "fn must be an importable"),
    ({"fn": 3}, "fn must be an importable"),
    ({"fn": _unimportable}, "fn must be an importable.*cannot be imported"),
    ({"store": 3}, "store must be None or a file path"),
    ({"store": "."}, "store must be None or a file path"),
    ({"scheduler": "tcp://localhost:8786"}, "scheduler is only used by executor='dask'"),
    ({"label": None}, "label must be a str"),
])
def test_bad_arguments_raise_value_error(kw, match):
    args = {"fn": demo.square, "params": [{"x": 1}], "executor": "inprocess",
            "progress": False}
    args.update(kw)
    fn, params = args.pop("fn"), args.pop("params")
    with pytest.raises(ValueError, match=match):
        run_sweep(fn, params, **args)


def test_nested_function_rejected():
    def inner(p):
        return p
    with pytest.raises(ValueError, match="fn must be an importable.*nested"):
        run_sweep(inner, [{}], executor="inprocess")


def test_missing_dask_is_a_value_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ValueError, match=r"pip install -e \.\[dask\]"):
        run_sweep(demo.square, [{"x": 1}], executor="dask", progress=False)


# ----------------------------------------------------------------- progress
def test_progress_lines_and_summary(capsys, tmp_path):
    store = tmp_path / "s.jsonl"
    _run(demo.square, [{"x": 1}], store=store)
    _run(demo.flaky, [{"i": 0, "fail": True}], store=store)
    run_sweep(demo.square, [{"x": i} for i in range(3)] + [{"x": 0}], store=store,
              executor="inprocess", label="grid")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("grid: 2 trials to run (1 of 3 already in store")
    assert err[1].startswith("grid: 1/2 (50%)")
    assert err[-1].startswith("grid: finished 4 trials (1 duplicates): 2 computed ok, "
                              "1 from store, 0 failed; wall ")
    run_sweep(demo.square, [{"x": 1}], executor="inprocess", progress=False)
    assert capsys.readouterr().err == ""


def test_progress_rate_eta_and_throttle():
    import io
    t = [0.0]
    out = io.StringIO()
    bar = Progress(10, label="L", stream=out, interval=0.5, clock=lambda: t[0])
    for k in range(4):
        t[0] = 0.5 * (k + 1)
        bar.update()
    # 4 done in 2.0 s: 2 trials/s, 6 left -> ETA 3 s
    assert bar.line() == "L: 4/10 (40%) 2 trials/s, elapsed 2.0s, ETA 3.0s"
    n_lines = len(out.getvalue().splitlines())
    t[0] = 2.1
    bar.update(failed=True)  # 0.1 s after the last line: throttled
    assert len(out.getvalue().splitlines()) == n_lines == 4
    assert bar.line().endswith(", 1 failed")
    assert format_seconds(75.2) == "1m15s" and format_seconds(7300) == "2h01m"


# ----------------------------------------------------------------- processes
def test_processes_pin_blas_threads_and_match_inprocess(tmp_path, monkeypatch):
    from validation.engine.executors import BLAS_ENV_VARS
    for k in BLAS_ENV_VARS:  # the user asked for 3 threads: workers must still get 1
        monkeypatch.setenv(k, "3")
    env_before = {k: os.environ.get(k) for k in BLAS_ENV_VARS}
    params = [{"seed": s, "n": 120, "d": 40, "reps": 2} for s in range(5)]
    ref = _run(demo.lstsq_trial, params)
    two = _run(demo.lstsq_trial, params, executor="processes", workers=2)
    one = _run(demo.lstsq_trial, params, executor="processes", workers=1,
               store=tmp_path / "s.jsonl")
    for a, b, c in zip(ref, two, one):
        assert json.dumps(a["result"]) == json.dumps(b["result"]) == json.dumps(c["result"])
        assert a["key"] == b["key"] == c["key"]
    env = _run(demo.env_probe, [{"i": i} for i in range(2)], executor="processes", workers=2)
    for r in env:
        assert r["result"]["env"] == {k: "1" for k in r["result"]["env"]}
        assert r["result"]["pid"] != os.getpid()
    assert {k: os.environ.get(k) for k in BLAS_ENV_VARS} == env_before  # parent restored


# ----------------------------------------------------------------- SIGKILL
CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from validation.engine import run_sweep
    from validation.engine._demo_trials import counted

    if __name__ == "__main__":
        store, log, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
        params = [{"i": i, "sleep": 0.05, "log": log} for i in range(n)]
        run_sweep(counted, params, store=store, executor="processes", workers=2,
                  progress=False)
""")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and SIGKILL")
def test_sigkill_mid_sweep_then_resume_loses_and_recomputes_nothing(tmp_path):
    n = 40
    store, log = tmp_path / "s.jsonl", str(tmp_path / "log")
    script = tmp_path / "crash.py"
    script.write_text(CRASH_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(store), log, str(n)])
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            # the header line + 6 records
            if store.exists() and store.read_bytes().count(b"\n") >= 7:
                break
            assert proc.poll() is None, "sweep ended before it could be killed"
            time.sleep(0.01)
        else:
            pytest.fail("sweep made no progress")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    # the orphaned workers notice their parent is gone and exit
    worker_pids = {e["pid"] for e in demo.read_log(log)}
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in worker_pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in worker_pids)

    scan = read_store(store)
    done_before = {r["params"]["i"]: r for r in scan.ok.values()}
    assert 6 <= len(done_before) < n and not scan.failed
    n_log = len(demo.read_log(log))

    params = [{"i": i, "sleep": 0.05, "log": log} for i in range(n)]
    recs = run_sweep(demo.counted, params, store=store, executor="inprocess", progress=False)
    rerun = [e["i"] for e in demo.read_log(log)[n_log:]]
    assert sorted(rerun) == sorted(set(range(n)) - set(done_before))  # each missing one once
    for i, rec in done_before.items():
        assert recs[i] == rec  # finished before the kill: kept, not recomputed
    assert [r["result"]["y"] for r in recs] == [i * i for i in range(n)]
    after = read_store(store)
    assert len(after.ok) == n and after.n_ok_lines == n and not after.failed
    assert all(r["key"] == trial_key(p, demo.counted) for r, p in zip(recs, params))


def test_lost_worker_fails_only_its_trial_and_pool_restarts(tmp_path):
    p = [{"i": i, "die": i == 2} for i in range(6)]
    recs = _run(demo.die, p, executor="processes", workers=1, store=tmp_path / "s.jsonl")
    assert [r["status"] for r in recs] == ["ok", "ok", "error", "ok", "ok", "ok"]
    assert recs[2]["error"]["type"] == "BrokenProcessPool"
    assert recs.stats.n_failed == 1
    assert list(read_store(tmp_path / "s.jsonl").failed.values()) == [recs[2]]


def test_engine_import_is_light():
    # worker processes import validation.engine to unpickle run_trial: keep
    # scipy & co out of it (they cost seconds of start-up per worker)
    code = "import sys, validation.engine.executors; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_non_finite_results_are_kept(tmp_path):
    store = tmp_path / "s.jsonl"
    (rec,) = _run(demo.square, [{"x": 1e200}], store=store)  # 1e400 overflows to inf
    assert rec["status"] == "ok" and rec["result"]["y"] == float("inf")
    (back,) = read_store(store).records
    assert back["result"]["y"] == float("inf")


def test_train_trial_is_deterministic():
    # the benchmark's real training trial: same params, same bits
    p = {"seed": 3, "N": 4, "d": 8, "L": 3, "steps": 5}
    a, b = train_trial(dict(p)), train_trial(dict(p))
    a.pop("import_seconds"), b.pop("import_seconds")
    assert json.dumps(a) == json.dumps(b) and 0 <= a["train_acc"] <= 1


def test_read_store_bad_path(tmp_path):
    with pytest.raises(ValueError, match="^path must be a str or Path"):
        read_store(3)
    with pytest.raises(ValueError, match="^path must be a store file, got the directory"):
        read_store(tmp_path)
