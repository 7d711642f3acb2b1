"""Fuzz harness of every entry point: ``python -m replica``, ``python -m validation``
(every subcommand) and ``python -m validation study NAME`` for every registered study.

Each example starts from a cheap valid command line of one subcommand and spoils
it: one value replaced, or one option added, drawn from numbers at the edges
(``0``, ``-1``, ``1e308``, ``nan``, ``inf``, ``1e-320``, twenty digits), empty
and malformed lists (``''``, ``'1,,2'``, ``','``, ``';'``, ``'1;2'``) and paths
that cannot take a file (a FIFO, ``/dev/null``, a folder, a file used as a
folder, a missing folder under ``/proc``, a read-only folder, a missing parent).
``main(argv)`` runs in this process, in a fresh temporary folder. Asserted for
every example:

* the exit status is 0 or 2 (or the call reached the first trial, see below),
  and no exception escapes (no ``Traceback`` on stderr);
* it ends within :data:`TIME_BOUND` seconds (the Hypothesis deadline; a
  ``SIGALRM`` at twice the bound turns a hang into a failure);
* on exit 2 stderr ends with one ``error:`` line and the folder is unchanged
  (every file's bytes, every folder, FIFO included).

What would compute is replaced by a stub raising ``_Accepted``: the engine's
``run_sweep`` (after checking its store as the real one does, and that the plan
has at most :data:`MAX_PLAN` trials), the study runner (replay and compute),
the token-retrieval runs, the factual-recall experiments, the report sections
and the sympy checks. Reaching a stub means every argument was accepted; the
experiments themselves are tested elsewhere. Hypothesis is derandomised
(``derandomize=True``, no example database), so every run draws the same
examples. A subprocess smoke subset runs the real interpreter on the hangs of
old (a FIFO store, a store on a pipe, a bad Dask address, a huge sample count).
``-m slow`` runs many more examples per entry point.

A read-only folder only refuses writes for a user other than root (root writes
anyway, and the call is then accepted: exit 0 or the stub).
"""
from __future__ import annotations

import contextlib
import datetime
import io
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hcizz.cli import run_cli

#: Seconds one example may take (the Hypothesis deadline).  A refusal takes well under a
#: second and the slowest accepted example (a study replay) about 10 s on an idle core; the bound
#: leaves room for a machine shared by several jobs (one replay took 31 s at load 8), and the
#: alarm at twice the bound still catches a hang.
TIME_BOUND = 60.0
#: Most trials a stubbed sweep accepts (a plan above it should have been refused).
MAX_PLAN = 100_000
#: Examples per entry point in the default run, and under ``-m slow``.
N_REPLICA, N_VALIDATION, N_STUDY = 100, 100, 10
N_SLOW = 300

EDGE_NUMBERS = ["0", "-1", "1e308", "-1e308", "nan", "inf", "-inf", "1e-320", "99999999999999999999",
                "0.5", "2"]
EDGE_LISTS = ["", "1,,2", ",", ";", "1;2", "0.3,", " ", "abc"]
EDGE_PATHS = ["fifo", "/dev/null", "folder", "notes.txt/x", "/proc/assocmem-fuzz/x.json", "ro/x.json",
              "missing/sub/x.jsonl", "", "notes.txt", "store.jsonl"]
EDGE = EDGE_NUMBERS + EDGE_LISTS + EDGE_PATHS

#: Cheap valid command lines, per entry point.
REPLICA = [
    ["gaussian-max", "10"],
    ["energy-G", "--t", "0.3"],
    ["energy-G", "--t", "0.3", "--p", "100", "--samples", "16"],
    ["free-entropy", "--q", "0.3", "--alpha", "0.3"],
    ["free-entropy", "--q", "0.3", "--alpha", "0.3", "--p", "10", "--samples", "16"],
    ["saddle", "--alpha", "0.3"],
    ["saddle", "--alpha", "0.3", "--p", "10", "--samples", "16"],
    ["alpha-c-finite", "100", "--samples", "16"],
    ["tam-capacity", "--tau", "0.5"],
    ["tam-capacity", "--tau", "0.5", "--p", "10", "--samples", "16"],
    ["hebbian", "--d", "20"],
    ["alpha-c", "--kappa", "0.5"],
    ["alpha-c", "--kappa", "0.5", "--dps", "20"],
    ["series", "--kappa-order", "3"],
    ["check"],
]
VALIDATION = [
    ["capacity", "--model", "op", "--d", "8", "--seeds", "1", "--alphas", "0.3", "--store", "new.jsonl"],
    ["capacity", "--model", "lowrank", "--kappa", "0.5", "--d", "8", "--seeds", "1", "--alphas", "0.3"],
    ["capacity", "--model", "op", "--method", "exact", "--d", "8", "--seeds", "1", "--alphas", "0.3"],
    ["token-retrieval", "phase", "--quick", "--N", "8", "--d", "8", "--L", "4", "--seeds", "1"],
    ["token-retrieval", "beta", "--quick"],
    ["factual-recall", "memory", "--quick", "--out", "res.json"],
    ["reproduce", "--quick", "--out", "rep", "--sections", "linear_memory"],
    ["sweep-status", "--store", "store.jsonl"],
    ["migrate-store", "store.jsonl"],
]
#: Options a spoiled call may add (flag, then its values), per entry point.
EXTRA = {
    "replica": ["--samples", "--seed", "--p", "--kappa", "--dps", "--margin", "--json"],
    "validation": ["--store", "--out", "--kappa", "--seeds", "--alphas", "--d", "--N", "--workers",
                   "--executor", "--scheduler", "--sections", "--seed", "--steps", "--eta"],
    "study": ["--store", "--workers", "--scheduler", "--replay", "--json"],
}


class _Accepted(Exception):
    """Raised by the stubs: the call got past every check to its first trial."""


def _stub(*args, **kw):
    raise _Accepted()


def _stub_run_sweep(fn, params, *, store=None, **kw):
    from validation.engine.store import check_store_file

    params = list(params)
    assert len(params) <= MAX_PLAN, f"a plan of {len(params)} trials reached the engine"
    if store is not None:
        if os.path.isdir(store):
            raise ValueError(f"store must be None or a file path, got {store!r:.80}")
        check_store_file(store)
    raise _Accepted()


@pytest.fixture
def stubs(monkeypatch):
    """Replace whatever would compute by ``_stub`` (see the module notes)."""
    install_stubs(monkeypatch)


def install_stubs(monkeypatch):
    """Install the stubs with ``monkeypatch.setattr`` (anything with that method)."""
    import types

    import validation.engine as engine
    import validation.factual_recall.experiments as fr
    import validation.report as report
    import validation.studies.base as base
    import validation.token_retrieval.experiments as tr
    from replica import symbolic

    monkeypatch.setattr(engine, "run_sweep", _stub_run_sweep)
    monkeypatch.setattr(base.Runner, "__call__", lambda self, params: _stub_run_sweep(None, params))
    for name in ("run_grid", "run_config", "orthogonal_contrast", "mlp_scan", "beta_scan"):
        monkeypatch.setattr(tr, name, _stub)
    for name in ("memory_capacity_experiment", "transformer_capacity_experiment",
                 "tradeoff_experiment", "sequential_experiment"):
        monkeypatch.setattr(fr, name, _stub)
    monkeypatch.setattr(report, "_load", lambda name: types.SimpleNamespace(TITLE="stub", build=_stub))
    monkeypatch.setattr(symbolic, "run_checks", lambda *a, **k: [{"name": "one", "ok": True, "detail": "1 = 1"}])


def _populate(root):
    (root / "notes.txt").write_text("# my notes\nnot a store\n")
    (root / "folder").mkdir()
    os.mkfifo(root / "fifo")
    (root / "ro").mkdir()
    head = {"format": "assocmem-trial-store", "version": 1, "created": "2026-01-01T00:00:00Z"}
    (root / "store.jsonl").write_text(json.dumps(head) + "\n")
    os.chmod(root / "ro", stat.S_IRUSR | stat.S_IXUSR)


def _snapshot(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = "dir"
        for name in filenames:
            p = os.path.join(dirpath, name)
            if stat.S_ISFIFO(os.lstat(p).st_mode):
                out[os.path.relpath(p, root)] = "fifo"
                continue
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def _alarm(signum, frame):
    raise TimeoutError(f"a command ran longer than {2 * TIME_BOUND:.0f} s (a hang?)")


def _run(main, prog, argv):
    """Run one command line in a fresh folder; check the properties of the module notes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _populate(root)
        before = _snapshot(root)
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(int(2 * TIME_BOUND))
        t0 = time.perf_counter()
        accepted = False
        try:
            os.chdir(tmp)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    rc = run_cli(main, argv, prog=prog)
                except SystemExit as exc:
                    rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except _Accepted:
                    rc, accepted = None, True
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
            os.chdir(cwd)
            os.chmod(root / "ro", stat.S_IRWXU)           # so that the folder can be removed
        seconds = time.perf_counter() - t0
        text = err.getvalue()
        assert "Traceback" not in text, (argv, text[-3000:])
        assert seconds < TIME_BOUND, (argv, seconds)
        if accepted:
            return "accepted"
        assert rc in (0, 2), (argv, rc, text[-3000:])
        if rc == 2:
            last = text.rstrip("\n").split("\n")[-1]
            assert "error:" in last and len(last) < 2000, (argv, text[-2000:])
            os.chmod(root / "ro", stat.S_IRUSR | stat.S_IXUSR)
            assert _snapshot(root) == before, (argv, "a refused call changed the folder")
            return "refused"
        return "ok"


@st.composite
def _spoiled(draw, templates, extras):
    """One template with one value replaced, or one option added (or both)."""
    argv = list(draw(st.sampled_from(templates)))
    kind = draw(st.sampled_from(["replace", "add", "both"]))
    if kind in ("replace", "both"):
        # a value: a positional or the word after an option (never the subcommand itself)
        spots = [i for i in range(1, len(argv)) if not argv[i].startswith("--")]
        if spots:
            argv[draw(st.sampled_from(spots))] = draw(st.sampled_from(EDGE))
    if kind in ("add", "both"):
        flag = draw(st.sampled_from(extras))
        if flag in ("--replay", "--json"):
            argv.append(flag)
        elif flag == "--scheduler":
            argv += ["--executor", "dask", "--scheduler",
                     draw(st.sampled_from(["not-a-url", "tcp://", "tcp://host:0", "tcp://host:99999", ""]))]
        else:
            argv += [flag, draw(st.sampled_from(EDGE))]
    return argv


def _fuzz(main, prog, templates, extras, n):
    seen = {"ok": 0, "refused": 0, "accepted": 0}

    @settings(max_examples=n, derandomize=True, database=None,
              deadline=datetime.timedelta(seconds=TIME_BOUND),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.data())
    def run(data):
        seen[_run(main, prog, data.draw(_spoiled(templates, extras)))] += 1

    run()
    print(f"{prog} {templates[0][:2]}: {seen}")
    return seen


def _study_templates(name):
    from validation.studies import get_study

    study = get_study(name)
    base = ["study", name]
    templates = [base + ["--store", "new.jsonl"], base + ["--replay"]]
    extras = EXTRA["study"] + [o.flag for o in study.options if o.kind is not bool]
    study.check_options()              # warm the plan caches outside the timed examples
    return templates, extras


def _study_names():
    from validation.studies import study_names

    return list(study_names())


def test_fuzz_replica(stubs):
    import replica.__main__ as rm

    seen = _fuzz(rm.main, "python -m replica", REPLICA, EXTRA["replica"], N_REPLICA)
    assert seen["refused"] > 0 and seen["ok"] > 0, seen       # both outcomes are exercised


def test_fuzz_validation(stubs):
    import validation.__main__ as vm

    seen = _fuzz(vm.main, "python -m validation", VALIDATION, EXTRA["validation"], N_VALIDATION)
    assert seen["refused"] > 0, seen


@pytest.mark.parametrize("name", _study_names())
def test_fuzz_study(stubs, name):
    import validation.__main__ as vm

    templates, extras = _study_templates(name)
    _fuzz(vm.main, "python -m validation", templates, extras, N_STUDY)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["replica", "validation"])
def test_fuzz_many(stubs, which):
    if which == "replica":
        import replica.__main__ as m

        _fuzz(m.main, "python -m replica", REPLICA, EXTRA["replica"], N_SLOW)
    else:
        import validation.__main__ as m

        _fuzz(m.main, "python -m validation", VALIDATION, EXTRA["validation"], N_SLOW)


@pytest.mark.slow
@pytest.mark.parametrize("name", _study_names())
def test_fuzz_study_many(stubs, name):
    import validation.__main__ as vm

    templates, extras = _study_templates(name)
    _fuzz(vm.main, "python -m validation", templates, extras, N_SLOW // 10)


def _replaced(template):
    """Every command line with one value of ``template`` replaced by one edge value."""
    spots = [i for i in range(1, len(template)) if not template[i].startswith("--")]
    for i in spots:
        for v in EDGE:
            yield template[:i] + [v] + template[i + 1:]


@pytest.mark.parametrize("prog, template", [("replica", t) for t in REPLICA]
                         + [("validation", t) for t in VALIDATION], ids=lambda x: "-".join(x)[:40]
                         if isinstance(x, list) else x)
def test_every_value_replaced(stubs, prog, template):
    # exhaustive companion of the random examples: each value of each template, each edge value
    import importlib

    main = importlib.import_module(prog + ".__main__").main
    for argv in _replaced(template):
        _run(main, f"python -m {prog}", argv)


@pytest.mark.slow
@pytest.mark.parametrize("name", _study_names())
def test_every_study_option_value(stubs, name):
    import validation.__main__ as vm
    from validation.studies import get_study

    study = get_study(name)
    study.check_options()
    base = ["study", name]
    lines = [base + ["--store", v] for v in EDGE] + [base + ["--replay", "--workers", v] for v in EDGE]
    lines += [base + ["--store", "new.jsonl", o.flag, v] for o in study.options if o.kind is not bool
              for v in EDGE]
    for argv in lines:
        _run(vm.main, "python -m validation", argv)


# each class of issue 25 that survived the layout migration, as it is refused now
@pytest.mark.parametrize("prog, argv, match", [
    ("replica", ["energy-G", "--t", "0.5", "--samples", "0"], "--samples applies only with --p"),
    ("replica", ["saddle", "--alpha", "0.3", "--seed", "3"], "--seed applies only with --p"),
    ("replica", ["saddle", "--alpha", "0.3", "--p", "100", "--samples", "100000000000"], "of memory"),
    ("replica", ["alpha-c-finite", "100", "--samples", "100000000000"], "of memory"),
    ("replica", ["free-entropy", "--q", "0.3", "--alpha", "0.3", "--p", "10", "--samples", "100000000000"],
     "of memory"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--kappa", "0.5", "--alphas", "0.3"],
     "kappa applies only to the models with a rank ratio"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--alphas", "1e308"], r"alphas must be .*1e\+06"),
    ("validation", ["capacity", "--model", "op", "--d", "20", "--alphas", "1e5"], "scores p\\^2"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--seeds", "100000000000"], "seeds must be"),
    ("validation", ["capacity", "--model", "op", "--d", "99999999999999999999"], "d must be"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--store", "notes.txt/x"], "store must be a path"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--store", "/proc/assocmem/x.jsonl"],
     "pseudo file system"),
    ("validation", ["capacity", "--model", "op", "--d", "8", "--workers", "99999"], "workers must be"),
    ("validation", ["reproduce", "--out", "rep", "--workers", "99999999999999999999"], "workers must be"),
    ("validation", ["reproduce", "--out", "rep", "--executor", "dask", "--scheduler", "not-a-url"],
     "scheduler must be an address"),
    ("validation", ["token-retrieval", "phase", "--quick", "--seeds", "100000000000"], "seeds must be"),
    ("validation", ["token-retrieval", "phase", "--quick", "--store", "folder"], "store must be a file"),
    ("validation", ["token-retrieval", "phase", "--quick", "--d", "6,,8"], "--d must be a comma-separated"),
    ("validation", ["study", "linear_memory.lowrank_finite_p", "--d", "100000000"], r"--d item must be .*400"),
    ("validation", ["study", "linear_memory.budget", "--seeds", "100000000000"], "--seeds must be"),
    ("validation", ["study", "linear_memory.budget", "--max-budget", "100000000000000"], "--max-budget must be"),
    ("validation", ["study", "linear_memory.margins", "--typical-samples", "100000000000"],
     "--typical-samples must be"),
    ("validation", ["study", "linear_memory.adaptive_design", "--target", "inf"], "--target must be"),
    ("validation", ["study", "linear_memory.exact_op", "--workers", "abc"], "--workers must be"),
    ("validation", ["study", "linear_memory.exact_op", "--executor", "dask", "--scheduler", "tcp://h:99999"],
     "scheduler must be an address"),
])
def test_issue25_classes(stubs, prog, argv, match):
    import importlib
    import re

    main = importlib.import_module(prog + ".__main__").main
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _populate(root)
        before = _snapshot(root)
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(tmp)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = run_cli(main, argv, prog=f"python -m {prog}")
        finally:
            os.chdir(cwd)
            os.chmod(root / "ro", stat.S_IRWXU)
        os.chmod(root / "ro", stat.S_IRUSR | stat.S_IXUSR)
        assert rc == 2 and err.getvalue().count("\n") == 1 and re.search(match, err.getvalue()), err.getvalue()
        assert _snapshot(root) == before
        os.chmod(root / "ro", stat.S_IRWXU)


# the hangs and late refusals of issue 25, in the real interpreter
@pytest.mark.parametrize("argv, match", [
    (["validation", "capacity", "--model", "op", "--d", "8", "--seeds", "1", "--alphas", "0.3", "--store", "fifo"],
     "FIFO"),
    (["validation", "study", "linear_memory.exact_op", "--executor", "dask", "--scheduler", "not-a-url"],
     "scheduler must be an address"),
    (["replica", "energy-G", "--t", "0.5", "--p", "100", "--samples", "100000000000"], "of memory"),
])
def test_smoke_subprocess(tmp_path, argv, match):
    _populate(tmp_path)
    before = _snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    r = subprocess.run([sys.executable, "-m"] + argv, cwd=tmp_path, capture_output=True, env=env,
                       timeout=120, stdin=subprocess.DEVNULL, text=True)
    os.chmod(tmp_path / "ro", stat.S_IRWXU)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and match in r.stderr, r.stderr
    assert _snapshot(tmp_path) == before


def test_store_on_a_pipe_is_refused(tmp_path):
    # --store /dev/stdout with stdout a pipe: refused (it blocked forever), nothing run
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    r = subprocess.run([sys.executable, "-m", "validation", "capacity", "--model", "op", "--d", "8", "--seeds",
                        "1", "--alphas", "0.3", "--store", "/dev/stdout"], cwd=tmp_path, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, text=True)
    assert r.returncode == 2 and "FIFO" in r.stderr and "Traceback" not in r.stderr, r.stderr
