"""The paper's protocol: its trial, its lean search, its criterion, and the paper code's runs."""
import itertools

import numpy as np
import pytest

from validation.factual_recall.search import (PAPER_LRS, largest_passed, next_paper_trial,
                                              paper_code_comparison, size_outcomes)
from validation.factual_recall.trials import paper_protocol_trial

SMALL = {"d": 8, "H": 2, "d_h": 4, "m": 8, "S": 3, "R": 3, "D": 2, "T": 5, "seed": 1,
         "variant": "paper", "lr": 0.01, "steps": 96, "batch": 32, "eval_every": 16, "n_test": 200}


def _run(S, lr, ok, step=128):
    return {"S": S, "R": S, "lr": lr, "passed": ok, "pass_step": step if ok else None}


def _walk(capacity, start, lrs=PAPER_LRS, passing_lr=None, max_sizes=40, step=1):
    """Drive the search against a monotone oracle: a size passes iff S <= capacity (at
    ``passing_lr`` only, when given); returns the runs."""
    runs = []
    while (nxt := next_paper_trial(runs, start, lrs=lrs, max_sizes=max_sizes, step=step)) is not None:
        S, lr = nxt
        ok = S <= capacity and (passing_lr is None or lr == passing_lr)
        runs.append(_run(S, lr, ok))
    return runs


def _bisection(capacity, lo, hi):
    """The bisection of the paper's code (written out here from its description): try the
    midpoint of [lo, hi], move lo up on a pass and hi down on a failure, return lo."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid <= capacity:
            lo = mid
        else:
            hi = mid
    return lo


@pytest.mark.parametrize("capacity,start,step",
                         list(itertools.product((1, 4, 9, 13), (1, 5, 13, 20), (1, 2, 3))))
def test_lean_search_finds_the_bisection_answer_of_a_monotone_oracle(capacity, start, step):
    # oracle: the paper code's bisection over [0, 64] on the same pass rule
    runs = _walk(capacity, start, step=step)
    out = largest_passed(runs)
    assert out.S == _bisection(capacity, 0, 64) == capacity
    assert out.bracketed and out.monotone and out.facts == capacity ** 2
    # a walk from the right start costs two sizes (one pass, one failure)
    if start == capacity and step == 1:
        assert sorted(out.sizes) == [capacity, capacity + 1]


def test_a_size_tries_every_rate_before_it_fails_and_stops_at_the_first_pass():
    runs = _walk(5, 5, passing_lr=0.001)
    tried = [(r["S"], r["lr"]) for r in runs]
    # size 5 passes only at the third rate: all three are tried, in order; size 6 fails all three
    assert tried == [(5, 0.01), (5, 0.003), (5, 0.001), (6, 0.01), (6, 0.003), (6, 0.001)]
    assert largest_passed(runs).lr == 0.001


def test_max_sizes_ends_a_path():
    runs = _walk(30, 1, max_sizes=3)
    assert sorted({r["S"] for r in runs}) == [1, 2, 3]
    assert not largest_passed(runs).bracketed


def test_non_monotone_outcomes_are_flagged():
    runs = [_run(5, lr, False) for lr in PAPER_LRS] + [_run(6, 0.01, True)]
    out = largest_passed(runs)
    assert out.S == 6 and not out.monotone and next_paper_trial(runs, 5) is None


def test_budget_reads_a_shorter_run_off_a_longer_one():
    runs = [_run(13, 0.003, False), _run(13, 0.01, True, step=1664),
            *[_run(14, lr, False) for lr in PAPER_LRS]]
    assert largest_passed(runs).S == 13
    # under 1024 steps the pass at 1664 is a failure, and 0.001 was never tried: pending
    assert size_outcomes(runs, budget=1024)[13] == (None, None)
    assert largest_passed(runs, budget=1024).S is None


def test_paper_code_runs_give_the_sizes_of_its_logs():
    """Exact small case: the committed runs of the paper's code against the largest passed
    sizes its bisection printed (13 at d = 16 and 27 at d = 32 for its seed 64) and the
    unfinished seed-0 search at d = 16 (14 passed, 16 failed at every rate, 15 not run)."""
    from validation.studies.factual_recall_paper import paper_code_runs

    code = paper_code_runs()
    assert code["meta"]["commit"] == "7c4d121d80b8ffd3c6a6ff65fd668f9d457dba7b"
    by = lambda d, seed: [r for r in code["runs"] if r["d"] == d and r["seed"] == seed]
    r16, r32, r16_0 = largest_passed(by(16, 64)), largest_passed(by(32, 64)), largest_passed(by(16, 0))
    assert (r16.S, r16.bracketed, r16.lr, r16.pass_step) == (13, True, 0.01, 1664)
    assert (r32.S, r32.bracketed, r32.lr, r32.pass_step) == (27, True, 0.003, 3968)
    assert (r16_0.S, r16_0.bracketed) == (14, False) and r16_0.sizes == {14: True, 16: False}
    rows = paper_code_comparison([((16, 8, 2, 16), [by(16, 64), by(16, 0)], [by(16, 64)])])
    assert rows[0].params == 1536 and rows[0].paper_code_S == [13, 14]
    assert rows[0].within_paper_range is True
    # at a quarter of the budget: 13 still passes (step 1664), 14 of seed 0 (step 12288) is pending
    rows = paper_code_comparison([((16, 8, 2, 16), [by(16, 64), by(16, 0)], [])], budgets=[4096])
    assert rows[0].paper_code_S == [13, None] and rows[0].paper_code_full_S == [13, 14]
    assert rows[0].paper_code[1].sizes == {14: None, 16: False}


@pytest.mark.parametrize("steps,stops", [(96, False), (400, True)])
def test_paper_trial_follows_the_test_rule(steps, stops):
    r = paper_protocol_trial(dict(SMALL, steps=steps))
    assert (r["steps"] < steps) == stops                   # both branches are exercised
    # checks every eval_every steps from 0, then one after the last update unless it stopped
    grid = list(range(0, steps, SMALL["eval_every"]))
    assert r["eval_steps"] == (grid[:len(r["eval_steps"])] if stops else grid + [steps])
    assert r["max_accuracy"] == max(r["accuracy"])
    assert r["passed"] == (r["max_accuracy"] >= 0.99)
    if stops:                                              # stopped: only at a check above 0.99
        assert all(a <= 0.99 for a in r["accuracy"][:-1])
        assert r["accuracy"][-1] > 0.99 and r["pass_step"] == r["steps"] == r["eval_steps"][-1]
    else:
        assert r["pass_step"] is None and not r["passed"]
    # accuracies are fractions of the n_test test sequences
    assert all(abs(a * SMALL["n_test"] - round(a * SMALL["n_test"])) < 1e-9 for a in r["accuracy"])


def test_paper_trial_rates_are_paired_and_budgets_are_prefixes():
    # same task, initialisation and test set at every rate: the check at step 0 agrees
    a = paper_protocol_trial(dict(SMALL, lr=0.01))
    b = paper_protocol_trial(dict(SMALL, lr=0.001))
    assert a["accuracy"][0] == b["accuracy"][0]
    # a shorter budget is a prefix of a longer run (same batches): same checks up to it
    short = paper_protocol_trial(dict(SMALL, lr=0.001, steps=48))
    assert short["accuracy"][:3] == b["accuracy"][:3]


def test_paper_trial_variants_differ_only_in_the_model():
    a = paper_protocol_trial(dict(SMALL, lr=0.003, steps=16))
    b = paper_protocol_trial(dict(SMALL, lr=0.003, steps=16, variant="ours"))
    assert a["facts"] == b["facts"] == 9 and a["params"] == b["params"]
    assert a["accuracy"] != b["accuracy"] or a["all_facts_accuracy"] != b["all_facts_accuracy"]
    with pytest.raises(ValueError, match="variant must be one of"):
        paper_protocol_trial(dict(SMALL, variant="flax"))


def test_paper_protocol_study_replays_without_computing():
    from validation.studies import get_study

    run = get_study("factual_recall.paper_protocol").run(compute=False, progress=False)
    s = run.outcome
    assert run.computed == 0 and run.missing == 0
    assert [(p.d, p.seed) for p in s.paths] == [(16, 0), (16, 1), (32, 0), (32, 1), (64, 0)]
    assert [p.outcome.S for p in s.paths] == [13, 13, 23, 26, 40] and s.pending == 0
    for p in s.paths:
        assert p.variant == "paper" and p.steps == 4096
        assert p.outcome.S is None or p.facts_per_param == p.outcome.S ** 2 / p.params
    # the paper code at this study's budget of 4096 steps: its seed-0 search at d = 16 passed
    # 14 only at step 12288 (rate 0.003) and never tried the other rates there: unresolved
    assert [(r.d, r.budget, r.paper_code_S) for r in s.comparison] == [(16, 4096, [None, 13]),
                                                                       (32, 4096, [27]), (64, 4096, [])]
    assert [r.paper_code_full_S for r in s.comparison] == [[14, 13], [27], []]
    assert np.isfinite(sum(p.cpu_seconds for p in s.paths))


def test_report_part_11_contract_keys(tmp_path):
    """Part 11 renders from the committed stores: report.json keys ``paper_model`` and
    ``ours_model_paper_protocol`` (one entry per path) and ``paper_code_comparison`` (one row per
    shape), JSON-serialisable."""
    import json

    from hcizz.jsonout import to_json_value
    from validation.sections import factual_recall_paper
    from validation.sections.base import Context

    md, data, figs = [], {}, []
    factual_recall_paper.render(Context(tmp_path, True), md, data, figs)
    data = to_json_value(data)
    json.dumps(data)
    assert len(data["paper_model"]) == 5 and len(data["paper_code_comparison"]["rows"]) == 3
    assert [p["variant"] for p in data["ours_model_paper_protocol"]] == ["ours"] * 5
    row = data["paper_code_comparison"]["rows"][0]
    assert {"paper_code_S", "ours_S", "paper_code_full_S", "budget", "within_paper_range"} <= set(row)
    assert data["paper_code_comparison"]["paper_code"]["commit"].startswith("7c4d121d")
    for p in data["paper_model"]:
        assert {"outcome", "facts_per_param", "steps", "runs"} <= set(p)
    text = "\n".join(md)
    assert "### 11." in text and "7c4d121d80b8" in text
