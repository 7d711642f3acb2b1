"""The study protocol: a plan of trials, where its committed results live, its summary.

A *study* answers one question with one registered trial function
(:func:`validation.engine.trial`): its plan (the parameter records, or a
sequential design that asks for them round by round), the committed store of
its paper-size runs (read-only package data under
``validation/studies/stored/``) and its summary.  Every study derives from
:class:`Study` and overrides a few methods; the rest is written once here:

* **replay** (``compute=False``, the report's quick mode): the trials are read
  from the committed store (or a given one); nothing is computed; a trial the
  plan needs and the store lacks is reported (``missing="raise"``: a
  ``LookupError`` naming the command that computes it; ``"skip"``: left out);
* **compute** (``compute=True``, ``python -m validation study NAME``, the
  report's full mode): the trials run on a store in the user's folder
  (``--store``, default ``./<name>.jsonl``), which starts as a copy of the
  committed store when it does not exist, so that nothing committed is
  recomputed and the run resumes after an interruption (SIGKILL included,
  :mod:`validation.engine.store`).  The installed package is never written to.

A fixed-plan study implements :meth:`Study.plan`; a sequential one overrides
:meth:`Study.execute`, which calls the runner once per round (the design is
a deterministic function of the seeded outcomes, so a replay follows the same
path and computes nothing).  Options are declared once (:class:`Option`),
checked by the library before any work (one check per option, one message)
and turned into command-line flags by :mod:`validation.studies.cli`.

See ``docs/architecture.md#where-to-add`` (a study) and ``docs/sweeps.md``.
"""
from __future__ import annotations

import functools
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import hcizz.docstrings
from hcizz.results import Result

__all__ = ["Option", "dims_option", "check_planned_dims", "seeds_option", "models_option", "Study", "StudyRun", "Runner", "is_ok",
           "ok_pairs", "STORED_DIR", "MAX_PLAN_TRIALS", "DOC_PARAMETERS"]

#: Most trials a fixed plan may hold (a bound on the plan's memory and on a run's time; checked
#: before anything is read or written).
MAX_PLAN_TRIALS = 100_000

#: Folder of the committed stores (package data, read-only).
STORED_DIR = Path(__file__).resolve().parent / "stored"


#: What the ``References`` sections that several study docstrings share cite (a docs page, and a
#: paper): key -> text; :data:`DOC_PARAMETERS` holds each whole section as ``ref_<key>``.
DOC_REFERENCES = {
    "where_to_add": "docs/architecture.md#where-to-add",
    "mechanism": "docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p",
    "d150": "docs/linear_memory.md#thresholds-at-d--100-and-150",
    "fpp_budget": "docs/factual_recall.md#facts-per-parameter-budget-checked",
    "fpp_budget_paper": "arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked",
    "optimiser_scan": "docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity",
    "optimiser_scan_paper": "arXiv:2412.06538; docs/factual_recall.md#optimiser-scan-and-best-of-optimisers-capacity",
    "tradeoff_paper": "arXiv:2412.06538; docs/factual_recall.md#trade-off-between-attention-and-mlp-parameters",
    "spectra_study": "docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration",
    "mlp_memory": "docs/factual_recall.md#mlp-memory-against-counting-bounds",
    "exact_decisions": "docs/listwise.md#exact-decisions",
    "quick_report": "docs/linear_memory.md#measured-comparison-quick-report",
    "paper_protocol": "docs/factual_recall.md#the-papers-protocol-against-the-papers-code",
    "rank_capacity": "docs/rank_constrained.md#finite-p-capacity-of-rank-constrained-memories",
    "token_theory": "docs/token_retrieval.md#token-level-theory-against-simulation",
    "transformer_budget": "docs/factual_recall.md#transformer-budget-study-small-size",
}


#: Parameter texts the study modules share, besides :data:`hcizz.docstrings.PARAMETERS`
#: (filled in by ``fill_doc``; ``docs/architecture.md#shared-parameter-docs``); the ``ref_*``
#: entries are whole ``References`` sections, one per docs page that several docstrings cite.
DOC_PARAMETERS = {
    "runner": "runner : validation.studies.base.Runner\n    Computes or replays the trials.",
    # the whole Parameters section of a summarise(results) that takes the engine records only
    "records_params": "Parameters\n----------\nresults : list of dict\n    The engine records of the plan.",
    "executed": "results : dict\n    As :meth:`execute` returns it.",
    "record_pairs": ("results : list\n    ``(params, record)`` pairs, as :meth:`execute` returns them.\n"
                     "ds : tuple of int\n    The dimensions."),
    "model": 'model : str\n    ``"op"`` or ``"dp"``.',
    "ci": "ci_low, ci_high : float\n    Its 95 % profile-likelihood interval.",
    "boundary_options": ("boundaries : tuple of str\n    ``\"d:L\"`` pairs.\nreplicates : int\n    Replicates per design.\n"
                         "target : float\n    Target half-width of ``log N_c``."),
    "case": ('criterion : str\n    ``"top1"`` or ``"tam"``.\ntau : float or None\n    Tail fraction.\n'
             "margin : float\n    Margin."),
    "ci_pair": ("ci_low, ci_high : float\n    Its 95 % profile-likelihood interval (``to_dict()`` writes it as "
                "``\"ci\": [ci_low, ci_high]``, the key ``report.json`` has always used)."),
    # the whole References sections: "ref_<key>" for each key of DOC_REFERENCES
    **{"ref_" + k: "References\n----------\n" + v for k, v in DOC_REFERENCES.items()},
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`DOC_PARAMETERS` (a decorator of the study modules).
fill_doc = functools.partial(hcizz.docstrings.fill_doc, **DOC_PARAMETERS)


@fill_doc
@dataclass(frozen=True)
class Option:
    """One option of a study: its flag, type, default, range and help.

    Parameters
    ----------
    name : str
        Keyword of :meth:`Study.run` / :meth:`Study.plan` (``"ds"``).
    flag : str
        Command-line flag (``"--d"``).
    kind : {int, float, str, bool}
        Type of the value (of each item for ``many=True``).
    default : object
        Default value (a tuple for ``many=True``).
    help : str
        One line for ``--help``.
    many : bool, optional
        A comma-separated list (:func:`hcizz.cli.parse_list`).
    low, high : float, optional
        Inclusive bounds of numeric values.
    low_open : bool, optional
        Exclude ``low`` itself.
    choices : tuple of str, optional
        Allowed values of ``str`` options.

    %(ref_where_to_add)s
    """

    name: str
    flag: str
    kind: type
    default: object
    help: str
    many: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple | None = None

    def check(self, value):
        """Return ``value`` checked and normalised (a tuple for ``many``).

        Parameters
        ----------
        value : object
            A Python value, or the command-line text.

        Returns
        -------
        object
            The value (int/float/str/bool, or a tuple of them).

        Raises
        ------
        ValueError
            Naming the flag, the value and the valid range.
        """
        from hcizz.checks import check_int, check_real
        from hcizz.cli import parse_list

        if self.many:
            return tuple(parse_list(value, self.flag, item=self.kind, low=self.low, high=self.high,
                                    low_open=self.low_open, choices=self.choices))
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{self.flag} must be True or False, got {value!r}")
            return value
        if self.kind is str:
            if not isinstance(value, str) or (self.choices is not None and value not in self.choices):
                allowed = f" among {', '.join(self.choices)}" if self.choices else ""
                raise ValueError(f"{self.flag} must be a name{allowed}, got {value!r}")
            return value
        if isinstance(value, str):
            try:
                value = int(value) if self.kind is int else float(value)
            except ValueError:
                raise ValueError(f"{self.flag} must be {'an integer' if self.kind is int else 'a number'}, "
                                 f"got {value!r}") from None
        if self.kind is int:
            return check_int(self.flag, value, low=self.low, high=self.high)
        return check_real(self.flag, value, low=self.low, high=self.high, low_open=self.low_open,
                          allow_array=False)


def is_ok(rec):
    """Return whether an engine record is a finished trial (present and of status ``"ok"``).

    Parameters
    ----------
    rec : dict or None
        An engine record as :class:`Runner` returns it (None: missing from a
        replayed store).

    Returns
    -------
    bool
        False for a missing or failed trial.

    References
    ----------
    docs/sweeps.md#records

    Examples
    --------
    >>> is_ok({"status": "ok", "params": {}, "result": {}}), is_ok(None), is_ok({"status": "failed"})
    (True, False, False)
    """
    return rec is not None and rec["status"] == "ok"


def ok_pairs(records):
    """Return ``(params, result)`` of the finished trials among ``records`` (:func:`is_ok`), in order.

    Parameters
    ----------
    records : iterable of dict or None
        Engine records as :class:`Runner` returns them.

    Returns
    -------
    list of tuple
        ``(rec["params"], rec["result"])`` per finished trial; missing and
        failed trials are left out.

    References
    ----------
    docs/sweeps.md#records

    Examples
    --------
    >>> ok_pairs([{"status": "ok", "params": {"d": 2}, "result": {"t": 1}}, None])
    [({'d': 2}, {'t': 1})]
    """
    return [(r["params"], r["result"]) for r in records if is_ok(r)]


@fill_doc
def dims_option(default, *, low=2, high=None, help="dimensions"):
    """Return the ``--d`` option of a study: the list of dimensions ``ds``.

    Parameters
    ----------
    default : tuple of int
        The dimensions run by default.
    low, high : int, optional
        Inclusive bounds of each dimension (``high=None``: no upper bound).
    help : str, optional
        One line for ``--help``.

    Returns
    -------
    Option
        ``Option("ds", "--d", int, default, help, many=True, low=low, high=high)``.

    %(ref_where_to_add)s

    Examples
    --------
    >>> dims_option((20, 30), high=200).check("20,40")
    (20, 40)
    """
    return Option("ds", "--d", int, tuple(default), help, many=True, low=low, high=high)


@fill_doc
def check_planned_dims(options, planned):
    """Refuse ``--d`` values outside a study's planned dimensions (the ``validate`` of such studies).

    Parameters
    ----------
    options : dict
        Checked options with the dimensions under ``"ds"``.
    planned : iterable of int
        The planned dimensions, in the order the message lists them.

    Returns
    -------
    dict
        ``options``, unchanged.

    Raises
    ------
    ValueError
        Naming ``--d``, the planned dimensions and the first one that is not planned.

    %(ref_where_to_add)s

    Examples
    --------
    >>> try:
    ...     check_planned_dims({"ds": (20, 25)}, (20, 30))
    ... except ValueError as err:
    ...     print(err)
    --d must be planned dimensions (20, 30), got 25
    """
    planned = list(planned)
    bad = [d for d in options["ds"] if d not in planned]
    if bad:
        raise ValueError(f"--d must be planned dimensions ({', '.join(map(str, planned))}), got {bad[0]}")
    return options


@fill_doc
def seeds_option(default):
    """Return the ``--seeds`` option of a trained-threshold study: trials per load (1 to 1000).

    Parameters
    ----------
    default : int
        Trials per load by default.

    Returns
    -------
    Option
        ``Option("seeds", "--seeds", int, default, "trials per load", low=1, high=1000)``.

    %(ref_where_to_add)s
    """
    return Option("seeds", "--seeds", int, default, "trials per load", low=1, high=1000)


@fill_doc
def models_option():
    """Return the ``--models`` option of an exact study: the fact models, ``op`` and / or ``dp``.

    Returns
    -------
    Option
        A list of ``"op"`` / ``"dp"`` (default both).

    %(ref_where_to_add)s
    """
    return Option("models", "--models", str, ("op", "dp"), "fact models", many=True, choices=("op", "dp"))


@fill_doc
class Runner:
    """Runs (or replays) lists of trials of one study on one store; counts what it did.

    ``runner(params)`` returns one engine record per parameter record, in order
    (``{"key", "fn", "params", "status", "result", ...}``; ``None`` for a
    trial missing from a replayed store when ``missing="skip"``).

    Parameters
    ----------
    study : Study
        The study (its trial, name and the command that computes it).
    store : path
        The store read (replay) or read and appended to (compute).
    compute : bool
        Compute missing trials (True) or only read the store (False).
    %(executor)s %(workers)s %(progress)s
    missing : {"raise", "skip"}, optional
        What a replay does with a trial the store lacks.

    References
    ----------
    docs/sweeps.md#resuming
    """

    def __init__(self, study, store, *, compute, executor="processes", workers=2, progress=True,
                 missing="raise"):
        if missing not in ("raise", "skip"):
            raise ValueError(f"missing must be 'raise' or 'skip', got {missing!r}")
        self.study, self.store, self.compute = study, Path(store), bool(compute)
        self.executor, self.workers, self.progress, self.missing = executor, workers, progress, missing
        self.calls = self.trials = self.computed = self.reused = self.failed = self.n_missing = 0
        self.cpu_seconds = 0.0
        self._ok = None

    def stored_ok(self):
        """Return the finished trials the store holds now (a sequential design decides from them).

        Returns
        -------
        dict
            Store key -> ok engine record (``{}`` while the store does not exist).
        """
        from validation.engine import read_store

        return read_store(self.store, warn=False).ok if self.store.exists() else {}

    def _replay(self, params):
        from validation.engine import trial_key

        if self._ok is None:
            self._ok = self.stored_ok()
        out = []
        for q in params:
            rec = self._ok.get(trial_key(q, self.study.trial))
            if rec is None:
                if self.missing == "raise":
                    raise LookupError(
                        f"study {self.study.name}: a planned trial is not in the store {self.store.name} "
                        f"({q}); compute it with `python -m validation study {self.study.name} --store PATH`")
                self.n_missing += 1
            else:
                self.reused += 1
            out.append(rec)
        return out

    def __call__(self, params):
        params = list(params)
        self.calls += 1
        self.trials += len(params)
        if not self.compute:
            return self._replay(params)
        from validation.engine import run_sweep

        label = self.study.name if self.calls == 1 else f"{self.study.name} ({self.calls})"
        recs = run_sweep(self.study.trial, params, store=self.store, executor=self.executor,
                         workers=self.workers, progress=self.progress, label=label)
        st = recs.stats
        self.computed += st.n_computed
        self.reused += st.n_skipped
        self.failed += st.n_failed
        self.cpu_seconds += st.cpu_seconds
        return list(recs)

    def require_ok(self, params, *, command=None):
        """Run ``params`` and return their results, in order; every trial must have finished.

        Parameters
        ----------
        params : list of dict
            Parameter records.
        command : str, optional
            The command that computes them, named by the error (default
            :meth:`Study.command` with the default options).

        Returns
        -------
        list of dict
            ``rec["result"]`` per trial.

        Raises
        ------
        LookupError
            Trials missing from a replayed store (``missing="skip"``; with
            ``"raise"`` the replay itself refuses the first one).
        RuntimeError
            A trial failed (the message quotes the first error).
        """
        recs = self(params)
        missing = sum(r is None for r in recs)
        if missing:
            raise LookupError(f"study {self.study.name}: {missing} planned trials are not in the store "
                              f"{self.store.name}; compute them with "
                              f"`{command or self.study.command()} --store PATH`")
        failed = [r for r in recs if r["status"] != "ok"]
        if failed:
            e = failed[0]["error"]
            raise RuntimeError(f"study {self.study.name}: {len(failed)} trials failed; first "
                               f"({failed[0]['params']}): {e['type']}: {e['message']}")
        return [r["result"] for r in recs]

    def results(self, params, *, with_params=True):
        """Run ``params`` and return the ok results (each with its parameters merged in).

        Parameters
        ----------
        params : list of dict
            Parameter records.
        with_params : bool, optional
            Merge each record's parameters into its result (``{**params, **result}``).

        Returns
        -------
        list of dict
            One dict per ok trial, in order (failed and missing trials left out).
        """
        return [{**p, **r} if with_params else dict(r) for p, r in ok_pairs(self(params))]


@fill_doc
@dataclass(frozen=True)
class StudyRun(Result):
    """Result of :meth:`Study.run`: what was run or replayed, and the study's summary.

    Parameters
    ----------
    study : str
        The study's name.
    store : str
        The store read (and appended to, when computing).
    compute : bool
        Whether missing trials were computed.
    options : dict
        The checked options.
    results : object
        What :meth:`Study.execute` returned (the records, grouped as the
        study needs them).
    outcome : object
        What :meth:`Study.summarise` returned (a :class:`~hcizz.results.Result`
        or a plain dict / list of table rows).
    trials : int
        Trials asked for (over all rounds).
    computed, reused, failed, missing : int
        Trials computed by this run, found in the store, failed, and missing
        from a replayed store.
    cpu_seconds : float
        CPU seconds inside the trials computed by this run.
    seconds : float
        Wall time of the run.

    %(ref_where_to_add)s
    """

    study: str
    store: str
    compute: bool
    options: dict
    results: object
    outcome: object
    trials: int
    computed: int
    reused: int
    failed: int
    missing: int
    cpu_seconds: float
    seconds: float

    def summary(self):
        """Return the study's summary as text (its ``summary()`` if it is a result).

        Returns
        -------
        str
            A few lines: the run's counts and the study's summary.
        """
        head = (f"study {self.study}: {self.trials} trials ({self.computed} computed, {self.reused} from "
                f"{self.store}, {self.failed} failed, {self.missing} missing) in {self.seconds:.1f} s")
        s = self.outcome
        body = s.summary() if isinstance(s, Result) else _plain_summary(s)
        return head + ("\n" + body if body else "")


def _one_line(key, r):
    """``key: estimate [low, high]`` for a result with a main estimate, else its fields."""
    name = type(r)._estimate
    if name is not None:
        try:
            lo, hi = r.conf_int()
            return f"{key}: {name} {getattr(r, name):.6g} [{lo:.6g}, {hi:.6g}]"
        except (NotImplementedError, ValueError):
            pass
    return f"{key}: " + ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in list(r.to_dict().items())[:8])


def _plain_summary(obj, limit=40):
    import json

    from hcizz.jsonout import to_json_value

    if obj is None:
        return ""
    if isinstance(obj, dict) and obj and all(isinstance(v, Result) for v in obj.values()):
        return "\n".join(_one_line(k, v) for k, v in obj.items())
    if isinstance(obj, list):
        rows = [json.dumps(to_json_value(r), allow_nan=False)[:160] for r in obj[:limit]]
        more = [f"... and {len(obj) - limit} more rows"] if len(obj) > limit else []
        return "\n".join(rows + more)
    return json.dumps(to_json_value(obj), allow_nan=False, indent=1)[:6000]


@fill_doc
class Study:
    """Base class of a study (one subclass instance per study; see the module notes).

    Class attributes a subclass sets: ``name`` (``"linear_memory.exact_op"``,
    also the file stem of its committed store), ``title`` (one line),
    ``trial`` (the registered trial function), ``docs`` (its docs page, with
    anchor), ``options`` (tuple of :class:`Option`) and, for a study without
    committed runs, ``committed = False``.  The file name of the committed
    store in :data:`STORED_DIR` follows from the name (:attr:`stored`).

    %(ref_where_to_add)s
    """

    name = None
    title = ""
    trial = None
    committed = True
    docs = ""
    options = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        fn = cls.__dict__.get("trial")
        if fn is not None and not isinstance(fn, staticmethod):   # a plain function: not a method
            cls.trial = staticmethod(fn)

    # ------------------------------------------------------------ the study's part
    def plan(self, **options):
        """Return the parameter records of a fixed-plan study (sequential studies override :meth:`execute`).

        Parameters
        ----------
        **options
            The checked options.

        Returns
        -------
        list of dict
            Parameter records of the study's trial.
        """
        raise NotImplementedError(f"study {self.name} has no fixed plan")

    def execute(self, runner, **options):
        """Run the study's design on ``runner``; return the results :meth:`summarise` takes.

        The default runs the fixed :meth:`plan` in one call and returns the
        records.

        Parameters
        ----------
        runner : Runner
            ``runner(params) -> records`` (computes or replays).
        **options
            The checked options.

        Returns
        -------
        object
            The study's results (here: the list of records).
        """
        return runner(self.plan(**options))

    def summarise(self, results, **options):
        """Summarise the results of :meth:`execute` (the default returns None).

        Parameters
        ----------
        results : object
            What :meth:`execute` returned.
        **options
            The checked options.

        Returns
        -------
        object
            A result record or plain table rows.
        """
        return None

    # ------------------------------------------------------------ written once
    @property
    def stored(self):
        """File name of the committed store in :data:`STORED_DIR` (``<name>.jsonl``; None if not committed)."""
        return f"{self.name}.jsonl" if self.committed and self.name is not None else None

    def committed_store(self):
        """Return the path of the committed store (package data), or None.

        Returns
        -------
        pathlib.Path or None
            ``STORED_DIR / stored``.
        """
        return None if self.stored is None else STORED_DIR / self.stored

    def default_store(self):
        """Return the store new runs go to by default: ``./<name>.jsonl`` in the working folder.

        Returns
        -------
        pathlib.Path
            A path in the current working directory, never inside the package.
        """
        return Path.cwd() / f"{self.name}.jsonl"

    def check_options(self, **options):
        """Check every option (unknown ones refused) and fill in the defaults, before any work.

        Parameters
        ----------
        **options
            Option values by name (Python values or command-line text).

        Returns
        -------
        dict
            Every declared option, checked.

        Raises
        ------
        ValueError
            On an unknown option or a bad value (the message names its flag).
        """
        known = {o.name: o for o in self.options}
        for k in options:
            if k not in known:
                names = ", ".join(sorted(known)) or "none"
                raise ValueError(f"option {k!r} is not an option of study {self.name} (its options: {names})")
        out = {}
        for o in self.options:
            v = options.get(o.name, o.default)
            out[o.name] = o.check(v) if v is not None else None
        return self.validate(out)

    def validate(self, options):
        """Cross-option checks of a subclass (the default returns ``options``).

        Parameters
        ----------
        options : dict
            The individually checked options.

        Returns
        -------
        dict
            The options.
        """
        return options

    def command(self, **options):
        """Return the shell command that computes this study with these options.

        Parameters
        ----------
        **options
            Option values (defaults are left out).

        Returns
        -------
        str
            ``python -m validation study NAME [flags]``.
        """
        import shlex

        words = ["python", "-m", "validation", "study", self.name]
        for o in self.options:
            v = options.get(o.name, o.default)
            if v is None or v == o.default:
                continue
            if o.kind is bool:
                words.append(o.flag if v else f"--no-{o.flag[2:]}")
            else:
                words += [o.flag, ",".join(map(str, v)) if o.many else str(v)]
        return shlex.join(words)

    @fill_doc
    def run(self, *, compute=False, store=None, executor="processes", workers=2, progress=True,
            missing="raise", **options):
        """Run (``compute=True``) or replay (``compute=False``) the study; return a :class:`StudyRun`.

        Parameters
        ----------
        compute : bool, optional
            False (default): read the committed store (or ``store``), compute
            nothing. True: compute the missing trials on ``store`` (default
            :meth:`default_store`), seeded from the committed store if it does
            not exist yet.
        store : path, optional
            The store to read / append to.
        %(executor)s %(workers)s %(progress)s
        missing : {"raise", "skip"}, optional
            A replay's answer to a trial the store lacks.
        **options
            The study's options (see ``options``).

        Returns
        -------
        StudyRun
            Counts, the results and the summary.

        Raises
        ------
        ValueError
            A bad option or store path (before anything is read or written).
        LookupError
            A replay that misses a planned trial (``missing="raise"``).
        """
        from hcizz.checks import check_int
        from hcizz.cli import check_output_file

        opts = self.check_options(**options)
        workers = check_int("workers", workers, low=1, high=1024)
        committed = self.committed_store()
        if compute:
            path = Path(store) if store is not None else self.default_store()
            check_output_file("store", path)
            from validation.engine.store import check_store_file

            check_store_file(path)
        else:
            path = Path(store) if store is not None else committed
            if path is None:
                raise ValueError(f"study {self.name} has no committed store to replay; run it with "
                                 f"compute=True (python -m validation study {self.name})")
            if not path.exists():
                raise ValueError(f"store must be an existing store to replay, got {str(path)!r}")
        if type(self).plan is not Study.plan and type(self).execute is Study.execute:
            # a fixed plan is built (and its size checked) before anything is read or written
            n = len(self.plan(**opts))
            if n > MAX_PLAN_TRIALS:
                raise ValueError(f"study {self.name}: the options plan {n} trials, more than "
                                 f"{MAX_PLAN_TRIALS}; use smaller lists or fewer seeds")
        t0 = time.perf_counter()
        seeded = False
        if compute and not path.exists() and committed is not None and committed.exists() \
                and path.resolve() != committed.resolve():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.seed.tmp")
            shutil.copyfile(committed, tmp)
            tmp.replace(path)
            seeded = True
            if progress:
                print(f"{self.name}: new store {path} starts from the committed {committed.name}",
                      file=sys.stderr)
        runner = Runner(self, path, compute=compute, executor=executor, workers=workers,
                        progress=progress, missing=missing)
        try:
            results = self.execute(runner, **opts)
        except BaseException:
            if seeded and runner.calls == 0:      # refused during the design: leave nothing behind
                path.unlink(missing_ok=True)
            raise
        summary = self.summarise(results, **opts)
        return StudyRun(study=self.name, store=str(path), compute=bool(compute), options=opts,
                        results=results, outcome=summary, trials=runner.trials,
                        computed=runner.computed, reused=runner.reused, failed=runner.failed,
                        missing=runner.n_missing, cpu_seconds=runner.cpu_seconds,
                        seconds=time.perf_counter() - t0)
