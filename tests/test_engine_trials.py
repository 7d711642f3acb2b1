"""Stable trial names (validation.engine.trials) and store format 2 (keys, reading old stores,
migrate_store), and the committed stores as the engine reads them."""
import hashlib
import json
import os
from pathlib import Path

import pytest

from validation.engine import migrate_store, read_store, run_sweep, trial, trial_key
from validation.engine._demo_trials import square
from validation.engine.keys import canonical_json, fn_name, key_params
from validation.engine.store import STORE_VERSION, TrialStore
from validation.engine.trials import registered_trials, resolve_name


def test_registered_name_is_the_key():
    @trial("test_engine.cube", aliases=("old.module:cube",))
    def cube(params):
        return {"y": params["x"] ** 3}

    assert fn_name(cube) == "test_engine.cube" and resolve_name("old.module:cube") == "test_engine.cube"
    # oracle: the canonical text written by hand, hashed with hashlib (floats to 12 digits)
    text = '{"fn":"test_engine.cube","params":{"x":0.333333333333}}'
    assert trial_key({"x": 1 / 3}, cube) == hashlib.sha256(text.encode()).hexdigest()
    assert registered_trials()["test_engine.cube"]["aliases"] == ["old.module:cube"]
    assert resolve_name("not.registered:f") == "not.registered:f" and resolve_name(None) is None


@pytest.mark.parametrize("bad", ["Capacity", "capacity", "a..b", "a.b-c", "1a.b", "", None, "a.B"])
def test_malformed_names_are_refused(bad):
    with pytest.raises(ValueError, match="name must be dotted lower-case words"):
        trial(bad)


def test_a_name_or_alias_cannot_be_taken_twice():
    @trial("test_engine.first", aliases=("m:first",))
    def first(params):
        return {}

    def other(params):
        return {}

    with pytest.raises(ValueError, match="already registered by .*first"):
        trial("test_engine.first")(other)
    with pytest.raises(ValueError, match="alias 'm:first' already names the trial 'test_engine.first'"):
        trial("test_engine.second", aliases=("m:first",))(other)
    trial("test_engine.first", aliases=("m:first",))(first)        # the same function again: fine


def test_key_params_rounds_nested_floats_only():
    p = {"a": 0.1 + 0.2, "b": [1, 2.0000000000001, {"c": 1e-320}], "s": "0.30000000000000004", "t": True}
    assert key_params(p) == {"a": 0.3, "b": [1, 2.0, {"c": 1e-320}], "s": "0.30000000000000004", "t": True}
    assert canonical_json(key_params({"x": 1.0})) == '{"x":1.0}'     # an int-valued float stays a float


def _v1_store(path, records, header_version=1):
    """A store as an older version wrote it: keys of the exact floats under module:qualname."""
    lines = [] if header_version == 0 else [json.dumps({"format": "assocmem-trial-store",
                                                         "version": header_version, "created": "2026-01-01T00:00:00Z"})]
    for fn, params, result in records:
        key = hashlib.sha256(canonical_json({"fn": fn, "params": params}).encode()).hexdigest()
        lines.append(json.dumps({"key": key, "fn": fn, "params": params, "status": "ok", "result": result,
                                 "seconds": 0.1, "finished": "2026-01-01T00:00:00Z"}).replace('"NaN"', "NaN"))
    path.write_text("\n".join(lines) + "\n")


@trial("test_engine.square", aliases=("validation.engine._demo_trials:square_old",))
def _registered_square(params):
    return square(params)


@pytest.mark.parametrize("version", [0, 1])
def test_old_stores_are_read_with_new_keys(tmp_path, version):
    path = tmp_path / "old.jsonl"
    # a load whose last bits differ from what this platform computes: the v2 key rounds them away
    _v1_store(path, [("validation.engine._demo_trials:square_old", {"x": 0.9073773753570492}, {"y": 1.0}),
                     ("some.other:fn", {"x": 2}, {"y": 4})], header_version=version)
    scan = read_store(path, warn=False)
    assert scan.version == version
    assert trial_key({"x": 0.9073773753570497}, _registered_square) in scan.ok
    assert trial_key({"x": 2}, "some.other:fn") in scan.ok           # unregistered: keyed by its old name
    recs = run_sweep(_registered_square, [{"x": 0.9073773753570497}], store=path, executor="inprocess",
                     progress=False)
    assert recs.stats.n_skipped == 1 and recs.stats.n_computed == 0 and recs[0]["result"] == {"y": 1.0}
    # appending to an old store keeps it readable: the new record is found with the same keys
    run_sweep(_registered_square, [{"x": 3}], store=path, executor="inprocess", progress=False)
    again = read_store(path, warn=False)
    assert len(again.ok) == 3 and trial_key({"x": 3}, _registered_square) in again.ok


def test_migrate_store_rewrites_once(tmp_path):
    path = tmp_path / "old.jsonl"
    _v1_store(path, [("validation.engine._demo_trials:square_old", {"x": 0.5}, {"y": "NaN"}),
                     ("some.other:fn", {"x": 2}, {"y": 4})], header_version=0)
    with open(path, "a") as fh:
        fh.write('{"key": "cut sh\n')                                  # a damaged line, kept as evidence
    before = read_store(path, warn=False)
    res = migrate_store(path)
    assert res["changed"] and res["from_version"] == 0 and res["records"] == 2 and res["renamed"] == 1
    assert res["unresolved"] == ["some.other:fn"] and res["damaged"] == 1
    after = read_store(path, warn=False)
    assert after.version == STORE_VERSION == 2 and after.header["migrated_from"] == 0
    assert set(after.ok) == set(before.ok) and len(after.damaged) == 1
    rec = after.ok[trial_key({"x": 0.5}, _registered_square)]
    assert rec["fn"] == "test_engine.square" and rec["result"]["y"] != rec["result"]["y"]   # NaN kept
    assert '"y": "nan"' in path.read_text()                           # written under the JSON policy
    assert not migrate_store(path)["changed"]                          # idempotent
    assert not list(tmp_path.glob(".*tmp"))


def test_migrate_store_refuses_while_a_writer_holds_the_lock(tmp_path):
    path = tmp_path / "old.jsonl"
    _v1_store(path, [("some.other:fn", {"x": 2}, {"y": 4})])
    text = path.read_text()
    with TrialStore(path):
        with pytest.raises(ValueError, match="being written by another process"):
            migrate_store(path)
    assert path.read_text() == text
    with pytest.raises(ValueError, match="existing store file"):
        migrate_store(tmp_path / "missing.jsonl")


def _committed_stores():
    import validation

    root = Path(validation.__file__).parent
    return sorted(root.glob("**/stored/*.jsonl"))


def test_committed_stores_are_format_2_under_registered_names():
    # importing the experiment packages registers every trial (their modules import on use)
    import validation.factual_recall.experiments  # noqa: F401
    import validation.factual_recall.trials  # noqa: F401
    import validation.linear_memory.capacity  # noqa: F401
    import validation.linear_memory.exact  # noqa: F401
    import validation.linear_memory.margins  # noqa: F401
    import validation.linear_memory.spectra  # noqa: F401
    import validation.token_retrieval.design  # noqa: F401
    import validation.token_retrieval.experiments  # noqa: F401

    names = set(registered_trials())
    stores = _committed_stores()
    assert len(stores) >= 18
    for path in stores:
        scan = read_store(path, warn=False)
        assert scan.version == 2 and not scan.damaged, path
        for key, rec in scan.ok.items():
            assert rec["fn"] in names, (path, rec["fn"])
            assert key == trial_key(rec["params"], rec["fn"]), path      # the stored key is the v2 key
        assert os.access(path, os.R_OK)
