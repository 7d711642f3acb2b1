"""``python -m replica``: subcommands, --json, one-line errors with exit status 2."""
import json
import math
import subprocess
import sys

import pytest

from hcizz.cli import run_cli
from replica.__main__ import main


def _run(argv, capsys):
    rc = run_cli(main, argv, prog="python -m replica")
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv,key", [
    (["gaussian-max", "2", "1e15", "--json"], "results"),
    (["energy-G", "--t", "0.5", "--p", "100", "--samples", "40", "--json"], "value"),
    (["energy-G", "--t", "0.5", "--json"], "limit"),
    (["free-entropy", "--q", "0.4", "--alpha", "0.2", "--json"], "value"),
    (["saddle", "--alpha", "0.2", "--json"], "phi"),
    (["alpha-c-finite", "2", "1e15", "--samples", "500", "--json"], "results"),
    (["alpha-c-finite", "100", "--margin", "0.5", "--samples", "500", "--json"], "results"),
    (["tam-capacity", "--tau", "0.05", "0.5", "--json"], "results"),
    (["tam-capacity", "--tau", "0.05", "--p", "100", "--samples", "500", "--json"], "results"),
    (["tam-capacity", "--tau", "0.05", "--p", "1000", "--method", "expansion", "--json"], "results"),
    (["hebbian", "--d", "100", "--alpha", "0.05", "--json"], "p_all"),
])
def test_json_output(argv, key, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 0, err
    rec = json.loads(out)
    assert key in rec


def test_text_output(capsys):
    rc, out, _ = _run(["saddle", "--alpha", "0.2"], capsys)
    # q* = 2 alpha exactly in the large-p limit; compare the number, not its text
    q = float(out.split("q*=")[1].split()[0])
    assert rc == 0 and q == pytest.approx(0.4, abs=1e-12)
    rc, out, _ = _run(["gaussian-max", "2"], capsys)
    # E[max of 2 standard normals] = 1/sqrt(pi), E[M_2^2] = 1; the quadrature is
    # accurate to about 1e-12 relative (replica.gaussian_max_moments), and the text
    # prints 15 significant digits, so compare numbers, not strings.
    fields = dict(w.split("=") for w in out.split())
    assert fields["n"] == "2"
    assert float(fields["E[M_n]"]) == pytest.approx(1 / math.sqrt(math.pi), rel=1e-11)
    assert float(fields["E[M_n^2]"]) == pytest.approx(1.0, rel=1e-11)


@pytest.mark.parametrize("argv,word", [
    (["gaussian-max", "1"], "n must be"),
    (["energy-G", "--t", "1.0"], "t must be"),
    (["energy-G", "--t", "nan", "--p", "10"], "t must be"),
    (["free-entropy", "--q", "0.2", "--alpha", "-1"], "alpha must be"),
    (["saddle", "--alpha", "0.1", "--p", "1"], "p must be"),
    (["alpha-c-finite", "1.5"], "p must be"),
    (["hebbian", "--d", "0.5"], "d must be"),
    (["alpha-c-finite", "abc"], "invalid number"),
    (["alpha-c-finite", "1"], "got 1\n"),                 # echoes the value as typed, not 1.0
    (["gaussian-max", "1"], "got 1\n"),
    (["energy-G", "--t", "0.5", "--p", "1"], "got 1\n"),
    (["free-entropy", "--q", "0.2", "--alpha", "inf"], "alpha must be"),
    (["alpha-c", "--kappa", "0"], "kappa must be"),
    (["alpha-c-finite", "100", "--margin", "-1"], "margin must be"),
    (["alpha-c-finite", "100", "--margin", "nan"], "margin must be"),
    (["alpha-c-finite", "100", "1", "--margin", "0.5"], "p must be"),
    (["tam-capacity", "--tau", "0"], "tau must be"),
    (["tam-capacity", "--tau", "1.5"], "tau must be"),
    (["tam-capacity", "--tau", "0.1", "--p", "100", "--method", "expansion", "--samples", "100"],
     "--samples applies only with --method mc"),
    (["tam-capacity", "--tau", "0.1", "--margin", "-0.5"], "margin must be"),
    (["tam-capacity", "--tau", "0.1", "--p", "100", "1"], "p must be"),
    (["tam-capacity", "--tau", "0.1", "--p", "100", "--samples", "1"], "samples must be"),
    (["tam-capacity", "--tau", "0.5", "--p", "100", "1e15"], "order statistics"),
    (["tam-capacity", "--tau", "0.1", "--method", "exact"], "invalid choice"),
    (["alpha-c", "--kappa", "nan"], "got nan"),
    (["nosuchcommand"], "invalid choice"),
])
def test_errors_one_line_exit_2(argv, word, capsys):
    with pytest.raises(SystemExit) as exc:
        rc = run_cli(main, argv, prog="python -m replica")
        raise SystemExit(rc)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert word in err and err.count("\n") == 1


def test_module_entry_point_subprocess():
    r = subprocess.run([sys.executable, "-m", "replica", "gaussian-max", "0"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "n must be" in r.stderr


def _strict(text):
    """json.loads that rejects the non-standard NaN/Infinity tokens."""
    def bad(tok):
        raise ValueError(f"non-standard JSON constant {tok}")
    return json.loads(text, parse_constant=bad)


@pytest.mark.parametrize("argv", [
    ["saddle", "--alpha", "0.7", "--json"],                     # phi = -inf, q* = 1
    ["free-entropy", "--q", "0.5", "--alpha", "0.25", "--json"],
    ["alpha-c", "--kappa", "0.5", "1", "--dps", "20", "--check", "--json"],
])
def test_json_is_strict(argv, capsys):
    rc, out, err = _run(argv, capsys)
    assert rc == 0, err
    rec = _strict(out)
    if argv[0] == "saddle":
        assert rec["phi"] == "-inf" and rec["q"] == 1.0


def test_check_json_is_strict(monkeypatch, capsys):
    # cheap stand-in checks (the real sympy derivations run in test_symbolic*.py)
    import types

    from replica import symbolic
    fake = types.ModuleType("replica_fake_ok_checks")
    fake.CHECKS = [("one", lambda: (True, "1 = 1")), ("inf", lambda: (False, float("inf")))]
    monkeypatch.setitem(sys.modules, "replica_fake_ok_checks", fake)
    monkeypatch.setattr(symbolic, "CHECK_MODULES", ["replica_fake_ok_checks"])
    rc, out, _ = _run(["check", "--json"], capsys)
    rec = _strict(out)
    assert rc == 1 and rec["ok"] is False and [c["ok"] for c in rec["checks"]] == [True, False]


def test_tam_capacity_output(capsys):
    # the closed form: tau = 1 is Gardner's alpha_c = 2, printed to 6 decimals
    rc, out, _ = _run(["tam-capacity", "--tau", "1", "0.05", "--json"], capsys)
    rows = json.loads(out)["results"]
    assert rc == 0 and rows[0]["value"] == pytest.approx(2.0, abs=1e-15) and rows[0]["p"] is None
    rc, out, _ = _run(["tam-capacity", "--tau", "1", "--p", "50", "--samples", "4000"], capsys)
    fields = out.split()
    val = float(fields[fields.index("±") - 1].split("=")[1])
    err = float(fields[fields.index("±") + 1])
    assert rc == 0 and abs(val - 2.0) < 5 * err        # tau = 1: 2 at every p


def test_alpha_c_finite_margin_zero_prints_as_before(capsys):
    rc, a, _ = _run(["alpha-c-finite", "100", "--samples", "2000"], capsys)
    rc2, b, _ = _run(["alpha-c-finite", "100", "--samples", "2000", "--margin", "0"], capsys)
    assert rc == rc2 == 0 and a == b and "margin" not in a
    rc, c, _ = _run(["alpha-c-finite", "100", "--samples", "2000", "--margin", "0.5"], capsys)
    assert "margin=0.5" in c
