"""``hcizz.jsonout``: the policies of the one JSON converter, and that importing
it (as the sweep engine's workers do) loads neither the rest of ``hcizz`` nor scipy."""
import math
import subprocess
import sys

import numpy as np
import pytest

from hcizz.jsonout import from_json_value, to_json_value


RECORD = {"a": np.float64(-np.inf), "b": np.array([1.5, np.nan]), "c": (np.int64(3), np.bool_(True)),
          "d": None, "e": "x"}


def test_nonfinite_policies():
    s = to_json_value(RECORD)
    assert s == {"a": "-inf", "b": [1.5, "nan"], "c": [3, True], "d": None, "e": "x"}
    k = to_json_value(RECORD, nonfinite="keep", strict_types=True)
    # "keep": the same plain values, the non-finite ones still floats of the same sign
    assert type(k["a"]) is float and k["a"] == -math.inf
    assert type(k["b"][1]) is float and math.isnan(k["b"][1])
    assert k["b"][0] == 1.5 and k["c"] == [3, True] and type(k["c"][0]) is int
    assert type(k["c"][1]) is bool and k["d"] is None and k["e"] == "x"
    # the two policies agree once the strings are read back
    back = from_json_value(s)
    assert back["a"] == k["a"] and math.isnan(back["b"][1])
    with pytest.raises(ValueError, match=r"^params\['a'\] must be JSON-serialisable: non-finite"):
        to_json_value(RECORD, nonfinite="raise", where="params")
    with pytest.raises(ValueError, match="^nonfinite must be one of"):
        to_json_value(1.0, nonfinite="drop")


@pytest.mark.parametrize("bad, where", [({"s": {1, 2}}, r"result\['s'\]"),
                                        ({"l": [1, object()]}, r"result\['l'\]\[1\]"),
                                        ({1: 2.0}, "result")])
@pytest.mark.parametrize("error", [ValueError, TypeError])
def test_strict_types_refuse_with_the_requested_error(bad, where, error):
    with pytest.raises(error, match="^" + where + " must be JSON-serialisable"):
        to_json_value(bad, nonfinite="keep", where="result", strict_types=True, type_error=error)
    # without strict_types the same values pass (key made a str, others unchanged)
    assert isinstance(to_json_value(bad), dict)


def test_importing_jsonout_loads_neither_scipy_nor_the_laws():
    code = ("import sys, hcizz.jsonout, hcizz.checks; "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'hcizz.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['hcizz.checks', 'hcizz.jsonout']"


def test_lazy_package_names():
    import hcizz
    import hcizz.quarter_circle as mod_or_fn  # the submodule name is bound to the function
    from hcizz import marchenko_pastur, quarter_circle

    assert quarter_circle is mod_or_fn is sys.modules["hcizz.quarter_circle"].quarter_circle
    assert marchenko_pastur is sys.modules["hcizz.marchenko_pastur"].marchenko_pastur
    assert hcizz.free_transforms is sys.modules["hcizz.free_transforms"]
    assert set(hcizz.__all__) <= set(dir(hcizz))
    assert all(getattr(hcizz, name) is not None for name in hcizz.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hcizz.nope  # noqa: B018


def test_submodule_loaded_first_does_not_shadow_its_function():
    # hcizz.spherical imports hcizz.quarter_circle before anybody asked hcizz for a name
    code = ("import hcizz.spherical, hcizz; "
            "print(type(hcizz.quarter_circle).__name__, type(hcizz.mp_product).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["QuarterCircle", "function"]


def test_strict_mode_converts_result_records():
    # a trial may return the project's frozen result records (docs/architecture.md);
    # the sweep engine's strict conversion must write them through to_dict(), nested too
    from validation.factual_recall.sequential import StageTimes
    from hcizz.jsonout import to_json_value

    st = StageTimes(relation_learnt=75, subject_learnt=730, plateau1=3.45, plateau2=float("nan"),
                    final=2.0, order="relation-first")
    out = to_json_value({"stages": st}, nonfinite="keep", where="result", strict_types=True,
                        type_error=TypeError)
    assert out["stages"]["relation_learnt"] == 75 and out["stages"]["order"] == "relation-first"
    assert math.isnan(out["stages"]["plateau2"])


def test_sequential_experiment_runs_as_an_engine_trial():
    # regression: the report runs the four factual-recall experiments as engine trials; the
    # sequential one returns a StageTimes record, which the worker conversion refused
    from validation.engine.executors import run_trial
    from validation.factual_recall.experiments import experiment_trial

    r = run_trial(experiment_trial, {"name": "sequential", "quick": True, "seed": 0})
    assert r["status"] == "ok", r.get("error")
    assert r["result"]["stages"]["order"] in ("relation-first", "subject-first", "undetermined")
