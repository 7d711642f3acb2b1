"""A memory model is declared once: a toy model registered in one place (the fixture)
is trainable, measurable and listed by the CLI with no other edit."""
import json

import numpy as np
import pytest

from hcizz.cli import run_cli
from validation.__main__ import main
from validation.linear_memory.capacity import capacity_trial, measure_capacity, trial_params
from validation.linear_memory.data import make_op
from validation.linear_memory.registry import (MEMORY_MODELS, MemoryModel, Parametrization,
                                               get_model, get_parametrization, model_names,
                                               register_model, unregister_model)
from validation.linear_memory.registry import prediction
from validation.linear_memory.train import train

#: the toy model's declared theory (a constant, so the plumbing can be checked exactly)
TOY_THEORY = {"half": 0.5, "value": 0.0123, "stderr": 0.0, "name": "toy constant"}


def _diag_init(facts, kappa, cfg, rng):
    return [np.ones(facts.d, dtype=facts.E.dtype)]          # W = I at initialisation


@pytest.fixture
def toy():
    """A diagonal memory ``W = diag(w)``: the one place the toy model is declared."""
    par = Parametrization("toy-diagonal", init=_diag_init, memory=lambda prm: np.diag(prm[0]),
                          grads=lambda prm, dW: [np.diag(dW).copy()],
                          description="diagonal W (test only)")
    model = register_model(MemoryModel("toy", "op", par, lambda d, kappa: dict(TOY_THEORY),
                                       help="diagonal W on OP facts (test toy)", grid=(3, 0.5)))
    try:
        yield model
    finally:
        unregister_model("toy")
    assert "toy" not in MEMORY_MODELS                         # cleaned up


def test_builtin_declarations():
    # the four models of docs/linear_memory.md#model, as that table states them
    assert model_names()[:4] == ("op", "dp", "lowrank", "hebbian")
    table = {n: (get_model(n).facts, get_model(n).parametrization.name, get_model(n).needs_kappa)
             for n in ("op", "dp", "lowrank", "hebbian")}
    assert table == {"op": ("op", "full", False), "dp": ("dp", "full", False),
                     "lowrank": ("op", "lowrank", True), "hebbian": ("op", "hebbian", False)}
    assert not get_parametrization("hebbian").trained
    assert [m.name for m in MEMORY_MODELS.values() if m.exact] == ["op", "dp"]


def test_registration_errors(toy):
    with pytest.raises(ValueError, match="already registered"):
        register_model(toy)
    with pytest.raises(ValueError, match="model must be one of"):
        get_model("nope")
    other = Parametrization("full", init=_diag_init, memory=lambda prm: prm[0], grads=None)
    with pytest.raises(ValueError, match="parametrization name 'full'"):
        register_model(MemoryModel("toy2", "op", other, lambda d, k: TOY_THEORY))
    with pytest.raises(ValueError, match="facts must be"):
        register_model(MemoryModel("toy3", "xx", toy.parametrization, lambda d, k: TOY_THEORY))
    assert "toy2" not in MEMORY_MODELS and "toy3" not in MEMORY_MODELS


def test_toy_is_trainable(toy):
    # p = 2 facts in d = 12: recalling both with a diagonal W means two linear
    # inequalities in w (one competitor each), feasible with probability 1 for
    # Gaussian facts, and the cross-entropy drives Adam into the feasible cone
    f = make_op(2, 12, rng=3, dtype=np.float32)
    for model in ("toy-diagonal", toy.parametrization):        # by name or by object
        res = train(f, parametrization=model, rng=0, steps=500)
        assert res.success and res.steps < 500
        # the toy's parametrisation was used: off-diagonal entries stay exactly zero
        assert np.count_nonzero(res.W - np.diag(np.diag(res.W))) == 0
        assert np.array_equal(res.W0, np.eye(12, dtype=np.float32))


def test_toy_is_measurable(toy):
    assert prediction("toy", 10) == TOY_THEORY
    rec = trial_params("toy", 10, [0.05], [0])
    assert rec == [{"model": "toy", "d": 10, "alpha": 0.05, "seed": 0, "preset": "default"}]  # no kappa
    r = capacity_trial({**rec[0], "steps": 200})
    assert r["p"] >= 2 and isinstance(r["success"], bool)
    res = measure_capacity("toy", 10, seeds=2, alphas=[0.02, 0.4], executor="inprocess",
                           progress=False, steps=200)
    assert res["model"] == "toy" and res["theory"] == TOY_THEORY
    assert [c[2] for c in res["counts"]] == [2, 2] and res["trials"] == 4
    # the automatic grid is the declared one: 3 loads at 0.0123 * [0.5, 1, 1.5]
    # (rounded to loads of integer p, merged where two round to the same p)
    auto = measure_capacity("toy", 10, seeds=1, extend=0, executor="inprocess", progress=False,
                            steps=50)
    assert 1 <= len(auto["counts"]) <= 3
    assert all(0.0123 * 0.5 - 0.02 < c[0] < 0.0123 * 1.5 + 0.02 for c in auto["counts"])


def test_toy_is_listed_by_the_cli(toy, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["capacity", "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())          # argparse wraps the help text
    assert "{op,dp,lowrank,hebbian,toy}" in out and "toy: diagonal W on OP facts (test toy)" in out
    rc = run_cli(main, ["capacity", "--model", "toy", "--d", "8", "--seeds", "2", "--alphas", "0.03",
                        "--steps", "100", "--executor", "inprocess", "--json"],
                 prog="python -m validation")
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["model"] == "toy" and res["theory"]["name"] == "toy constant"


def test_unregistered_toy_is_gone_from_the_cli(capsys):
    # without the fixture the CLI refuses the name (one line, exit 2)
    with pytest.raises(SystemExit) as exc:
        main(["capacity", "--model", "toy", "--d", "5"])
    assert exc.value.code == 2 and "--model" in capsys.readouterr().err
