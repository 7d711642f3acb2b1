"""``python -m validation capacity``: JSON output, store reuse, usage errors."""
import json
import pytest

from hcizz.cli import run_cli
from validation.__main__ import main


def _run(argv, capsys):
    rc = run_cli(main, argv, prog="python -m validation")
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_json_output_hebbian(capsys, tmp_path):
    store = tmp_path / "s.jsonl"
    argv = ["capacity", "--model", "hebbian", "--d", "12", "--seeds", "6", "--executor", "inprocess",
            "--alphas", "0.01,0.05,0.2,0.4", "--store", str(store), "--json"]
    rc, out, err = _run(argv, capsys)
    assert rc == 0
    res = json.loads(out)
    for k in ("threshold", "ci_low", "ci_high", "theory", "counts"):
        assert k in res
    assert [c[2] for c in res["counts"]] == [6, 6, 6, 6]
    assert res["counts"][0][1] == 6 and res["counts"][-1][1] == 0   # tiny load recalled, 0.4 not
    assert res["theory"]["value"] > 0
    assert "capacity hebbian d=12" in err                             # progress on stderr
    n = len(store.read_text().splitlines())
    rc, out2, _ = _run(argv, capsys)                                   # rerun: reuses the store
    assert rc == 0 and len(store.read_text().splitlines()) == n
    assert json.loads(out2)["counts"] == res["counts"]


def test_text_output_op(capsys):
    rc, out, _ = _run(["capacity", "--model", "op", "--d", "8", "--seeds", "2", "--alphas", "0.3,3",
                       "--steps", "300", "--executor", "inprocess"], capsys)
    assert rc == 0
    assert "empirical threshold" in out and "alpha_c_finite" in out
    assert "2/2" in out and "0/2" in out


@pytest.mark.parametrize("argv, msg", [
    (["--model", "lowrank", "--d", "10", "--kappa", "1.5"], "kappa"),
    (["--model", "lowrank", "--d", "10"], "kappa"),
    (["--model", "op", "--d", "1"], "d must"),
    (["--model", "op", "--d", "10", "--seeds", "0"], "seeds"),
    (["--model", "op", "--d", "10", "--alphas", "0.5,x"], "alphas"),
])
def test_bad_arguments(argv, msg, capsys):
    rc, out, err = _run(["capacity"] + argv + ["--executor", "inprocess"], capsys)
    assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_dp_too_large_is_a_clean_error(capsys):
    rc, _, err = _run(["capacity", "--model", "dp", "--d", "3000", "--alphas", "1.0",
                       "--seeds", "1", "--executor", "inprocess"], capsys)
    assert rc == 2 and "p=" in err and "d=3000" in err


def test_unknown_model_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["capacity", "--model", "xx", "--d", "5"])
    assert exc.value.code == 2 and "--model" in capsys.readouterr().err


def test_failed_trial_is_one_line_exit_1(monkeypatch, capsys):
    """A trial that fails inside a sweep (not bad input) ends the command with one
    line on stderr and exit status 1, not a traceback."""
    from hcizz.cli import run_cli
    from validation.__main__ import main
    from validation.linear_memory import capacity

    def failing(*a, **k):
        raise RuntimeError("1 trial(s) failed, first: {'type': 'MemoryError'}\nlong traceback")

    monkeypatch.setattr(capacity, "measure_capacity", failing)
    rc = run_cli(main, ["capacity", "--model", "op", "--d", "8"], prog="python -m validation")
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and "1 trial(s) failed" in err
