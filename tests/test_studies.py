"""The study protocol (validation.studies.base) and the study command (python -m validation study)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from validation.engine import read_store, trial_key
from validation.studies import all_studies, get_study
from validation.studies.base import Option, Study

ROOT = Path(__file__).resolve().parent.parent


def _tree(path):
    return sorted((p.relative_to(path).as_posix(), p.stat().st_size) for p in Path(path).rglob("*"))


def test_every_study_is_named_once_with_a_registered_trial():
    studies = all_studies()
    assert studies and len(studies) == len({s.name for s in studies.values()})
    for name, s in studies.items():
        assert s.name == name and s.title and s.docs.startswith("docs/")
        assert getattr(s.trial, "__trial_name__", None), f"{name}: its trial has no stable name"
        if s.stored is not None:
            assert s.committed_store().name == f"{name}.jsonl", name    # committed store named after the study
            assert s.committed_store().is_file(), name


def test_every_committed_record_is_found_by_its_study():
    # nothing committed is orphaned by the move: a replay of each study with its default options
    # finds every planned trial, and every committed ok record belongs to the study's plan
    for name, s in all_studies().items():
        if s.stored is None:
            continue
        run = s.run(compute=False, progress=False)              # missing="raise": LookupError if not found
        assert run.missing == 0 and run.computed == 0, name
        ok = read_store(s.committed_store(), warn=False).ok
        if type(s).execute is Study.execute or hasattr(s, "plan_d"):
            # a study with a choice option (a model variant) may commit the runs of every choice
            planned = set()
            for o in [o for o in s.options if o.choices] or [None]:
                for c in (o.choices if o else [None]):
                    opts = s.check_options(**({} if o is None else {o.name: c}))
                    planned |= {trial_key(q, s.trial) for q in s.plan(**opts)}
            assert set(ok) <= planned, f"{name}: {len(set(ok) - planned)} committed records outside the plan"


def test_replay_computes_nothing_and_compute_starts_from_the_committed_store(tmp_path, monkeypatch):
    s = get_study("linear_memory.exact_dp")
    before = _tree(s.committed_store().parent)
    rep = s.run(compute=False, progress=False)
    planned = 7 * 8 + 7 * 8 + 5 * 8 + 6 * 24 + 5 * 12 + 5 * 12  # d = 20, 30, 40, 60, 80, 100: loads x seeds of PLAN
    assert rep.reused == rep.trials == planned and rep.compute is False
    monkeypatch.chdir(tmp_path)
    run = s.run(compute=True, executor="inprocess", progress=False)
    # the default store is in the working folder, a copy of the committed one: nothing recomputed
    assert Path(run.store) == tmp_path / "linear_memory.exact_dp.jsonl"
    assert run.computed == 0 and run.reused == planned
    assert _tree(s.committed_store().parent) == before                 # the package is not written to
    assert run.outcome[20].threshold == pytest.approx(rep.outcome[20].threshold, abs=0)


def test_options_are_checked_before_anything_is_read(tmp_path):
    s = get_study("linear_memory.exact_op")
    with pytest.raises(ValueError, match="--d must be planned dimensions"):
        s.run(ds=(25,))
    with pytest.raises(ValueError, match="not an option of study linear_memory.exact_op"):
        s.run(seeds=3)
    with pytest.raises(ValueError, match="workers must be an integer in \\[1, 1024\\]"):
        s.run(workers=0)
    with pytest.raises(ValueError, match="store must be an existing store to replay"):
        s.run(store=tmp_path / "none.jsonl")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="must be a regular file"):
        s.run(compute=True, store=fifo)                       # would block forever if opened
    with pytest.raises(ValueError, match="must be a file, got the folder"):
        s.run(compute=True, store=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_option_checks():
    o = Option("ds", "--d", int, (20,), "dims", many=True, low=2)
    assert o.check("20,30") == (20, 30) and o.check([40]) == (40,)
    for bad, match in [("", "non-empty"), ("20,,30", "without empty items"), ("20,x", "item 'x'"),
                       ("1", r"--d item must be an integer >= 2")]:
        with pytest.raises(ValueError, match=match):
            o.check(bad)
    f = Option("lr", "--lr", float, 0.1, "rate", low=0, low_open=True)
    assert f.check("0.01") == 0.01
    with pytest.raises(ValueError, match="--lr must be a real number > 0"):
        f.check("0")


def test_command_names_only_what_differs_from_the_defaults():
    s = get_study("linear_memory.exact_op")
    assert s.command() == "python -m validation study linear_memory.exact_op"
    assert s.command(ds=(20, 30)) == "python -m validation study linear_memory.exact_op --d 20,30"


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "validation", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_cli_lists_replays_and_refuses_in_one_line(tmp_path):
    r = _cli("study", "--list", cwd=tmp_path)
    assert r.returncode == 0 and "linear_memory.exact_op" in r.stdout
    r = _cli("study", "linear_memory.exact_dp", "--replay", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["study"] == "linear_memory.exact_dp" and out["reused"] == 7 * 8 + 7 * 8 + 5 * 8 + 6 * 24 + 5 * 12 + 5 * 12 and out["computed"] == 0
    for args, msg in [(("study", "nope"), "study must be one of"),
                      (("study", "linear_memory.exact_op", "--d", "20,,30"), "without empty items"),
                      (("study", "linear_memory.exact_op", "--bogus", "1"), "unrecognized arguments"),
                      (("study", "linear_memory.exact_op", "--workers", "0"), "--workers must be"),
                      (("study", "linear_memory.exact_op", "--store", str(tmp_path)), "got the folder")]:
        r = _cli(*args, cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and msg in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []                     # nothing written by a refused call
