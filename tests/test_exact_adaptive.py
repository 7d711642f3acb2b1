"""The adaptive design on exact decisions (``measure_capacity(method="exact", design="adaptive")``).

Oracles: the store itself (every decision is re-read from the JSONL file and refitted by
:func:`fit_threshold`, independently of the measurement's own bookkeeping), the
certificates' independent checks (``verified``), a resumed run (nothing recomputed, the
same path) and the committed ``linear_memory.exact_adaptive`` run at d = 150 against its
targets.
"""
import json
import math

import pytest

from validation.linear_memory.capacity import measure_capacity
from validation.logistic import fit_threshold
from validation.studies import get_study
from validation.studies.linear_memory_exact import ADAPTIVE


def _records(path):
    rows = [json.loads(line) for line in open(path)]
    return [r for r in rows if "params" in r and r["status"] == "ok"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    store = tmp_path_factory.mktemp("ad") / "s.jsonl"
    m = measure_capacity("op", 12, method="exact", design="adaptive", ci_halfwidth=0.05, max_trials=24,
                         batch=2, store=str(store), executor="inprocess", progress=False)
    return m, store


def test_every_trial_is_a_certified_decision_and_the_fit_is_the_stores(small):
    m, store = small
    recs = _records(store)
    assert m.method == "exact" and m.design == "adaptive" and m.trials == len(recs) <= 24
    assert all(r["fn"] == "linear_memory.exact" for r in recs)
    res = [r["result"] for r in recs]
    assert all(r["verified"] and r["success"] in (True, False) for r in res)
    assert m.certificates["verified"] is True and m.certificates["verified_count"] == m.trials
    fit = fit_threshold([r["load"] for r in res], [r["success"] for r in res])
    assert (m.threshold, m.ci_low, m.ci_high) == (fit.threshold, fit.ci_low, fit.ci_high)
    # the design stops only on its target (after min_trials, confirmed) or at the cap
    hw = (m.ci_high - m.ci_low) / 2
    assert (m.stop == "target" and hw <= 0.05) or (m.stop == "max_trials" and m.trials == 24)
    # one new seed per trial, in the order run, from seed0 = 0
    assert sorted(r["params"]["seed"] for r in recs) == list(range(m.trials))


def test_a_rerun_on_the_store_recomputes_nothing_and_follows_the_same_path(small):
    m, store = small
    n = len(open(store).readlines())
    again = measure_capacity("op", 12, method="exact", design="adaptive", ci_halfwidth=0.05, max_trials=24,
                             batch=2, store=str(store), executor="inprocess", progress=False)
    assert len(open(store).readlines()) == n
    assert again.history == m.history and again.threshold == m.threshold


@pytest.mark.parametrize("kw, msg", [({"steps": 100}, "training options have no meaning"),
                                     ({"ci_halfwidth": 0.0}, "ci_halfwidth must be"),
                                     ({"max_trials": 0}, "max_trials must be")])
def test_refusals_before_any_trial(kw, msg, tmp_path):
    store = tmp_path / "s.jsonl"
    args = {"ci_halfwidth": 0.05, "max_trials": 10, **kw}
    with pytest.raises(ValueError, match=msg):
        measure_capacity("op", 12, method="exact", design="adaptive", store=str(store), progress=False, **args)
    assert not store.exists()


def test_the_study_summarises_its_own_run(tmp_path):
    s = get_study("linear_memory.exact_adaptive")
    store = tmp_path / "ea.jsonl"
    run = s.run(compute=True, store=str(store), executor="inprocess", progress=False, ds=(10,), models=("op",))
    r = run.outcome["op", 10]
    # the new store starts as a copy of the committed one: keep this run's records (d = 10)
    recs = [q for q in _records(store) if q["params"]["d"] == 10]
    assert r.trials == len(recs) == r.verified and sum(c[2] for c in r.counts) == r.trials
    assert r.rounds[-1]["trials"] == r.trials and r.halfwidth == pytest.approx((r.ci_high - r.ci_low) / 2)
    # seeds from ADAPTIVE["seed0"] on, one per trial
    assert sorted(q["params"]["seed"] for q in recs) == list(range(ADAPTIVE["seed0"], ADAPTIVE["seed0"] + r.trials))
    # the wall span lies between the slowest decision and the sum of all of them
    secs = [q["result"]["seconds"] for q in recs]
    assert max(secs) - 1e-6 <= r.wall_seconds <= sum(secs) + 5.0
    rep = s.run(compute=False, store=str(store), progress=False, ds=(10,), models=("op",))
    assert rep.computed == 0 and rep.outcome["op", 10].threshold == r.threshold


@pytest.mark.parametrize("model", ["op", "dp"])
def test_committed_d150_threshold_meets_its_target(model):
    # the committed runs of `benchmarks/bench_exact.py --adaptive 150 [--model dp]`
    # (docs/linear_memory.md#exact-capacity)
    s = get_study("linear_memory.exact_adaptive")
    run = s.run(compute=False, progress=False, models=(model,))
    r = run.outcome[model, 150]
    assert run.computed == 0 and r.stop == "target"
    assert r.halfwidth <= ADAPTIVE["ci_halfwidth"] and r.verified == r.trials <= ADAPTIVE["max_trials"]
    # refitted straight from the committed JSONL
    res = [q["result"] for q in _records(s.committed_store()) if q["params"]["model"] == model]
    assert len(res) == r.trials
    fit = fit_threshold([q["load"] for q in res], [q["success"] for q in res])
    assert (fit.threshold, fit.ci_low, fit.ci_high) == (r.threshold, r.ci_low, r.ci_high)
    assert math.isfinite(r.wall_seconds) and r.wall_seconds > 0


def test_docs_table_is_the_committed_store():
    # docs/linear_memory.md, between <!-- exact-adaptive --> and <!-- /exact-adaptive -->:
    # every printed number recomputed from the replayed study (printed to 4 decimals: half a unit
    # of the last digit; minutes to 0.1; CPU seconds to 1)
    from pathlib import Path

    from docs_tables import interval, table_rows

    page = Path(__file__).resolve().parents[1] / "docs" / "linear_memory.md"
    rows = [r for r in table_rows(page, "exact-adaptive") if r[1].isdigit()]
    out = get_study("linear_memory.exact_adaptive").run(compute=False, progress=False).outcome
    assert {(r[0].lower(), int(r[1])) for r in rows} == set(out)
    for model, d, thr, hw, theory, dec, rounds, wall, cpu in rows:
        r = out[model.lower(), int(d)]
        t, lo, hi = interval(thr)
        assert max(abs(t - r.threshold), abs(lo - r.ci_low), abs(hi - r.ci_high)) <= 5e-5
        assert abs(float(hw) - r.halfwidth) <= 5e-5 and abs(float(theory) - r.theory) <= 5e-5
        assert dec == f"{r.trials} ({r.verified})" and int(rounds) == len(r.rounds)
        assert abs(float(wall) - r.wall_seconds / 60) <= 0.05
        assert cpu == f"{r.cpu_seconds:.0f} ({r.cpu_seconds_max:.0f})"
    # the OP - DP sentence of the finite-size section
    o, q = out["op", 150], out["dp", 150]
    se = math.hypot(o.halfwidth, q.halfwidth) / 1.96
    text = page.read_text()
    assert f"OP - DP = {o.threshold - q.threshold:+.3f} ± {se:.3f}, {(o.threshold - q.threshold) / se:.1f} standard" in text
    assert q.ci_low <= q.theory <= q.ci_high and not o.ci_low <= o.theory <= o.ci_high
