"""The one result protocol (hcizz.results): records with to_dict, conf_int, summary."""
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

from hcizz import Estimate
from hcizz.results import Result, optional


@dataclass(frozen=True)
class Fit(Result):
    threshold: float
    ci_low: float
    ci_high: float
    level: float = 0.95
    note: str = optional()

    _estimate = "threshold"


def test_record_access_and_dict():
    f = Fit(0.8, 0.7, 0.9)
    assert f.threshold == f["threshold"] == 0.8
    assert dict(f) == f.to_dict() == {"threshold": 0.8, "ci_low": 0.7, "ci_high": 0.9, "level": 0.95}
    assert "note" not in f and f.get("note", "-") == "-"          # unset optional fields are absent
    assert {**f}["ci_low"] == 0.7
    with pytest.raises(KeyError):
        f["note"]
    with pytest.raises(TypeError, match="not a container"):
        list(f)


def test_conf_int_of_a_stored_interval():
    f = Fit(0.8, 0.7, 0.9)
    assert f.conf_int() == (0.7, 0.9) == f.conf_int(0.05)
    with pytest.raises(ValueError, match="alpha must be 0.05"):
        f.conf_int(0.1)               # stored at level 0.95 only: refuse rather than mislabel
    for bad in (0, 1, -0.1, 1.5, "0.05", True):
        with pytest.raises(ValueError, match="alpha"):
            f.conf_int(bad)
    assert "95% CI" in f.summary() and "[0.7, 0.9]" in f.summary()


def test_a_result_without_interval_says_so():
    @dataclass(frozen=True)
    class Plain(Result):
        x: int

    with pytest.raises(NotImplementedError, match="Plain has no confidence interval"):
        Plain(1).conf_int()
    assert Plain(1).summary() == "Plain\n  x  1"


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.32])
def test_estimate_interval_is_the_normal_one(alpha):
    # oracle: scipy's normal quantile (the implementation uses statistics.NormalDist)
    e = Estimate(2.0, 0.25, n=100)
    lo, hi = e.conf_int(alpha)
    want = stats.norm.interval(1 - alpha, loc=2.0, scale=0.25)
    assert np.allclose((lo, hi), want, rtol=0, atol=1e-12)


def test_estimate_arrays_and_dict():
    e = Estimate(np.array([1.0, 2.0]), np.array([0.1, 0.2]))
    lo, hi = e.conf_int()
    assert np.allclose(hi - lo, 2 * 1.959963984540054 * np.array([0.1, 0.2]), rtol=1e-12)
    assert e.to_dict()["value"] == [1.0, 2.0]
    assert "95% CI" in e.summary()


def test_ci_pair_writes_one_interval_entry():
    # a record that keeps report.json's "ci": [lo, hi] key: same values, fields otherwise in order
    from dataclasses import dataclass

    from hcizz.results import Result

    @dataclass(frozen=True)
    class T(Result):
        x: float
        ci_low: float
        ci_high: float
        n: int
        _estimate = "x"
        _ci_pair = True

    t = T(1.0, 0.5, 1.5, 3)
    assert t.to_dict() == {"x": 1.0, "n": 3, "ci": [0.5, 1.5]}
    assert t.conf_int() == (0.5, 1.5) and t.ci_low == 0.5
