"""Symbolic registry: every derivation passes; a failing or crashing check is reported."""
import importlib
import sys
import types

import pytest

from replica import symbolic
from replica.__main__ import main


def test_registry_shape():
    assert "replica.symbolic.full_rank" in symbolic.CHECK_MODULES
    for modname in symbolic.CHECK_MODULES:
        mod = importlib.import_module(modname)
        assert mod.CHECKS and all(isinstance(n, str) and callable(f) for n, f in mod.CHECKS)


def test_all_checks_pass(monkeypatch):
    # the full-rank derivations; the rank-constrained ones run in test_symbolic_rank.py
    monkeypatch.setattr(symbolic, "CHECK_MODULES", ["replica.symbolic.full_rank"])
    res = symbolic.run_checks()
    names = {r["name"] for r in res}
    for needed in ["q* = 2 alpha", "alpha_c = 1/2", "E[V_2] = 1/4", "f_p(0) = 1/p", "1/8"]:
        assert any(needed in n for n in names), needed
    bad = [r for r in res if not r["ok"]]
    assert not bad, bad


def test_failures_are_reported(monkeypatch, capsys):
    fake = types.ModuleType("replica_fake_checks")
    fake.CHECKS = [("wrong: 1 = 2", lambda: (False, "1 != 2")),
                   ("crash", lambda: 1 / 0)]
    monkeypatch.setitem(sys.modules, "replica_fake_checks", fake)
    monkeypatch.setattr(symbolic, "CHECK_MODULES", ["replica_fake_checks"])
    res = symbolic.run_checks()
    assert [r["ok"] for r in res] == [False, False]
    assert "ZeroDivisionError" in res[1]["detail"]
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] wrong: 1 = 2" in out
