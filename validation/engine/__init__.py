"""Experiment engine: parallel, resumable sweeps of independent trials.

A *trial* is a pure function of a small JSON parameter record (seed
included) returning a small JSON result record; a *sweep* is a list of
trials. :func:`run_sweep` runs them in this process, on local worker
processes (default) or on Dask distributed, appending each finished trial to
an append-only JSONL store so that an interrupted sweep resumes where it
stopped; a :class:`WorkerPool` keeps one set of workers for many sweeps.
Trial functions are registered under stable names with :func:`trial`, which
the store keys use, so a trial can move between modules.
See ``docs/sweeps.md``.
"""
from .keys import canonical_json, trial_key
from .pool import WorkerPool
from .store import DamagedLine, StoreScan, TrialStore, migrate_store, read_store
from .sweep import SweepRecords, SweepStats, run_sweep, stored_runner
from .trials import registered_trials, resolve_name, trial

__all__ = ["run_sweep", "WorkerPool", "trial_key", "canonical_json", "read_store", "StoreScan",
           "DamagedLine", "TrialStore", "SweepStats", "SweepRecords", "stored_runner", "trial",
           "registered_trials", "resolve_name", "migrate_store"]
