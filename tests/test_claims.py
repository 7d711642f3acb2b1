"""The claims ledger: verdicts computed from a prediction and an interval, rows read from report.json."""
import math

import pytest

from validation.sections.claims import (CLAIM_KEYS, enough_points, exact_verdict, ledger,
                                        ledger_markdown, slug, verdict)

Z = 1.959963984540054   # the 97.5 % normal quantile (scipy.stats.norm.ppf(0.975) to 16 digits)


def test_interval_containing_the_prediction_agrees():
    assert verdict(0.5, (0.45, 0.55)) == "agrees"
    assert verdict(0.45, (0.45, 0.55)) == "agrees"          # closed interval: the end counts
    assert verdict(0.55, (0.45, 0.55)) == "agrees"


def test_difference_and_sigma_count_by_hand():
    # interval [0.858, 0.870] -> s = 0.012 / (2 z); estimate 0.862, prediction 0.844:
    # X = +0.018, k = 0.018 / s = 0.018 * 2 z / 0.012 = 3 z = 5.88 -> "5.9"
    assert verdict(0.844, (0.858, 0.870), estimate=0.862) == "differs by +0.018 (5.9 sigma)"
    # below: X = 0.40 - 0.50 = -0.10, s = 0.02 / (2 z), k = 0.10 * z / 0.01 = 10 z = 19.6
    assert verdict(0.5, (0.39, 0.41)) == "differs by -0.100 (19.6 sigma)"


def test_prediction_stderr_widens_the_interval_and_enters_sigma():
    # interval [0.50, 0.52] misses 0.53 by 0.01; with a theory stderr 0.01 it is widened by
    # z * 0.01 = 0.0196 > 0.01 on each side, so it agrees
    assert verdict(0.53, (0.50, 0.52)).startswith("differs")
    assert verdict(0.53, (0.50, 0.52), prediction_stderr=0.01) == "agrees"
    # k combines both errors: s = 0.01 / z, sigma_th = 0.005, X = 0.51 - 0.55 = -0.04
    k = 0.04 / math.hypot(0.01 / Z, 0.005)
    assert verdict(0.55, (0.50, 0.52), prediction_stderr=0.005) == f"differs by -0.040 ({k:.1f} sigma)"


def test_bounds():
    assert verdict(4.0, (2.39, 2.71), kind="at_most") == "below the bound"
    assert verdict(2.0, (2.39, 2.71), kind="at_most") == "above the bound"
    assert verdict(2.5, (2.39, 2.71), kind="at_most").startswith("not decided")
    assert verdict(2.0, (2.39, 2.71), kind="at_least") == "above the bound"
    assert verdict(3.0, (2.39, 2.71), kind="at_least") == "below the bound"


def test_not_decided_cases_say_why():
    assert verdict(1.0, None) == "not decided: no confidence interval (a single run)"
    assert verdict(None, (0, 1)) == "not decided: no prediction"
    assert verdict(1.0, (0.9, 1.1), n_points=3, n_params=2) == \
        "not decided: 3 points for 2 parameters (a fit needs at least 4)"
    assert verdict(1.0, (0.9, 1.1), n_points=4, n_params=2) == "agrees"
    assert enough_points(5, 3) and not enough_points(4, 3) and not enough_points(None, 0)


def test_bad_input():
    with pytest.raises(ValueError, match="kind"):
        verdict(1.0, (0, 2), kind="equals")
    with pytest.raises(ValueError, match="low <= high"):
        verdict(1.0, (2, 0))


def test_exact_verdict_uses_the_theory_stderr():
    e = {"theory": 0.907, "theory_stderr": 0.0005, "threshold": 0.959, "ci": [0.923, 0.973]}
    assert exact_verdict(e).startswith("differs by +0.052")


def _report():
    return {
        "theory": {"alpha_c": {"limit": 0.5}, "hebbian": {"limit": 0.125}},
        "linear_memory": {
            "rows": [
                {"model": "op", "d": 30, "preset": "default", "threshold": 0.95, "ci_low": 0.92, "ci_high": 0.99},
                {"model": "dp", "d": 30, "preset": "default", "threshold": 0.93, "ci_low": 0.89, "ci_high": 0.98},
                {"model": "hebbian", "d": 30, "preset": "default", "threshold": 0.056, "ci_low": 0.048,
                 "ci_high": 0.065, "theory": 0.050}],
            "exact": {"60": {"theory": 0.878, "theory_stderr": 4e-4, "threshold": 0.877, "ci": [0.855, 0.919],
                             "trained_ci": None},
                      "100": {"theory": 0.844, "theory_stderr": 3e-4, "threshold": 0.862, "ci": [0.858, 0.870],
                              "trained_threshold": 0.837, "trained_ci": [0.818, 0.855]}},
        },
    }


def test_ledger_rows_from_report_values():
    rows = ledger(_report())
    assert all(tuple(r) == CLAIM_KEYS for r in rows)
    by = {r["claim"].split(" (")[0].split(",")[0]: r for r in rows}
    ex = next(r for r in rows if r["claim"].startswith("existence threshold"))
    assert ex["theory"] == 0.844 and ex["ci"] == [0.858, 0.870]
    assert ex["verdict"] == exact_verdict(_report()["linear_memory"]["exact"]["100"])
    assert "agrees at 1 of 2 sizes" in ex["claim"]                 # d = 60 agrees, d = 100 does not
    opdp = next(r for r in rows if r["claim"].startswith("OP and DP"))
    # OP - DP = 0.02, half-widths 0.035 and 0.045 combined in quadrature
    hw = math.hypot(0.035, 0.045)
    assert opdp["measured"] == pytest.approx(0.02) and opdp["ci"] == pytest.approx([0.02 - hw, 0.02 + hw])
    assert opdp["verdict"] == "agrees"
    train = next(r for r in rows if r["claim"].startswith("training reaches"))
    assert train["measured"] == pytest.approx(0.837 - 0.862)
    # claims whose study is absent say so
    assert any(r["verdict"] == "not decided: the d = 150 study not in this report" for r in rows)
    assert "low rank" in " ".join(by)


def test_ledger_markdown_cells_are_the_row_values():
    rows = ledger(_report())
    md = ledger_markdown(rows)
    lines = [ln for ln in md.splitlines() if ln.startswith("| ") and "| source |" not in ln]
    assert len(lines) == len(rows)
    for r, ln in zip(rows, lines):
        cells = [c.strip() for c in ln.strip("|").split("|")]
        assert cells[0] == f"[{r['claim']}](#{slug(r['section'])})" and cells[4] == r["verdict"]
        assert len(cells) == 5


def test_slug_matches_github_anchors():
    assert slug("The paper's size: d = 100 and d = 150") == "the-papers-size-d--100-and-d--150"
    assert slug("9. Facts per parameter at `T = 32` (budget-checked, stored)") == \
        "9-facts-per-parameter-at-t--32-budget-checked-stored"


def test_listwise_rows_pick_the_largest_d_and_compute_verdicts():
    from validation.sections.claims import ledger
    case = lambda th, thr, lo, hi: {"theory": th, "theory_stderr": 0.0, "threshold": thr, "ci": [lo, hi]}
    report = {"listwise": {"exact": {
        "dp": {"20": {"tam tau=0.05 margin=0": case(0.23, 0.50, 0.49, 0.51),
                      "top1 margin=0.5": case(0.70, 0.60, 0.58, 0.64)},
               "30": {"tam tau=0.05 margin=0": case(0.212, 0.2122, 0.199, 0.225)}},
        "op": {"20": {"top1 margin=0.5 sphere": case(0.6955, 0.6915, 0.6545, 0.7303)}}}}}
    rows = {r["claim"]: r for r in ledger(report)}
    tam = rows["TAM capacity n/d^2 = finite-p RS theory, tau = 0.05, DP, d = 30 (exact)"]
    # d = 30 is chosen over d = 20 (whose interval excludes its theory): 0.212 in [0.199, 0.225]
    assert tam["verdict"] == "agrees" and tam["source"] == "arXiv:2605.05189"
    top1 = rows["top-1 capacity at margin 0.5 = alpha_c_finite(p, margin), DP, d = 20 (exact)"]
    # 0.60 - 0.70 = -0.10; standard error (0.64 - 0.58) / (2 * 1.96) = 0.0153 -> 6.5 sigma
    assert top1["verdict"] == "differs by -0.100 (6.5 sigma)"
    assert rows["top-1 capacity at margin 0.5 = alpha_c_finite(p, margin), unit-norm inputs and candidates, "
                "OP, d = 20 (exact)"]["verdict"] == "agrees"


def test_listwise_rows_say_what_is_missing():
    from validation.sections.claims import ledger
    rows = [r for r in ledger({"listwise": {"exact": {}}}) if "margin 0.5" in r["claim"] or "TAM" in r["claim"]]
    assert len(rows) == 6 and all(r["verdict"].startswith("not decided") for r in rows)   # 3 exact, 2 Hebbian, 1 trained


def test_hebbian_tam_rows_compute_their_verdicts():
    from validation.sections.claims import ledger
    h = {"dp": {"20": {"tam tau=0.2": {"theory": 0.05, "threshold": 0.048, "ci": [0.045, 0.053]}},
                "60": {"tam tau=0.2": {"theory": 0.045, "threshold": 0.040, "ci": [0.038, 0.042]}}}}
    rows = [r for r in ledger({"listwise": {"exact": {}, "hebbian": h}}) if r["claim"].startswith("Hebbian")]
    dp = [r for r in rows if r["claim"].endswith("DP, d = 60")]
    assert len(dp) == 1 and dp[0]["verdict"].startswith("differs")         # the largest d, outside its CI
    assert [r["verdict"][:12] for r in rows if "OP" in r["claim"]] == ["not decided:"]


def test_trained_listwise_row_is_the_difference_with_both_intervals():
    from validation.sections.claims import ledger
    t = {"threshold": 0.2270, "ci": [0.2212, 0.2325], "exact_threshold": 0.2325,
         "exact_ci_low": 0.2254, "exact_ci_high": 0.2396}
    report = {"listwise": {"exact": {}, "trained": {"dp": {"20": {"tam tau=0.05 margin=0": t}}}}}
    row = next(r for r in ledger(report) if r["claim"].startswith("trained TAM"))
    # difference -0.0055; half-widths 0.00565 and 0.0071 in quadrature: 0.00907 > 0.0055 -> agrees
    assert row["measured"] == pytest.approx(-0.0055)
    assert row["ci"] == pytest.approx([-0.0055 - 0.009074, -0.0055 + 0.009074], abs=1e-5)
    assert row["verdict"] == "agrees" and row["claim"].endswith("d = 20")


def test_ledger_reads_results_as_their_dicts():
    # inside reproduce the report holds Result objects, not yet dicts: the fit-size rule
    # must see n_points there too (a 2-point fit of 3 parameters decides nothing)
    from dataclasses import dataclass

    from hcizz.results import Result
    from validation.sections.claims import ledger

    @dataclass(frozen=True)
    class Boundary(Result):
        n_points: int

    report = {"token_retrieval": {
        "exponents": {"retrieval_logistic": {"L": {"value": 5.79, "stderr": 7.91}}},
        "theory": {"retrieval_boundary": {"exponents": {"L": 1.24}}},
        "boundaries": {"retrieval_boundary": Boundary(n_points=2)}}}
    row = next(r for r in ledger(report) if "L exponent" in r["claim"])
    assert row["verdict"] == "not decided: 2 points for 3 parameters (a fit needs at least 5)"


def test_token_level_boundary_row_computes_its_verdict():
    # the measured boundary at the closed-form row's (d, L) against the token-level crossing there;
    # 16.72 inside [16.02, 17.66] agrees, 14.0 outside differs (standard error (17.66 - 16.02) / 3.92)
    from validation.sections.claims import ledger

    def rows_for(n_token):
        rep = {"token_retrieval": {
            "theory": {"retrieval_boundary": {"points": [{"d": 128, "L": 16, "N": 14.7}]}},
            "adaptive_design": {"boundaries": {
                "128:8": {"d": 128, "L": 8, "threshold": 6.1, "ci": [5.8, 6.4]},
                "128:16": {"d": 128, "L": 16, "threshold": 16.81, "ci": [16.02, 17.66]},
                "128:32": {"d": 128, "L": 32, "threshold": 41.0, "ci": [39.3, 42.8]}}},
            "lower_bound": {"statistical": {"points": [{"d": 128, "L": 16, "N_token": n_token},
                                                       {"d": 128, "L": 8, "N_token": None},
                                                       {"d": 128, "L": 32, "N_token": 42.3}]}}}}
        return [r for r in ledger(rep) if "token-level" in r["claim"]]

    (r,) = rows_for(16.72)
    assert r["claim"].startswith("retrieval boundary N_c(d = 128, L = 16) = token-level theory")
    assert r["theory"] == 16.72 and r["verdict"] == "agrees"
    se = (17.66 - 16.02) / (2 * 1.959963984540054)
    (r,) = rows_for(14.0)
    assert r["verdict"] == f"differs by +2.810 ({2.81 / se:.1f} sigma)"
    # without a token-level crossing at the closed-form row's (d, L), the other boundary is used
    (r,) = rows_for(None)
    assert r["claim"].startswith("retrieval boundary N_c(d = 128, L = 32)") and r["verdict"] == "agrees"
    rows = [r for r in ledger({"token_retrieval": {}}) if "token-level" in r["claim"]]
    assert len(rows) == 1 and rows[0]["verdict"].startswith("not decided")
