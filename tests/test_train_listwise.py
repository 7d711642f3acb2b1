"""Trained memories under the TAM criterion (validation.linear_memory.train_listwise)."""
import numpy as np
import pytest

from validation.linear_memory.data import Facts, make_dp, make_op
from validation.linear_memory.exact_listwise import (listwise_exact_trial, listwise_feasibility, listwise_margins,
                                                     verify_listwise_feasible)
from validation.linear_memory.train_listwise import listwise_trained_trial, tam_loss_and_grad, train_tam


def _tail_mean_loss(facts, W, tau, kappa, margin):
    """Independent loss: sorts every competitor row in full (no argpartition, no weights helper)."""
    E = np.asarray(facts.E, np.float64)
    U = np.asarray(facts.U, np.float64)
    E = E / np.sqrt(np.mean(E * E))
    U = U / np.sqrt(np.mean(U * U))
    p = E.shape[0]
    k = max(tau * (p - 1), 1.0)
    total = 0.0
    for mu in range(p):
        V = U if facts.kind == "op" else U[mu]
        z = V @ (W @ E[mu])
        comp = np.sort(np.delete(z, mu))[::-1]
        K = int(np.ceil(k))
        T = (comp[:K - 1].sum() + (k - (K - 1)) * comp[K - 1]) / k
        total += max(0.0, kappa + T - z[mu] + margin * np.linalg.norm(W)) ** 2
    return total / p


@pytest.mark.parametrize("kind,tau,margin", [("dp", 0.3, 0.0), ("op", 0.5, 0.2), ("dp", 0.05, 0.1)])
def test_gradient_matches_finite_differences(kind, tau, margin):
    # Oracle: central differences of an independently written loss. The loss is piecewise
    # quadratic; at a random W no tie in the tail order lies within h = 1e-6 (ties have measure 0),
    # so the central difference error is O(h^2 |L'''|) = 0 on each piece plus rounding
    # ~ eps |L| / h ~ 1e-10; 1e-6 relative leaves ample room.
    rng = np.random.default_rng(3)
    f = (make_dp if kind == "dp" else make_op)(12, 5, rng=rng, dtype=np.float64)
    W = rng.standard_normal((5, 5)) * 0.3
    loss, G, _ = tam_loss_and_grad(f, W, tau=tau, kappa=1.0, margin=margin)
    assert loss == pytest.approx(_tail_mean_loss(f, W, tau, 1.0, margin), rel=1e-12)  # same sum, rounding only
    h = 1e-6
    fd = np.zeros_like(W)
    for i in range(5):
        for j in range(5):
            Wp, Wm = W.copy(), W.copy()
            Wp[i, j] += h
            Wm[i, j] -= h
            fd[i, j] = (_tail_mean_loss(f, Wp, tau, 1.0, margin) - _tail_mean_loss(f, Wm, tau, 1.0, margin)) / (2 * h)
    assert loss > 0
    np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())


def test_trained_success_passes_the_independent_verifier():
    # Oracle: verify_listwise_feasible (sorted scores on the facts as given) and the exact
    # decision, which must call a trained success feasible.
    f = make_dp(20, 8, rng=1)                # load 20 / 64, exactly feasible (asserted below)
    r = train_tam(f, tau=0.1, rng=0)
    assert r["success"] and r["steps"] > 0
    v = verify_listwise_feasible(f, r["W"], criterion="tam", tau=0.1)
    assert v["ok"]
    assert v["margin"] == pytest.approx(r["margin"], rel=1e-9, abs=1e-12)  # same margin, two computations
    np.testing.assert_allclose(listwise_margins(f, r["W"], tau=0.1).min(), r["margin"], rtol=1e-9)
    assert listwise_feasibility(f, tau=0.1).feasible is True


def test_infeasible_instance_is_never_a_trained_success():
    # Oracle: the exact decision with a verified certificate of infeasibility; training cannot beat it.
    q = {"model": "dp", "d": 6, "n": 40, "tau": 0.05, "margin": 0.0, "seed": 0}
    ex = listwise_exact_trial({**q, "criterion": "tam"})
    assert ex["success"] is False and ex["verified"] is True
    tr = listwise_trained_trial({**q, "steps": 300})
    assert tr["success"] is False and tr["verified"] is None and tr["steps"] == 300
    assert 0 <= tr["fraction"] < 1


def test_trial_uses_the_exact_trials_facts():
    # The trial's facts are those of the exact trial: a trained success at a load where the exact
    # decision is feasible, margins identical when recomputed on the facts of the exact trial.
    q = {"model": "dp", "d": 8, "n": 10, "tau": 0.2, "margin": 0.0, "seed": 2}
    tr = listwise_trained_trial(q)
    assert tr["success"] and tr["verified"] is True and tr["p"] == 10
    assert listwise_exact_trial({**q, "criterion": "tam"})["success"] is True


def test_margin_target_is_met():
    f = make_dp(12, 8, rng=4)
    r = train_tam(f, tau=0.2, margin=0.3, rng=0)
    assert r["success"]
    assert verify_listwise_feasible(f, r["W"], tau=0.2, margin=0.3)["ok"]


@pytest.mark.parametrize("kw,match", [({"lr": 0}, "lr"), ({"steps": 0}, "steps"), ({"kappa": -1}, "kappa"),
                                      ({"margin": -0.1}, "margin"), ({"tau": 0}, "tau")])
def test_bad_arguments(kw, match):
    f = make_dp(5, 3, rng=0)
    args = {"tau": 0.5, **kw}
    with pytest.raises(ValueError, match=match):
        train_tam(f, **args)


def test_zero_data_refused():
    with pytest.raises(ValueError, match="nonzero"):
        tam_loss_and_grad(Facts("op", np.zeros((3, 2)), np.ones((3, 2))), np.eye(2), tau=0.5)


def test_study_plans_the_exact_studys_instances_and_checks_options():
    from validation.studies import get_study
    from validation.studies.linear_memory_listwise import ListwiseStudy

    s = get_study("linear_memory.listwise_trained")
    with pytest.raises(ValueError, match="--d"):
        s.check_options(ds="25")
    q = s.plan(ds=(20,), seeds=4, steps=100)
    for model in ("dp", "op"):
        for case in (("tam", 0.01, 0.0), ("tam", 0.05, 0.0), ("tam", 0.2, 0.0), ("tam", 0.05, 0.1)):
            ex = [r for r in ListwiseStudy().plan_d(model, 20)
                  if (r["criterion"], r["tau"], r["margin"]) == case and "inputs" not in r]
            mine = [r for r in q if (r["model"], r["tau"], r["margin"]) == (model,) + case[1:]]
            assert ex and {(r["n"], r["seed"]) for r in mine} == {(r["n"], r["seed"]) for r in ex}


def test_committed_trained_runs_never_beat_the_exact_decision():
    # Oracle: the exact decisions of linear_memory.listwise (verified certificates) on the same
    # instances. A trained success is a feasibility certificate, so "trained success, exact
    # infeasible" must never occur, and every trained success passed the independent verifier.
    from validation.studies import get_study

    run = get_study("linear_memory.listwise_trained").run(compute=False, progress=False)
    assert run.missing == 0
    for d, row in run.outcome.items():
        assert row.unverified == 0, d
        assert row.paired[0][1] == 0, d                       # trained only: impossible
        assert sum(map(sum, row.paired)) > 0, d               # the exact store covers some instances
        assert sum(c[2] for c in row.counts) == row.instances, d


@pytest.mark.parametrize("criterion,tau,margin,model", [("tam", 0.1, 0.0, "dp"), ("top1", None, 0.2, "op")])
def test_trained_capacity_never_beats_existence_on_the_same_instances(criterion, tau, margin, model):
    # A trained success is a verified memory, so on every instance it implies the exact
    # decision "feasible" (oracle: the convex solver with its independent certificate check).
    from validation.linear_memory.exact_listwise import measure_listwise_capacity
    from validation.linear_memory.train_listwise import measure_trained_listwise_capacity

    kw = dict(criterion=criterion, tau=tau, margin=margin, seeds=2, ns=[12, 20, 30], executor="inprocess",
              progress=False)
    trained = measure_trained_listwise_capacity(model, 8, **kw)
    exact = measure_listwise_capacity(model, 8, **kw)
    assert trained.method == "train" and exact.method == "exact"
    assert trained.trials == exact.trials == 6 and trained.unverified == 0 and trained.undecided == 0
    for (a, k_tr, n_tr), (b, k_ex, n_ex) in zip(trained.counts, exact.counts):
        assert a == b and n_tr == n_ex and k_tr <= k_ex


def test_trained_params_are_the_study_records():
    # The CLI's TAM records equal the study's, so a store seeded from the committed one reuses runs.
    from validation.linear_memory.train_listwise import trained_listwise_params
    from validation.studies.linear_memory_listwise_trained import ListwiseTrainedStudy

    plan = [q for q in ListwiseTrainedStudy().plan((20,), 2, 4000)
            if (q["model"], q["tau"], q["margin"]) == ("dp", 0.05, 0.0)]
    ns = sorted({q["n"] for q in plan})
    mine = trained_listwise_params("dp", 20, ns, range(2), tau=0.05, margin=0.0, steps=4000)
    key = lambda q: (q["seed"], q["n"])  # noqa: E731
    assert sorted(mine, key=key) == sorted(plan, key=key)


def test_top1_training_uses_a_tail_of_one():
    # criterion="top1" at margin 0 is plain top-1 recall: every fact's correct score above all competitors
    f = make_op(15, 8, rng=2, dtype=np.float64)
    r = train_tam(f, tau=None, criterion="top1", rng=0)
    if r["success"]:
        Z = (f.E @ r["W"].T) @ f.U.T
        assert np.all(np.argmax(Z, axis=1) == np.arange(15))
    with pytest.raises(ValueError, match="tau"):
        train_tam(f, tau=0.1, criterion="top1")


def test_cli_train_and_exact_refusals():
    import subprocess
    import sys
    base = [sys.executable, "-m", "validation", "capacity", "--d", "10", "--model", "dp", "--criterion", "tam",
            "--tau", "0.1"]
    for extra, word in [(["--design", "adaptive"], "--design"), (["--kappa", "0.5"], "--kappa"),
                        (["--method", "exact", "--steps", "10"], "--steps"),
                        (["--method", "train", "--lr", "-1"], "lr")]:
        r = subprocess.run(base + extra, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_alphas_with_tam_runs():
    # --alphas in n / d^2 for TAM: 0.3 * 64 = 19.2 -> 19 facts, 0.5 * 64 = 32 facts (this path refused
    # every --alphas before: the size check was given the whole list)
    import json
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "validation", "capacity", "--d", "8", "--model", "dp", "--criterion",
                        "tam", "--tau", "0.2", "--method", "train", "--alphas", "0.3,0.5", "--seeds", "1",
                        "--executor", "inprocess", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == "train" and [c[0] for c in out["counts"]] == [19 / 64, 32 / 64]
