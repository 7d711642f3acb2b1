"""Property tests of the command lines ``python -m replica`` and ``python -m validation``.

Hypothesis builds argument lists for every subcommand, read from the parsers
themselves (so an option added later is exercised too): values of the right
and of the wrong type, NaN, infinities, huge, negative and empty values,
missing, repeated and unknown options, and paths holding non-UTF-8 bytes
(surrogate-escaped, as Python hands them to ``main``). ``main()`` runs in this
process, in a fresh temporary working folder holding a text file, a binary
file, a valid store and a folder. Asserted for every example:

* the exit status is 0 or 2 and nothing escapes as an exception (no traceback);
* on exit 2 the last line of stderr is the one-line error, and no file or
  folder was created, changed or removed.

No example may start a long computation: the sample counts, ``--dps`` and sizes
that would be valid are drawn small, the sympy checks are replaced by a cheap
stand-in, and the functions that *run* an experiment (``run_sweep``, the
token-retrieval and factual-recall experiments, the report sections) are
replaced by a stub raising ``_WouldCompute``: reaching one means the
arguments were accepted (the experiment itself is tested elsewhere). Every
example also runs under a 60 s alarm. ``-m slow`` runs many more examples.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hcizz.cli import ArgumentParser, run_cli

N_FAST = 25     # examples per CLI in the default (CI) run: derandomized
N_SLOW = 600    # under -m slow

_BAD_NUMBERS = ["nan", "-nan", "inf", "-inf", "1e999", "-1e999", "1e308", "-1e308", "1e-320",
                "0", "-0", "-1", "-7", "10000000000000000000000000000000", "1e30", "abc", "",
                " ", "1,2", "0x10", "1/2", "１", "\udcff"]
_SMALL_INTS = ["1", "2", "3", "5", "8"]
_PATHS = ["notes.txt", "blob.bin", "store.jsonl", "folder", "new.jsonl", "sub/new.jsonl",
          "new_dir", "\udcff\udcfe.jsonl", "", ".", "notes.txt/x"]
_LISTS = ["1,2", "0.1,0.2", "4,8", "", ",", "a,b", "nan", "inf,1", "-1,2", "1e30", "0", "2,2,2"]


class _WouldCompute(Exception):
    """Raised by the stubs of the experiment runners: the arguments were accepted."""


def _stub(*args, **kw):
    raise _WouldCompute()


def _stub_run_sweep(fn, params, *, store=None, **kw):
    """``run_sweep`` up to its first trial: its store is checked (a non-store
    is refused before anything runs), then ``_WouldCompute``."""
    from validation.engine.store import check_store_file

    if store is not None:
        if os.path.isdir(store):
            raise ValueError(f"store must be None or a file path, got {store!r:.80}")
        check_store_file(store)
    raise _WouldCompute()


def _value_strategy(action):
    """Strings for one option's value, from the parser's own description of it."""
    dest = action.dest
    junk = st.text(max_size=4)
    if action.choices:
        return st.one_of(st.sampled_from(list(action.choices)), st.sampled_from(["bogus", "", "\udcff"]))
    tname = getattr(action.type, "__name__", None)
    if dest in ("store", "out"):
        return st.one_of(st.sampled_from(_PATHS), junk)
    if dest in ("alphas", "N", "d", "L", "sections") and tname is None:
        return st.one_of(st.sampled_from(_LISTS), junk)
    if dest == "samples":
        cheap = ["2", "16", "40"]
        return st.sampled_from(cheap + ["0", "1", "-3", "nan", "1e9", "abc"])
    if dest == "dps":
        return st.sampled_from(["5", "20", "0", "4", "-1", "100000000", "abc", "nan", "1.5"])
    if dest in ("workers",):
        return st.sampled_from(["1", "0", "-1", "abc", "1e99", "99999999999999999999"])
    if tname in ("int",):
        return st.one_of(st.sampled_from(_SMALL_INTS + _BAD_NUMBERS), junk)
    if tname in ("float", "number", "_decimal_text"):
        return st.one_of(st.sampled_from(["0.5", "0.3", "0.9", "1", "2", "10"] + _BAD_NUMBERS),
                         st.floats(allow_nan=True).map(repr), junk)
    return st.one_of(st.sampled_from(_PATHS + _BAD_NUMBERS), junk)


#: Cheap valid values per option (``dest`` or ``(command, dest)``): "mostly
#: valid" calls draw from these, so that accepted calls are exercised too.
_VALID = {
    "n": ["2", "10", "1000", "1e15"], "t": ["0", "0.3", "0.9", "0.999999"],
    "p": ["2", "10", "1000"], ("alpha-c-finite", "p"): ["2", "100", "1e15"],
    ("energy-G", "p"): ["2", "100", "1e15"], ("hebbian", "p"): ["2", "50"],
    "samples": ["2", "16", "40"], "seed": ["0", "1", "7"], "q": ["0", "0.3", "0.9"],
    "alpha": ["0.1", "0.3", "0.7"], ("hebbian", "alpha"): ["0.05", "0.2"],
    ("hebbian", "d"): ["20", "100"], "kappa": ["0.5", "1", "0.01", "1e-300"],
    "dps": ["5", "20", "60"], "tau": ["0.05", "0.5", "1"], ("tam-capacity", "p"): ["2", "10", "100"],
    "margin": ["0", "0.5", "2"],
    "d": ["8", "20", "100000"], ("token-retrieval", "d"): ["8", "16,32"],
    "seeds": ["1", "2"], "alphas": ["0.1,0.2", "0.3"], "store": ["new.jsonl", "store.jsonl", "sub/new.jsonl"],
    "steps": ["1", "10"], "workers": ["1"], "N": ["4,8", "16"], "L": ["4", "8"],
    "beta": ["1", "10"], "eta": ["0.1"], "m": ["4"], "vocab_ratio": ["1", "4"],
    "out": ["new_out", "sub/out.json"], ("sweep-status", "store"): ["store.jsonl", "new.jsonl"],
    ("reproduce", "sections"): ["linear_memory", "token_retrieval"],
}


def _valid_strategy(cmd, action):
    if action.choices:
        return st.sampled_from(list(action.choices))
    vals = _VALID.get((cmd, action.dest), _VALID.get(action.dest))
    return st.sampled_from(vals) if vals else _value_strategy(action)


def _parsers(mods):
    parser = ArgumentParser(prog="x")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in mods:
        importlib.import_module(name).register(sub)
    return sub.choices


@st.composite
def _argv(draw, mods):
    parsers = _parsers(mods)
    cmd = draw(st.sampled_from(sorted(parsers)))
    # half the calls are "mostly valid": required options present, values from
    # _VALID, and at most one value replaced by an arbitrary (often bad) one
    valid = draw(st.booleans())
    argv = [cmd]
    actions = [a for a in parsers[cmd]._actions if not isinstance(a, argparse._HelpAction)]
    spoil = draw(st.integers(0, 2 * len(actions))) if valid else -1
    for i, action in enumerate(actions):
        required = action.required or not action.option_strings
        if valid:
            if not required and not draw(st.booleans()):
                continue
            repeats = 1
        else:
            # required options are usually given (sometimes left out), others sometimes
            if not draw(st.booleans()) and not (required and draw(st.integers(0, 9)) > 0):
                continue
            repeats = 2 if draw(st.integers(0, 9)) == 0 else 1   # a repeated option
        for _ in range(repeats):
            if action.nargs == 0:
                argv.append(action.option_strings[0])
                continue
            nvals = 1 if action.nargs in (None, "?") else draw(st.integers(1, 3))
            strat = _valid_strategy(cmd, action) if valid and i != spoil else _value_strategy(action)
            vals = [draw(strat) for _ in range(nvals)]
            if action.option_strings:
                argv.append(draw(st.sampled_from(action.option_strings)))
            argv.extend(vals)
    if not valid and draw(st.integers(0, 14)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from(["--bogus", "-x", "--", "--help"])))
    return argv


def _snapshot(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = "dir"
        for name in filenames:
            p = os.path.join(dirpath, name)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _populate(root):
    (root / "notes.txt").write_text("# my notes\nnot a store\n")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)
    (root / "folder").mkdir()
    head = {"format": "assocmem-trial-store", "version": 1, "created": "2026-01-01T00:00:00Z"}
    rec = {"key": "k" * 64, "fn": "m:f", "params": {"x": 1}, "status": "ok", "result": {"y": 1}}
    (root / "store.jsonl").write_text(json.dumps(head) + "\n" + json.dumps(rec) + "\n")


def _alarm(signum, frame):
    raise TimeoutError("a CLI example ran longer than 60 s: an argument starts a long computation")


def _run_in(tmp, main, prog, argv):
    """Run ``main`` like ``python -m PROG`` does, in folder ``tmp``; return
    (status, stdout, stderr, would_compute)."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        os.chdir(tmp)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = run_cli(main, argv, prog=prog)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except _WouldCompute:
                return None, out.getvalue(), err.getvalue(), True
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
    return rc, out.getvalue(), err.getvalue(), False


@pytest.fixture
def stubs(monkeypatch):
    """Replace what would run a long computation by ``_stub`` (see module notes)."""
    import types

    import validation.engine as engine
    import validation.factual_recall.experiments as fr
    import validation.report as report
    import validation.token_retrieval.experiments as tr
    from replica import symbolic

    monkeypatch.setattr(engine, "run_sweep", _stub_run_sweep)
    for name in ("run_grid", "run_config"):
        monkeypatch.setattr(tr, name, _stub)
    for name in ("memory_capacity_experiment", "transformer_capacity_experiment",
                 "tradeoff_experiment", "sequential_experiment"):
        monkeypatch.setattr(fr, name, _stub)
    fake_section = types.SimpleNamespace(TITLE="stub", build=_stub)
    monkeypatch.setattr(report, "_load", lambda name: fake_section)
    fake = types.ModuleType("replica_fake_checks")
    fake.CHECKS = [("one", lambda: (True, "1 = 1"))]
    monkeypatch.setitem(sys.modules, "replica_fake_checks", fake)
    monkeypatch.setattr(symbolic, "CHECK_MODULES", ["replica_fake_checks"], raising=False)
    monkeypatch.setattr(symbolic, "run_checks", lambda *a, **k: [{"name": "one", "ok": True, "detail": "1 = 1"}])


def _check_example(main, prog, argv):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _populate(root)
        before = _snapshot(root)
        rc, out, err, computed = _run_in(tmp, main, prog, argv)
        assert "Traceback" not in err, (argv, err)
        if computed:
            return
        assert rc in (0, 2), (argv, rc, err[-2000:])
        if rc == 2:
            last = err.rstrip("\n").split("\n")[-1]
            assert "error:" in last and len(last) < 2000, (argv, err[-2000:])
            assert _snapshot(root) == before, (argv, "a refused call changed the folder")


def _property(mods, main, prog, n):
    @settings(max_examples=n, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                     HealthCheck.data_too_large])
    @given(st.data())
    def run(data):
        _check_example(main, prog, data.draw(_argv(mods)))
    run()


def test_replica_cli_property(stubs):
    import replica.__main__ as rm
    _property(rm.CLI_MODULES, rm.main, "python -m replica", N_FAST)


def test_validation_cli_property(stubs):
    import validation.__main__ as vm
    _property(vm.CLI_MODULES, vm.main, "python -m validation", N_FAST)


@pytest.mark.slow
def test_replica_cli_property_many(stubs):
    import replica.__main__ as rm
    _property(rm.CLI_MODULES, rm.main, "python -m replica", N_SLOW)


@pytest.mark.slow
def test_validation_cli_property_many(stubs):
    import validation.__main__ as vm
    _property(vm.CLI_MODULES, vm.main, "python -m validation", N_SLOW)


# explicit bad-input classes (each also a row of docs/reliability.md)
@pytest.mark.parametrize("prog, argv, match", [
    ("replica", ["alpha-c", "--kappa", "0.5", "--dps", "0"], "dps must be an integer"),
    ("replica", ["alpha-c", "--kappa", "nan"], "kappa must be"),
    ("replica", ["energy-G", "--t", "inf"], "t must be"),
    ("replica", ["hebbian", "--d", "-1"], "d must be"),
    ("validation", ["capacity", "--model", "op", "--d", "100000", "--seeds", "1", "--alphas", "0.5"],
     "needs at least .* of memory, more than the limit"),
    ("validation", ["token-retrieval", "phase", "--N", "100000000", "--d", "1000", "--L", "100"],
     "needs at least .* of memory"),
    ("validation", ["capacity", "--model", "op", "--d", "20", "--store", "notes.txt"], "not a trial store"),
    ("validation", ["capacity", "--model", "op", "--d", "4", "--alphas", "0.3", "--steps", "0"],
     "steps must be an integer >= 1"),
    ("validation", ["sweep-status", "--store", "notes.txt"], "not a trial store"),
    ("validation", ["sweep-status", "--store", "blob.bin"], "not a trial store"),
    ("validation", ["reproduce", "--sections", "nope", "--out", "new_dir"], "--sections items must be among"),
    ("validation", ["reproduce", "--out", "notes.txt"], "out must be a folder"),
    ("validation", ["reproduce", "--seed", "-1", "--out", "new_dir"], "seed must be"),
])
def test_bad_input_classes(prog, argv, match, stubs):
    import re

    main = importlib.import_module(prog + ".__main__").main
    with tempfile.TemporaryDirectory() as tmp:
        _populate(Path(tmp))
        before = _snapshot(tmp)
        rc, out, err, computed = _run_in(tmp, main, f"python -m {prog}", argv)
        assert not computed and rc == 2 and err.count("\n") == 1, err
        assert re.search(match, err), err
        assert _snapshot(tmp) == before


@pytest.mark.parametrize("argv", [
    [b"-m", b"validation", b"sweep-status", b"--store", b"\xff\xfe.jsonl"],
    [b"-m", b"validation", b"sweep-status", b"--store", b"notes\xff.txt"],
    [b"-m", b"replica", b"alpha-c", b"--kappa", b"0.\xff"],
])
def test_non_utf8_argv_in_a_real_process(tmp_path, argv):
    # the real interpreter: argv bytes that are not UTF-8 (surrogate-escaped by Python)
    _populate(tmp_path)
    (tmp_path / os.fsdecode(b"notes\xff.txt")).write_text("not a store\n")
    before = _snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    r = subprocess.run([os.fsencode(sys.executable)] + argv, cwd=tmp_path, capture_output=True, env=env,
                       timeout=120)
    assert r.returncode == 2 and b"Traceback" not in r.stderr, r.stderr
    assert r.stderr.count(b"\n") == 1 and b"error:" in r.stderr
    assert _snapshot(tmp_path) == before
