"""The study-protocol helpers of validation.studies.base: finished trials and strict results."""
import pytest

from validation.studies import get_study
from validation.studies.base import Runner, is_ok, ok_pairs

OK = {"status": "ok", "params": {"seed": 0}, "result": {"x": 1.0}}
FAILED = {"status": "failed", "params": {"seed": 1}, "error": {"type": "ValueError", "message": "boom"}}


class _Canned(Runner):
    """A runner that answers every call with fixed records (no store is read)."""

    def __init__(self, records):
        super().__init__(get_study("linear_memory.exact_op"), "unused.jsonl", compute=False, missing="skip")
        self.records = records

    def __call__(self, params):
        return list(self.records)


def test_finished_trials_are_the_ok_records_in_order():
    # hand-built records: the ok one is kept, a missing (None) and a failed one are left out
    assert [is_ok(r) for r in (OK, None, FAILED)] == [True, False, False]
    assert ok_pairs([FAILED, OK, None, OK]) == [({"seed": 0}, {"x": 1.0})] * 2


def test_require_ok_returns_results_or_names_what_is_missing_or_failed():
    assert _Canned([OK, OK]).require_ok([{}, {}]) == [{"x": 1.0}, {"x": 1.0}]
    with pytest.raises(LookupError, match=r"1 planned trials are not in the store .*`my command --store PATH`"):
        _Canned([OK, None]).require_ok([{}, {}], command="my command")
    with pytest.raises(LookupError, match=r"python -m validation study linear_memory.exact_op --store PATH"):
        _Canned([None]).require_ok([{}])
    with pytest.raises(RuntimeError, match=r"1 trials failed; first \(\{'seed': 1\}\): ValueError: boom"):
        _Canned([OK, FAILED]).require_ok([{}, {}])


def test_full_scans_keeps_every_piece_of_each_part():
    # the mlp part of the full preset comes in four pieces (one per width): the study's results
    # hold every finished, not skipped run of every piece, counted here from the committed store
    from validation.engine import read_store, trial_key

    s = get_study("token_retrieval.full_scans")
    ok = read_store(s.committed_store(), warn=False).ok
    expected = {"orthogonal": 0, "mlp": 0}
    for part, _, params in s.parts():
        expected[part] += sum("skipped" not in ok[trial_key(q, s.trial)]["result"] for q in params)
    run = s.run(compute=False, progress=False)
    assert {k: len(v) for k, v in run.results.items()} == expected
    assert expected["mlp"] > 144            # more than one piece's worth (144 parameter records each)
