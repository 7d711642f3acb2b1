"""report.md's "reproduce this row" commands retrain exactly the row they name."""
import json
import math
import shlex


from hcizz.cli import run_cli
from validation.__main__ import main
from validation.sections.base import Context
from validation.sections import linear_memory as section
from validation.studies import linear_memory_capacity as capacity_study

#: A tiny version of the quick configuration: one OP group at d = 10 (a few seconds).
TINY = {"ds": [10], "groups": [("op", None)], "seeds": 2, "hebbian_seeds": 2, "n_loads": 4,
        "paper": [], "mech_d": 10, "workers": 1, "steps": 512}


def test_row_command_reproduces_the_row(tmp_path, monkeypatch, capsys):
    for k, v in TINY.items():
        monkeypatch.setitem(capacity_study.CONFIGS["quick"], k, v)
    import matplotlib

    matplotlib.use("Agg")
    res = section.build(Context(out=tmp_path, quick=True))
    row = res.data["rows"][0]
    assert row["command"] in res.markdown
    argv = shlex.split(row["command"])
    assert argv[:4] == ["python", "-m", "validation", "capacity"]
    capsys.readouterr()
    rc = run_cli(main, argv[3:] + ["--executor", "inprocess"], prog="python -m validation")
    out = capsys.readouterr().out
    assert rc == 0
    rec = json.loads(out)
    # same trials (deterministic per seed and load), hence the same counts and fit, exactly
    assert rec["counts"] == row["counts"]
    assert rec["trials"] == row["trials"]
    assert any(0 < k < n for _, k, n in row["counts"]) or len({k == n for _, k, n in row["counts"]}) == 2
    for k in ("threshold", "ci_low", "ci_high"):
        assert rec[k] == row[k] and math.isfinite(row[k])
