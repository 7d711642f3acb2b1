"""``reproduce`` runs every section's sweeps on one WorkerPool and records per-section
wall and CPU time in ``report.json`` ``meta`` (docs/sweeps.md#one-pool-for-many-sweeps)."""
import json
import subprocess
import sys
import types

import pytest

from validation import report as rep
from validation.engine import _demo_trials as demo
from validation.engine import run_sweep


def _sweep_section(key, seen):
    mod = types.ModuleType(f"fake_{key}")
    mod.KEY, mod.TITLE = key, f"Fake {key}"

    def build(ctx):
        recs = run_sweep(demo.import_probe, [{"i": i, "k": key} for i in range(4)],
                         executor=ctx.executor, workers=2, progress=False)
        lst = run_sweep(demo.lstsq_trial, [{"seed": s, "n": 300, "d": 80, "reps": 3, "k": key}
                                           for s in range(2)],
                        executor=ctx.executor, progress=False)
        seen[key] = {"pids": sorted({r["result"]["pid"] for r in recs}),
                     "cpu": recs.stats.cpu_seconds + lst.stats.cpu_seconds}
        return rep.SectionResult(f"{key} done", {"resid": lst[0]["result"]["resid"]})

    mod.build = build
    return mod


@pytest.fixture
def sweep_sections(monkeypatch):
    seen, mods = {}, {}
    monkeypatch.setattr(rep, "SECTIONS", [("a", "fake_a"), ("b", "fake_b")])
    monkeypatch.setattr(rep, "_load", lambda name: mods[name])
    mods.update(fake_a=_sweep_section("a", seen), fake_b=_sweep_section("b", seen))
    return seen


def test_all_sections_share_one_pool_and_meta_has_their_costs(tmp_path, sweep_sections):
    seen = sweep_sections
    data = rep.reproduce(tmp_path / "r", quick=True)
    meta = data["meta"]
    # one start for the whole run; both sections' trials ran on the same (<= 2) processes
    assert meta["pool"]["starts"] == 1 and meta["pool"]["trials"] == 12
    assert set(seen["a"]["pids"]) & set(seen["b"]["pids"])
    assert len(set(seen["a"]["pids"]) | set(seen["b"]["pids"])) <= 2
    for key in ("a", "b"):
        c = meta["sections"][key]
        assert c["cached"] is False and c["wall_seconds"] > 0
        # the workers' share is the CPU time the workers measured inside this section's
        # trials (no other child process exists here); rusage is exact to ~1 us
        assert c["cpu_seconds_workers"] == pytest.approx(seen[key]["cpu"], abs=1e-6)
        assert c["cpu_seconds"] == pytest.approx(c["cpu_seconds_main"] + c["cpu_seconds_workers"])
    # the total is measured after the pool stopped: it contains every worker's whole CPU
    # time (start-up included), so it is at least the sum of the sections (10 ms: rusage
    # rounding of several processes)
    assert meta["total_cpu_seconds"] >= sum(c["cpu_seconds"] for c in meta["sections"].values()) - 0.01
    assert meta["total_wall_seconds"] == meta["total_seconds"] > 0
    # a rerun reuses both sections: marked cached, no pool started
    again = rep.reproduce(tmp_path / "r", quick=True)
    assert all(c["cached"] for c in again["meta"]["sections"].values())
    assert again["meta"]["pool"]["starts"] == 0
    assert again["a"] == data["a"]


def test_shared_pool_results_equal_in_process_results(tmp_path, sweep_sections):
    # the same sections run in the report process give the same bits as on the pool
    one = rep.reproduce(tmp_path / "one", quick=True)
    per = rep.reproduce(tmp_path / "inproc", quick=True, executor="inprocess")
    assert json.dumps(one["a"]) == json.dumps(per["a"]) and json.dumps(one["b"]) == json.dumps(per["b"])
    assert per["meta"]["pool"]["executor"] == "inprocess"
    assert per["meta"]["command"].endswith("--executor inprocess")


@pytest.mark.parametrize("kw, match", [({"workers": 0}, "workers must be"),
                                       ({"executor": "threads"}, "executor must be one of"),
                                       ({"scheduler": "tcp://h:1"}, "scheduler is only used")])
def test_bad_pool_settings_write_nothing(tmp_path, sweep_sections, kw, match):
    with pytest.raises(ValueError, match=match):
        rep.reproduce(tmp_path / "r", quick=True, **kw)
    assert not (tmp_path / "r").exists()


def test_cli_bad_workers_is_one_line_exit_2(tmp_path):
    out = tmp_path / "r"
    p = subprocess.run([sys.executable, "-m", "validation", "reproduce", "--quick", "--out", str(out),
                        "--workers", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "workers" in p.stderr and not out.exists()
