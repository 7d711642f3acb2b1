"""Trial keys, the JSONL store (damaged lines) and ``sweep-status``."""
import hashlib
import json
import os

import numpy as np
import pytest

from hcizz.cli import ArgumentParser
from validation.engine import cli as engine_cli
from validation.engine import read_store, run_sweep, trial_key
from validation.engine._demo_trials import counted, read_log, square
from validation.engine.keys import canonical_json, normalize_params
from validation.engine.store import TrialStore


# ----------------------------------------------------------------- keys
def test_trial_key_matches_hand_written_canonical_json():
    # oracle: the canonical text written by hand, hashed with hashlib
    text = '{"fn":null,"params":{"a":1,"b":[0.1,true,null],"c":"é"}}'
    want = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert trial_key({"c": "é", "b": [0.1, True, None], "a": 1}) == want
    text_fn = '{"fn":"pkg.mod:f","params":{"seed":3}}'
    assert trial_key({"seed": 3}, "pkg.mod:f") == hashlib.sha256(text_fn.encode()).hexdigest()


def test_trial_key_properties():
    assert trial_key({"a": 1, "b": 2}) == trial_key({"b": 2, "a": 1})
    assert trial_key({"x": 1}) != trial_key({"x": 1.0})          # int != float
    # floats are keyed to 12 significant digits (keys.KEY_DIGITS): last-bit differences of a
    # computed load are one trial, a difference in the 12th digit is another
    assert trial_key({"x": 0.1 + 0.2}) == trial_key({"x": 0.3})
    assert trial_key({"x": 0.9073773753570492}) == trial_key({"x": 0.9073773753570497})
    assert trial_key({"x": 0.123456789012}) != trial_key({"x": 0.123456789013})
    assert trial_key({"x": [1e-300 * 3]}) == trial_key({"x": [3e-300]})
    # the trial function is part of the key: two experiments can share a store
    assert trial_key({"x": 1}, square) != trial_key({"x": 1}, counted)
    assert trial_key({"x": 1}, square) == trial_key({"x": 1}, "validation.engine._demo_trials:square")
    # numpy scalars and tuples are the same values as their plain counterparts
    assert trial_key({"x": np.float64(0.5), "n": np.int64(3), "t": (1, 2)}) == \
        trial_key({"x": 0.5, "n": 3, "t": [1, 2]})


@pytest.mark.parametrize("bad, where", [
    ({"x": float("nan")}, r"params\['x'\]"),
    ({"x": [1, float("inf")]}, r"params\['x'\]\[1\]"),
    ({"x": {1, 2}}, r"params\['x'\]"),
    ({1: 2}, "params"),
    ({"x": object()}, r"params\['x'\]"),
    ([1, 2], "params"),
])
def test_normalize_params_rejects(bad, where):
    with pytest.raises(ValueError, match=where + ".*(JSON|dict)"):
        normalize_params(bad)


def test_canonical_json_float_round_trip():
    xs = np.random.default_rng(0).standard_normal(200) * 10.0 ** np.arange(-100, 100)
    back = json.loads(canonical_json({"x": xs.tolist()}))["x"]
    assert np.array_equal(np.array(back), xs)  # bit-exact round trip


# ----------------------------------------------------------------- store
def _lines(n, fn=square):
    """n records written by a real sweep (inprocess), as bytes lines."""
    return [json.dumps(r).encode() + b"\n" for r in
            run_sweep(fn, [{"x": i} for i in range(n)], executor="inprocess", progress=False)]


def test_read_missing_store_is_empty(tmp_path):
    scan = read_store(tmp_path / "none.jsonl")
    assert scan.records == [] and scan.damaged == [] and scan.n_lines == 0


def test_truncated_last_line_reported_and_skipped(tmp_path, capsys):
    lines = _lines(3)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:2]) + lines[2][:25])
    scan = read_store(path)
    assert [r["params"]["x"] for r in scan.records] == [0, 1]
    assert len(scan.damaged) == 1
    d = scan.damaged[0]
    assert (d.lineno, d.trailing, d.offset) == (3, True, len(lines[0]) + len(lines[1]))
    assert "truncated" in d.reason
    err = capsys.readouterr().err
    assert "warning" in err and "last line 3" in err


@pytest.mark.parametrize("cut", range(1, 60, 7))
def test_torn_write_at_any_offset_loses_only_that_line(tmp_path, cut):
    lines = _lines(3)
    path = tmp_path / "s.jsonl"
    k = len(lines[2]) - cut  # the last record cut at byte k (k = len-1: only "\n" missing)
    path.write_bytes(b"".join(lines[:2]) + lines[2][:k])
    scan = read_store(path, warn=False)
    assert len(scan.ok) == 2 + (cut == 1)  # a complete JSON object missing only "\n" is kept
    assert len(scan.damaged) == (cut != 1)
    assert scan.unterminated


def test_damaged_middle_line_reported(tmp_path, capsys):
    lines = _lines(3)
    path = tmp_path / "s.jsonl"
    path.write_bytes(lines[0] + b'{"key": "x", "oops\n' + lines[1] + b'[1, 2]\n' + lines[2])
    scan = read_store(path)
    assert len(scan.ok) == 3
    assert [(d.lineno, d.trailing) for d in scan.damaged] == [(2, False), (4, False)]
    assert "invalid JSON" in scan.damaged[0].reason
    assert "not a JSON object" in scan.damaged[1].reason
    err = capsys.readouterr().err
    assert "line 2" in err and "line 4" in err


def test_appender_seals_a_cut_line_and_sweep_resumes(tmp_path, capsys):
    log = str(tmp_path / "log")
    params = [{"i": i, "log": log} for i in range(4)]
    path = tmp_path / "s.jsonl"
    run_sweep(counted, params[:3], store=path, executor="inprocess", progress=False)
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:last_start + 30])  # trial 2's record cut short by a "crash"
    recs = run_sweep(counted, params, store=path, executor="inprocess", progress=True)
    assert [r["status"] for r in recs] == ["ok"] * 4
    # trials 0, 1 were not recomputed; 2 (lost) and 3 (new) were
    assert [e["i"] for e in read_log(log)] == [0, 1, 2, 2, 3]
    assert recs.stats.n_skipped == 2 and recs.stats.n_computed == 2
    assert len(recs.stats.store_damaged) == 1 and recs.stats.store_damaged[0].trailing
    err = capsys.readouterr().err
    assert "warning" in err and "1 damaged store line" in err
    # the cut line was sealed with "\n": it stays, reported, and the new lines are intact
    scan = read_store(path, warn=False)
    assert len(scan.ok) == 4 and len(scan.damaged) == 1
    # line 1 is the store header, lines 2-3 trials 0-1, line 4 the cut record
    assert scan.damaged[0].lineno == 4 and not scan.damaged[0].trailing
    assert path.read_bytes().endswith(b"\n")


def test_store_line_equals_returned_record(tmp_path):
    path = tmp_path / "s.jsonl"
    recs = run_sweep(square, [{"x": 0.1}, {"x": 3}], store=path, executor="inprocess",
                     progress=False)
    scan = read_store(path)
    assert scan.records == list(recs)
    for r in recs:
        assert r["key"] == trial_key(r["params"], r["fn"])
        assert set(r) == {"key", "fn", "params", "status", "result", "seconds", "finished"}
    assert recs[0]["result"]["y"] == 0.1 * 0.1


def test_append_line_rejects_newlines(tmp_path):
    with TrialStore(tmp_path / "s.jsonl") as st:
        with pytest.raises(ValueError, match="newline"):
            st.append_line('{"a":\n1}')
    # nothing but the header written when the store was created
    head = json.loads((tmp_path / "s.jsonl").read_text())
    assert head["format"] == "assocmem-trial-store" and head["version"] == 2


# ----------------------------------------------------------------- CLI
def validation_main(argv):
    """``python -m validation`` restricted to this module's subcommand (so
    this test does not depend on the other CLI modules)."""
    parser = ArgumentParser(prog="python -m validation")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    engine_cli.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_module_is_registered():
    import validation.__main__ as vm
    assert "validation.engine.cli" in vm.CLI_MODULES


def test_sweep_status_cli(tmp_path, capsys):
    from validation.engine._demo_trials import flaky
    path = tmp_path / "s.jsonl"
    run_sweep(flaky, [{"i": i, "fail": i == 1} for i in range(3)], store=path,
              executor="inprocess", progress=False)
    run_sweep(square, [{"x": 2}], store=path, executor="inprocess", progress=False)
    with open(path, "ab") as fh:
        fh.write(b'{"key": "trunc')
    capsys.readouterr()
    assert validation_main(["sweep-status", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "6 lines (1 header, 3 ok, 1 error, 1 damaged)" in out
    assert "trials: 3 ok, 1 failed" in out
    assert "ValueError: trial 1 failed on purpose" in out
    assert "damaged last line 6" in out
    assert validation_main(["sweep-status", "--store", str(path), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["by_fn"]["validation.engine._demo_trials:flaky"] == {"ok": 2, "failed": 1}
    assert st["by_fn"]["validation.engine._demo_trials:square"] == {"ok": 1, "failed": 0}
    with pytest.raises(ValueError, match="--store"):
        validation_main(["sweep-status", "--store", str(tmp_path / "missing.jsonl")])


# ----------------------------------------------------------------- property
from hypothesis import given, settings, strategies as hst  # noqa: E402

_json = hst.recursive(
    hst.none() | hst.booleans() | hst.integers() | hst.floats(allow_nan=False, allow_infinity=False)
    | hst.text(max_size=5),
    lambda kids: hst.lists(kids, max_size=3) | hst.dictionaries(hst.text(max_size=4), kids, max_size=3),
    max_leaves=10)


@settings(max_examples=60, deadline=None)
@given(hst.dictionaries(hst.text(max_size=4), _json, max_size=4), hst.randoms())
def test_key_is_order_free_and_params_round_trip(params, rnd):
    items = list(params.items())
    rnd.shuffle(items)
    assert trial_key(dict(items)) == trial_key(params)
    assert json.loads(canonical_json(params)) == params


# ----------------------------------------------------------------- not a store, header, lock
from validation.engine.store import NotAStoreError, StoreLockedError  # noqa: E402

_NOT_STORES = {
    "readme": b"# Title\n\nSome text the user wrote.\n",
    "passwd": b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n",
    "binary": bytes(range(256)) * 64,
    "json_list": b"[1, 2, 3]\n",
    "other_jsonl": b'{"a": 1}\n{"a": 2}\n',
    "huge_line": b"x" * (3 << 20),  # no newline within the first-line limit
    "future_version": b'{"format": "assocmem-trial-store", "version": 99}\n',
}


@pytest.mark.parametrize("kind", sorted(_NOT_STORES))
def test_non_store_is_refused_and_left_unchanged(tmp_path, kind, capsys):
    path = tmp_path / "f"
    path.write_bytes(_NOT_STORES[kind])
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    with pytest.raises(NotAStoreError, match="is not a trial store") as exc:
        read_store(path)
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 300  # one short line
    with pytest.raises(NotAStoreError):
        TrialStore(path).open()
    with pytest.raises(NotAStoreError):
        run_sweep(square, [{"x": 1}], store=path, executor="inprocess", progress=False)
    with pytest.raises(ValueError, match="not a trial store"):
        validation_main(["sweep-status", "--store", str(path)])
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before  # byte-for-byte unchanged
    assert capsys.readouterr().out == ""  # no listing of "damaged" lines


def test_new_store_starts_with_header_and_empty_file_is_a_store(tmp_path):
    path = tmp_path / "s.jsonl"
    run_sweep(square, [{"x": 1}], store=path, executor="inprocess", progress=False)
    first = json.loads(path.read_bytes().split(b"\n")[0])
    assert first["format"] == "assocmem-trial-store" and first["version"] == 2
    scan = read_store(path)
    assert scan.header == first and len(scan.ok) == 1 and scan.damaged == []
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read_store(empty).records == []
    run_sweep(square, [{"x": 2}], store=empty, executor="inprocess", progress=False)
    assert json.loads(empty.read_bytes().split(b"\n")[0])["format"] == "assocmem-trial-store"


def test_legacy_headerless_store_is_read_and_appended(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(_lines(2)))  # a store written before the header existed
    scan = read_store(path)
    assert scan.header is None and len(scan.ok) == 2
    recs = run_sweep(square, [{"x": i} for i in range(3)], store=path, executor="inprocess",
                     progress=False)
    assert recs.stats.n_skipped == 2 and recs.stats.n_computed == 1
    assert len(read_store(path).ok) == 3 and path.read_bytes().startswith(b'{"key"')


def test_many_damaged_lines_give_a_short_warning(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_bytes(_lines(1)[0] + b"garbage\n" * 5000)
    scan = read_store(path)
    assert len(scan.damaged) == 5000  # every damaged line is still listed in the scan
    err = capsys.readouterr().err
    assert err.count("\n") == 21 and "4980 more damaged" in err  # 20 shown + 1 summary line


def test_second_writer_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    with TrialStore(path):
        size = os.path.getsize(path)
        with pytest.raises(StoreLockedError, match="another process"):
            TrialStore(path).open()
        with pytest.raises(StoreLockedError):
            run_sweep(square, [{"x": 1}], store=path, executor="inprocess", progress=False)
        assert os.path.getsize(path) == size
    with TrialStore(path) as st:  # released on close
        st.append_line('{"x": 1}')


def test_sigkilled_writer_leaves_no_stale_lock(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "s.jsonl"
    code = ("import sys, time; from validation.engine.store import TrialStore\n"
            f"st = TrialStore({str(path)!r}).open(); print('locked', flush=True); time.sleep(60)")
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(StoreLockedError):
            TrialStore(path).open()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    t0 = time.monotonic()
    with TrialStore(path) as st:  # the kernel released the dead writer's lock
        st.append_line('{"x": 1}')
    assert time.monotonic() - t0 < 5
