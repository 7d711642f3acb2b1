"""Grids of token-retrieval runs and the analyses built on them: the standard configurations,
the grid trial, success fractions and boundary fits, random against orthogonal embeddings,
the MLP-width and step-size scans and the bulk SNR model.

A grid is a list of parameter records of the trial :func:`grid_trial`
(:func:`grid_params`): run by :func:`run_grid` (a plain loop, or the sweep
engine :func:`validation.engine.run_sweep`), or by the study
``token_retrieval.grid`` (:mod:`validation.studies.token_retrieval_grid`,
which stores and resumes them).  The analyses take the runs' records:
:func:`fits`, :func:`contrast`, :func:`mlp_boundaries`, :func:`beta_rows`,
:func:`snr_comparison`.  One run is :func:`validation.token_retrieval.runs.run_config`;
the boundary fits are in :mod:`validation.token_retrieval.boundary`.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int
from hcizz.results import Result
from validation.engine.trials import trial

from . import theory as th
from ._docparams import fill_doc, preset_scan
from .boundary import aggregate, boundary_points, fit_boundary, logistic_fit, multiplicative_test
from .runs import check_memory_config, check_run_options, compare_gd, run_config
from .task import check_sizes

__all__ = ["PRESETS", "RUN_SETTINGS", "THEORY_INPUTS", "PARTS", "grid_params", "grid_trial", "run_grid",
           "grid_records", "plan", "group", "fits", "contrast",
           "orthogonal_contrast", "mlp_boundaries", "mlp_theory", "mlp_scan", "beta_rows", "beta_scan",
           "snr_comparison", "gd_comparison", "OrthogonalContrast", "MLPScan", "BetaScan", "SNRComparison"]


#: The standard configurations ``"quick"`` and ``"full"`` (the report's quick and full modes, the
#: study ``token_retrieval.grid`` and the ``--quick`` switch of ``python -m validation token-retrieval``):
#:
#: * ``grid``: the main grid ``Ns x ds x Ls`` with ``seeds`` seeds per point;
#: * ``orthogonal``: random against one-hot embeddings at one ``d`` (``V = 4 N``, so ``N <= (d - 2) / 4``);
#: * ``mlp``: the recall boundary with a fixed random MLP of width ``m`` in ``ms`` at one ``L``;
#: * ``beta``: the boundaries for ``||W1||_F = beta`` in ``betas`` at one ``d``;
#: * ``moments``: the ``(N, d, L, kind)`` of the moment check and its tasks per configuration;
#: * ``gd``: the ``(N, d, L)`` of the early phase against full training, its steps and rate;
#: * ``theory``: the ``ds x Ls`` over which the predicted boundaries and the counting bound are drawn.
PRESETS = {
    "quick": {
        "grid": dict(Ns=(4, 16, 64), ds=(32, 128), Ls=(4, 16), seeds=2),
        "orthogonal": dict(d=64, Ns=(2, 4, 8, 15), Ls=(4, 16), seeds=2),
        "mlp": dict(ds=(64,), ms=(64, 256), Ns=(2, 4, 8, 16, 32), L=4, seeds=2),
        "beta": dict(d=64, Ns=(4, 16, 64), Ls=(4, 16), betas=(3.0, 10.0, 30.0), seeds=2),
        "moments": dict(configs=((16, 256, 4, "random"), (32, 64, 8, "random")), seeds=3),
        "gd": dict(configs=((8, 64, 4),), steps=100, lr=0.05),
        "theory": dict(ds=(32, 64, 128, 256), Ls=(4, 16, 64)),
    },
    "full": {
        "grid": dict(Ns=(4, 8, 16, 32, 64, 128, 256, 512), ds=(32, 64, 128, 256), Ls=(4, 8, 16, 32, 64),
                     seeds=8),
        "orthogonal": dict(d=256, Ns=(2, 4, 8, 16, 32, 63), Ls=(4, 16), seeds=8),
        "mlp": dict(ds=(64, 128, 256), ms=(64, 256, 1024), Ns=(2, 4, 8, 16, 32, 64), L=4, seeds=8),
        "beta": dict(d=128, Ns=(4, 8, 16, 32, 64, 128), Ls=(4, 16), betas=(3.0, 10.0, 30.0), seeds=8),
        "moments": dict(configs=((16, 256, 4, "random"), (8, 64, 4, "random"), (64, 128, 16, "random"),
                                 (128, 32, 8, "random"), (32, 256, 64, "random"), (32, 256, 16, "orthogonal")),
                        seeds=16),
        "gd": dict(configs=((8, 64, 4), (32, 64, 4), (32, 128, 16), (128, 256, 8)), steps=400, lr=0.05),
        "theory": dict(ds=(32, 64, 128, 256), Ls=(4, 8, 16, 32, 64)),
    },
}


def _defaults(fn, names):
    sig = inspect.signature(fn).parameters
    return {k: sig[k].default for k in names}


#: The run options of every grid (the defaults of :func:`run_config`).
RUN_SETTINGS = _defaults(run_config, ("vocab_ratio", "eta", "beta", "kind", "noise", "trig_scale", "m"))
#: The inputs of the theory compared with the grids (the defaults of
#: :func:`validation.token_retrieval.theory.success_probs`, with ``V = 4 N``).
THEORY_INPUTS = {"V": "4N", **_defaults(th.success_probs, ("eta", "beta", "gamma", "tau", "m", "kind", "noise"))}


def _preset(preset):
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    return PRESETS[preset]


def _skippable(exc):
    """A configuration that cannot exist (:math:`N > V`, orthogonal :math:`d < V + 2`)."""
    return "kind='orthogonal'" in str(exc) or "when distinct" in str(exc)


@trial("token_retrieval.grid", aliases=("validation.token_retrieval.experiments:grid_trial",))
def grid_trial(params):
    """Run one configuration of a grid (:func:`grid_params`) as a trial of :func:`validation.engine.run_sweep`.

    The function is module level, with JSON in and out.

    Parameters
    ----------
    params : dict
        ``N``, ``d``, ``L``, ``seed`` (seed index, copied to the result),
        ``entropy`` (the :class:`numpy.random.SeedSequence` entropy of the
        run) and any keyword of :func:`run_config` (JSON values; ``dtype`` as
        a name such as ``"float64"``).

    Returns
    -------
    dict
        The :func:`run_config` result with ``seed`` added, or
        ``{"skipped": message}`` for a configuration that cannot exist.

    See Also
    --------
    validation.token_retrieval.experiments.grid_params
        Return the trial parameter records of the product grid ``Ns x ds x Ls``.
    validation.engine.run_sweep : Run ``fn`` on every parameter record of ``params``; resumable, parallel.

    References
    ----------
    docs/sweeps.md#writing-a-trial
    """
    p = dict(params)
    entropy, s = p.pop("entropy"), p.pop("seed")
    N, d, L = p.pop("N"), p.pop("d"), p.pop("L")
    try:
        r = run_config(N, d, L, seed=np.random.default_rng(np.random.SeedSequence(entropy)), **p)
    except ValueError as exc:
        if _skippable(exc):
            return {"skipped": str(exc)}
        raise
    r["seed"] = s
    return r


#: Most seeds per grid point, and most runs (grid points x seeds) of one grid.
MAX_SEEDS = 10_000
MAX_RUNS = 1_000_000


def _check_grid(Ns, ds, Ls, seeds, seed, kw):
    """Every argument of a grid, once, before any run (sizes, seeds, run options, memory)."""
    Ns = [check_sizes(N=n)["N"] for n in Ns]
    ds = [check_sizes(d=d)["d"] for d in ds]
    Ls = [check_sizes(L=L)["L"] for L in Ls]
    for name, v in (("Ns", Ns), ("ds", ds), ("Ls", Ls)):
        if not v:
            raise ValueError(f"{name} must hold at least one value, got []")
    seeds = check_int("seeds", seeds, low=1, high=MAX_SEEDS)
    n_runs = len(Ns) * len(ds) * len(Ls) * seeds
    if n_runs > MAX_RUNS:                      # a bound on the plan's memory and the grid's time
        raise ValueError(f"a grid must have at most {MAX_RUNS} runs, got {len(Ns)} N x {len(ds)} d x "
                         f"{len(Ls)} L x {seeds} seeds = {n_runs}")
    seed = check_int("seed", seed, low=0)
    try:
        opts = check_run_options(**kw)
    except TypeError:
        known = ("V", "vocab_ratio", "kind", "m", "eta", "beta", "gamma", "trig_scale", "noise", "dtype")
        bad = sorted(set(kw) - set(known))
        raise ValueError(f"run options must be among {', '.join(known)}, got {', '.join(bad)}") from None
    # the largest run of the grid must fit in memory before any run starts
    V = opts["V"] if opts["V"] is not None else max(2, round(opts["vocab_ratio"] * max(Ns)))
    check_memory_config(max(Ns), max(ds), max(Ls), V, opts["m"], opts["dtype"].itemsize)
    return Ns, ds, Ls, seeds, seed


def grid_params(Ns, ds, Ls, *, seeds=3, seed=0, **kw):
    """Return the trial parameter records of the product grid ``Ns x ds x Ls``.

    Parameters
    ----------
    Ns, ds, Ls : sequence of int
        Grid values of ``N`` (>= 1), ``d`` (>= 1) and ``L`` (>= 2).
    seeds : int
        Seeds per grid point (>= 1).
    seed : int
        Root seed (>= 0).
    **kw
        Options of :func:`run_config` (checked here; ``dtype`` written by name).

    Returns
    -------
    list of dict
        One :func:`grid_trial` record per ``(L, d, N, s)``, ``L`` outermost;
        the run's randomness is ``SeedSequence([seed, i_L, i_d, i_N, s])``
        (``i_*`` the positions in the grid).

    Raises
    ------
    ValueError
        A size, seed or option out of range, or a largest run that does not
        fit in memory (nothing is run).

    See Also
    --------
    validation.token_retrieval.experiments.grid_trial
        Run one configuration of a grid (``grid_params``) as a trial of ``run_sweep``.
    validation.token_retrieval.experiments.run_grid : Run ``run_config`` over the product grid ``Ns x ds x Ls``.

    References
    ----------
    docs/token_retrieval.md#limitations

    Examples
    --------
    >>> [(q["N"], q["seed"], q["entropy"]) for q in grid_params((2, 4), (16,), (3,), seeds=1)]
    [(2, 0, [0, 0, 0, 0, 0]), (4, 0, [0, 0, 0, 1, 0])]
    """
    Ns, ds, Ls, seeds, seed = _check_grid(list(Ns), list(ds), list(Ls), seeds, seed, kw)
    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = np.dtype(kw["dtype"]).name
    root = np.random.SeedSequence(seed)
    return [{"N": N, "d": d, "L": L, "seed": s, "entropy": [root.entropy, i, j, k, s], **kw}
            for i, L in enumerate(Ls) for j, d in enumerate(ds) for k, N in enumerate(Ns)
            for s in range(seeds)]


@fill_doc
def run_grid(Ns, ds, Ls, *, seeds=3, seed=0, progress=None, executor=None, store=None,
             workers=None, **kw):
    """Run :func:`run_config` over the product grid ``Ns x ds x Ls``.

    Every argument is checked (and the memory of the largest run) before the
    first run.

    Parameters
    ----------
    Ns, ds, Ls : sequence of int
        Grid values of ``N``, ``d`` and ``L``.
    seeds : int
        Independent seeds per grid point (>= 1), derived from ``seed`` by
        ``SeedSequence([seed, i_L, i_d, i_N, s])``.
    seed : int
        Root seed (>= 0).
    progress : callable, optional
        Called with one progress line per ``(L, d)`` slice (serial path);
        with an ``executor``, any truthy value turns on the engine's own
        progress lines on stderr.
    executor : {None, "inprocess", "processes", "dask"}
        None (default): a plain loop in this process.  Otherwise the grid
        runs through :func:`validation.engine.run_sweep` (trial
        :func:`grid_trial`): parallel workers, and with ``store`` a
        resumable JSONL store.  The results are the same, bit for bit.
    store : str or Path, optional
        JSONL store of :func:`~validation.engine.run_sweep` (needs an
        ``executor``).
    workers : int, optional
        Worker processes (``executor="processes"`` or ``"dask"``).
    **kw
        Passed to :func:`run_config`.

    Returns
    -------
    list of dict
        The :func:`run_config` results, with ``seed`` (the seed index)
        added.  Configurations with :math:`N > V` or an orthogonal
        :math:`d < V + 2` are skipped.

    See Also
    --------
    validation.token_retrieval.runs.run_config
        Run the early phase once on a fresh task and return its success statistics.
    validation.token_retrieval.experiments.grid_records : Run ``run_grid`` on the main grid of a preset (``PRESETS``).

    %(ref_experiments)s

    Examples
    --------
    >>> recs = run_grid((2, 4), (16,), (3,), seeds=2)
    >>> [(r["N"], r["seed"]) for r in recs]
    [(2, 0), (2, 1), (4, 0), (4, 1)]
    """
    params = grid_params(Ns, ds, Ls, seeds=seeds, seed=seed, **kw)
    if executor is not None:
        return _run_grid_engine(params, progress, executor, store, workers)
    if store is not None or workers is not None:
        raise ValueError("store and workers need an executor (e.g. executor='processes'), "
                         f"got executor=None with store={store!r}, workers={workers!r}")
    Ls, ds = list(dict.fromkeys(q["L"] for q in params)), list(dict.fromkeys(q["d"] for q in params))
    out, slice_ = [], None
    for q in params:
        if progress and (q["L"], q["d"]) != slice_:
            slice_ = (q["L"], q["d"])
            i, j = q["entropy"][1], q["entropy"][2]
            progress(f"token_retrieval grid: L={q['L']} d={q['d']} ({i * len(ds) + j + 1}/{len(Ls) * len(ds)})")
        r = grid_trial(q)
        if "skipped" not in r:
            out.append(r)
    return out


def _run_grid_engine(params, progress, executor, store, workers):
    from validation.engine import run_sweep

    recs = run_sweep(grid_trial, params, store=store, executor=executor, workers=workers,
                     progress=bool(progress), label="token_retrieval grid")
    bad = [r for r in recs if r["status"] != "ok"]
    if bad:
        e = bad[0]["error"]
        raise (ValueError if e["type"] == "ValueError" else RuntimeError)(
            f"{len(bad)} of {len(recs)} grid runs failed; first ({bad[0]['params']}): "
            f"{e['type']}: {e['message']}")
    return [r["result"] for r in recs if "skipped" not in r["result"]]


@fill_doc
def grid_records(preset, *, seed=0, Ns=None, ds=None, Ls=None, seeds=None, progress=None, **kw):
    """Run :func:`run_grid` on the main grid of a preset (:data:`~validation.token_retrieval.experiments.PRESETS`).

    Any of ``Ns``, ``ds``, ``Ls``, ``seeds`` may be overridden.

    Parameters
    ----------
    preset : {"quick", "full"}
        The configuration.
    seed : int, optional
        Root seed.
    Ns, ds, Ls : tuple of int, optional
        Grid values replacing the preset's.
    seeds : int, optional
        Seeds per grid point replacing the preset's.
    progress : callable, optional
        Progress callback, as in :func:`run_grid`.
    **kw
        Passed to :func:`run_grid` (and on to :func:`run_config`).

    Returns
    -------
    records : list of dict
        The :func:`run_grid` results.
    grid : dict
        The grid used (``Ns``, ``ds``, ``Ls``, ``seeds``).

    See Also
    --------
    validation.token_retrieval.experiments.run_grid : Run ``run_config`` over the product grid ``Ns x ds x Ls``.
    validation.token_retrieval.experiments.plan : Return the grids of a preset as ``(part, label, params)`` triples.

    %(ref_experiments)s
    """
    g = dict(_preset(preset)["grid"])
    for k, v in (("Ns", Ns), ("ds", ds), ("Ls", Ls), ("seeds", seeds)):
        if v is not None:
            g[k] = v
    run_kw = {k: v for k, v in kw.items() if k not in ("executor", "store", "workers")}
    _check_grid(list(g["Ns"]), list(g["ds"]), list(g["Ls"]), g["seeds"], seed, run_kw)   # before any work
    if kw.get("workers") is not None:
        check_int("workers", kw["workers"], low=1, high=1024)
    if kw.get("store") is not None:      # a folder, a FIFO or an unwritable place: refused before any run
        from hcizz.cli import check_output_file
        from validation.engine.store import check_store_file

        check_output_file("store", kw["store"])
        check_store_file(kw["store"])
    return run_grid(g["Ns"], g["ds"], g["Ls"], seeds=g["seeds"], seed=seed, progress=progress,
                    **kw), g


#: The parts of a preset's plan, in order.
PARTS = ("grid", "orthogonal", "mlp", "beta")


@fill_doc
def plan(preset, *, seed=0, parts=PARTS):
    """Return the grids of a preset as ``(part, label, params)`` triples.

    Parameters
    ----------
    preset : {"quick", "full"}
        A configuration of :data:`PRESETS`.
    seed : int, optional
        Root seed of every grid.
    parts : sequence of str, optional
        Among :data:`PARTS`.

    Returns
    -------
    list of tuple
        ``("grid", None, params)`` (the main grid), ``("orthogonal", kind,
        params)`` for both embedding kinds, ``("mlp", m, params)`` for ``m`` in
        ``(None,) + ms`` and ``("beta", beta, params)`` for each step size,
        for the parts asked for; ``params`` are :func:`grid_params` records.

    See Also
    --------
    validation.token_retrieval.experiments.group : Group the results of a flattened ``plan`` by part and label.
    validation.token_retrieval.experiments.grid_trial
        Run one configuration of a grid (``grid_params``) as a trial of ``run_sweep``.

    %(ref_experiments)s

    Examples
    --------
    >>> [(part, label, len(params)) for part, label, params in plan("quick", parts=("grid", "orthogonal"))]
    [('grid', None, 24), ('orthogonal', 'random', 16), ('orthogonal', 'orthogonal', 16)]
    """
    P = _preset(preset)
    bad = [q for q in parts if q not in PARTS]
    if bad:
        raise ValueError(f"parts must be among {', '.join(PARTS)}, got {bad[0]!r}")
    out = []
    for part in parts:
        c = P[part]
        if part == "grid":
            out.append(("grid", None, grid_params(c["Ns"], c["ds"], c["Ls"], seeds=c["seeds"], seed=seed)))
        elif part == "orthogonal":
            out += [("orthogonal", kind, grid_params(c["Ns"], (c["d"],), c["Ls"], seeds=c["seeds"], seed=seed,
                                                     kind=kind)) for kind in ("random", "orthogonal")]
        elif part == "mlp":
            out += [("mlp", m, grid_params(c["Ns"], c["ds"], (c["L"],), seeds=c["seeds"], seed=seed, m=m))
                    for m in (None,) + tuple(c["ms"])]
        else:
            out += [("beta", b, grid_params(c["Ns"], (c["d"],), c["Ls"], seeds=c["seeds"], seed=seed, beta=b))
                    for b in c["betas"]]
    return out


@fill_doc
def group(parts, results):
    """Group the results of a flattened :func:`~validation.token_retrieval.experiments.plan` by part and label.

    Parameters
    ----------
    parts : list of tuple
        As returned by :func:`plan`.
    results : list of dict
        One :func:`grid_trial` result per parameter record, in plan order.

    Returns
    -------
    dict
        ``{"grid": runs, "orthogonal": {kind: runs}, "mlp": {m: runs}, "beta": {beta: runs}}``
        (configurations that cannot exist left out; parts not planned empty).

    See Also
    --------
    validation.token_retrieval.experiments.plan : Return the grids of a preset as ``(part, label, params)`` triples.
    validation.token_retrieval.experiments.fits
        Compute the boundary fits and the product-form test of a grid's records.

    %(ref_experiments)s
    """
    n = sum(len(params) for _, _, params in parts)
    if len(results) != n:
        raise ValueError(f"results must hold one result per planned run ({n}), got {len(results)}")
    out, i = {"grid": [], "orthogonal": {}, "mlp": {}, "beta": {}}, 0
    for part, label, params in parts:
        runs = [r for r in results[i:i + len(params)] if "skipped" not in r]
        i += len(params)
        if part == "grid":
            out["grid"] = runs
        else:
            out[part][label] = runs
    return out


def _run_part(preset, part, seed, progress):
    """Run one part of a preset's plan serially (the CLI scans)."""
    parts = plan(preset, seed=seed, parts=(part,))
    results = []
    for _, label, params in parts:
        if progress:
            progress(f"token_retrieval {part}: {label}")
        results += [grid_trial(q) for q in params]
    return group(parts, results)[part]


@fill_doc
def fits(records, *, seed=0):
    r"""Compute the boundary fits and the product-form test of a grid's records.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.
    seed : int, optional
        Seed of the bootstraps.

    Returns
    -------
    dict
        ``retrieval_boundary`` and ``recall_boundary``
        (:class:`~validation.token_retrieval.boundary.BoundaryFit`),
        ``retrieval_logistic``
        (:class:`~validation.token_retrieval.boundary.LogisticBoundary`) and
        ``retrieval_multiplicative``
        (:class:`~validation.token_retrieval.boundary.ProductFormTest`).

    See Also
    --------
    validation.token_retrieval.boundary.fit_boundary
        Fit the power law :math:`\mathrm{along}_c = C \prod_v v^{\alpha_v}` to the success boundary.
    validation.token_retrieval.boundary.logistic_fit
        Fit a logistic regression of per-run success on the logs of ``variables``.
    validation.token_retrieval.boundary.multiplicative_test
        Test by likelihood ratio whether the boundary depends on one product :math:`\prod_v v^{c_v}`.

    %(ref_the_boundary_law)s
    """
    return {
        "retrieval_boundary": fit_boundary(records, "retrieval", direction="up", rng=seed),
        "recall_boundary": fit_boundary(records, "recall", direction="down", rng=seed),
        "retrieval_logistic": logistic_fit(records, "retrieval"),
        "retrieval_multiplicative": multiplicative_test(records, "retrieval"),
    }


@fill_doc
def gd_comparison(preset, *, seed=0):
    """Compare the early phase with full training at the configurations of a preset (``gd``).

    Parameters
    ----------
    preset : {"quick", "full"}
        Configurations, steps and learning rate of :data:`PRESETS`.
    seed : int, optional
        Seed of every task.

    Returns
    -------
    list of GDComparison
        :func:`~validation.token_retrieval.runs.compare_gd` per configuration.

    See Also
    --------
    validation.token_retrieval.runs.compare_gd
        Compare the early phase with full training (Adam from zero) on the same task.
    validation.token_retrieval.early_phase.train_gd
        Train from zero with full-batch Adam or GD, for comparison with the early phase.

    %(ref_early_phase_full_training)s
    """
    c = _preset(preset)["gd"]
    return [compare_gd(N, d, L, seed=seed, steps=c["steps"], lr=c["lr"]) for (N, d, L) in c["configs"]]


@fill_doc
@dataclass(frozen=True)
class OrthogonalContrast(Result):
    """Random against orthogonal embeddings at equal ``d`` (:func:`contrast`).

    Parameters
    ----------
    %(grid_fields)s
    rows : list of dict
        ``kind``, ``key`` (``recall``, ``retrieval``, ``test_acc``,
        ``recall_acc``), ``N``, ``L``, ``value`` (simulated fraction), ``n``
        (runs) and, for ``recall``, ``retrieval`` and ``test_acc``,
        ``predicted`` (:func:`validation.token_retrieval.theory.success_probs`, :math:`V = 4 N`).

    See Also
    --------
    validation.token_retrieval.experiments.contrast
        Tabulate the success fractions per embedding kind beside the theory's prediction.
    validation.token_retrieval.experiments.orthogonal_contrast
        Contrast random with orthogonal (one-hot) embeddings at equal ``d`` and :math:`V = 4 N`.

    %(ref_the_orthonormal_case)s
    """

    d: int
    Ns: list
    Ls: list
    seeds: int
    rows: list


_PRED_KEY = {"recall": "p_recall", "retrieval": "p_retrieval", "test_acc": "test_acc"}


@fill_doc
def contrast(records, *, d, Ns, Ls, seeds):
    """Tabulate the success fractions per embedding kind beside the theory's prediction.

    Parameters
    ----------
    records : dict
        ``{"random": [...], "orthogonal": [...]}``: the runs of each kind
        (:func:`run_grid` results at one ``d``).
    %(grid_args)s

    Returns
    -------
    OrthogonalContrast
        The rows of both kinds.

    See Also
    --------
    validation.token_retrieval.experiments.orthogonal_contrast
        Contrast random with orthogonal (one-hot) embeddings at equal ``d`` and :math:`V = 4 N`.
    validation.token_retrieval.experiments.OrthogonalContrast
        Random against orthogonal embeddings at equal ``d`` (``contrast``).

    %(ref_the_orthonormal_case)s
    """
    rows = []
    for kind in ("random", "orthogonal"):
        for key in ("recall", "retrieval", "test_acc", "recall_acc"):
            for (N, dd, L), (f, n) in aggregate(records[kind], key).items():
                row = {"kind": kind, "key": key, "N": N, "L": L, "value": f, "n": n}
                if key in _PRED_KEY:
                    row["predicted"] = th.success_probs(N, d, L, V=4 * N, kind=kind)[_PRED_KEY[key]]
                rows.append(row)
    return OrthogonalContrast(d=d, Ns=list(Ns), Ls=list(Ls), seeds=seeds, rows=rows)


@fill_doc(scan_sections=preset_scan("orthogonal", "OrthogonalContrast", "contrast"))
def orthogonal_contrast(preset, *, seed=0, progress=None):
    """Contrast random with orthogonal (one-hot) embeddings at equal ``d`` and :math:`V = 4 N`.

    %(scan_sections)s

    See Also
    --------
    validation.token_retrieval.experiments.contrast
        Tabulate the success fractions per embedding kind beside the theory's prediction.
    validation.token_retrieval.comparison.scan_comparison
        Compare the runs of the embedding contrast and of the MLP-width scan with both theories.

    %(ref_the_orthonormal_case)s
    """
    c = _preset(preset)["orthogonal"]
    recs = _run_part(preset, "orthogonal", seed, progress)
    return contrast(recs, d=c["d"], Ns=c["Ns"], Ls=c["Ls"], seeds=c["seeds"])


@fill_doc
@dataclass(frozen=True)
class MLPScan(Result):
    r"""The recall boundary ``N_max`` with a fixed random MLP of width ``m`` (:func:`mlp_boundaries`).

    Parameters
    ----------
    L : int
        Sequence length.
    Ns, ds, ms : list of int
        The grid (``m = 0`` in the records: no MLP).
    %(seeds_per_point)s
    boundary : list of dict
        Boundary points ``{"d", "m", "N"}`` (downward crossing of 1/2 in ``N``).
    fit : BoundaryFit
        :math:`N_{\max} \sim d^a m^b` over the runs with an MLP.
    recall : dict
        ``{"(N, d, m)": fraction}``.

    See Also
    --------
    validation.token_retrieval.experiments.mlp_boundaries
        Locate the recall boundary per ``(d, m)`` and fit :math:`N_{\max} \sim d^a m^b`.
    validation.token_retrieval.experiments.mlp_theory
        Compute the theory's recall boundary with and without the MLP over ``ds x ({0} + ms)``.

    %(ref_step_3_logits)s
    """

    L: int
    Ns: list
    ds: list
    ms: list
    seeds: int
    boundary: list
    fit: object
    recall: dict


@fill_doc
def mlp_boundaries(records, *, L, Ns, ds, ms, seeds, seed=0):
    r"""Locate the recall boundary per ``(d, m)`` and fit :math:`N_{\max} \sim d^a m^b`.

    Parameters
    ----------
    records : dict
        ``{m: runs}`` with ``m = None`` for the runs without MLP.
    L : int
        Sequence length.
    Ns, ds, ms : sequence of int
        The grid.
    %(seeds_per_point)s
    seed : int, optional
        Seed of the fit's bootstrap.

    Returns
    -------
    MLPScan
        The boundary points, the fit and the recall fractions.

    See Also
    --------
    validation.token_retrieval.experiments.mlp_scan
        Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m``.
    validation.token_retrieval.experiments.mlp_theory
        Compute the theory's recall boundary with and without the MLP over ``ds x ({0} + ms)``.

    %(ref_step_3_logits)s
    """
    recs = []
    for m in (None,) + tuple(ms):
        for r in records[m]:
            recs.append({**r, "m": 0 if m is None else m})
    frac = aggregate(recs, "recall", by=("N", "d", "m"))
    pts = boundary_points(frac, by=("N", "d", "m"), direction="down")
    fit = fit_boundary([r for r in recs if r["m"] > 0], "recall", covars=("d", "m"),
                       direction="down", rng=seed)
    return MLPScan(L=L, Ns=list(Ns), ds=list(ds), ms=list(ms), seeds=seeds, boundary=pts, fit=fit,
                   recall={str(k): v[0] for k, v in frac.items()})


@fill_doc
def mlp_theory(ds, ms, L):
    r"""Compute the theory's recall boundary with and without the MLP over ``ds x ({0} + ms)``.

    Parameters
    ----------
    ds, ms : sequence of int
        Dimensions and MLP widths.
    L : int
        Sequence length.

    Returns
    -------
    dict
        ``{"d,m": N_max or None}`` (``m = 0``: no MLP;
        :func:`validation.token_retrieval.theory.recall_boundary`).

    See Also
    --------
    validation.token_retrieval.theory.recall_boundary
        Predict :math:`N_{\max}(d, L)`, the last ``N`` with :math:`P(\text{recall of all } N) \geq` ``level``.
    validation.token_retrieval.experiments.mlp_boundaries
        Locate the recall boundary per ``(d, m)`` and fit :math:`N_{\max} \sim d^a m^b`.

    %(ref_step_3_logits)s
    """
    return {f"{d},{0 if m is None else m}": th.recall_boundary(d, L, m=m)
            for d in ds for m in [None] + list(ms)}


@fill_doc(scan_sections=preset_scan("mlp", "MLPScan", "mlp_boundaries"))
def mlp_scan(preset, *, seed=0, progress=None):
    r"""Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m``.

    %(scan_sections)s

    See Also
    --------
    validation.token_retrieval.experiments.mlp_boundaries
        Locate the recall boundary per ``(d, m)`` and fit :math:`N_{\max} \sim d^a m^b`.
    validation.token_retrieval.experiments.MLPScan
        The recall boundary ``N_max`` with a fixed random MLP of width ``m`` (``mlp_boundaries``).

    %(ref_step_3_logits)s
    """
    c = _preset(preset)["mlp"]
    recs = _run_part(preset, "mlp", seed, progress)
    return mlp_boundaries(recs, seed=seed, **c)


@fill_doc
@dataclass(frozen=True)
class BetaScan(Result):
    r"""Sensitivity of the boundaries to the step size :math:`\beta = \|W_1\|_F` (:func:`beta_rows`).

    Parameters
    ----------
    %(grid_fields)s
    rows : list of dict
        Per ``beta``, success key and ``L``: ``N_c`` (simulated boundary, None
        without a crossing), ``attn_inf`` (mean informative attention) and
        ``N_c_pred`` (the theory's boundary at that ``beta``).

    See Also
    --------
    validation.token_retrieval.experiments.beta_rows
        Locate the boundaries and the mean informative attention per step size, beside the theory's boundary.
    validation.token_retrieval.experiments.beta_scan
        Measure the sensitivity of the boundaries to the step size :math:`\beta = \|W_1\|_F`.

    %(ref_early_phase_full_training)s
    """

    d: int
    Ns: list
    Ls: list
    seeds: int
    rows: list


@fill_doc
def beta_rows(records, *, d, Ns, Ls, seeds):
    r"""Locate the boundaries and the mean informative attention per step size, beside the theory's boundary.

    Parameters
    ----------
    records : dict
        ``{beta: runs}`` at one ``d``.
    %(grid_args)s

    Returns
    -------
    BetaScan
        One row per ``beta``, success key and ``L``.

    See Also
    --------
    validation.token_retrieval.experiments.beta_scan
        Measure the sensitivity of the boundaries to the step size :math:`\beta = \|W_1\|_F`.
    validation.token_retrieval.theory.retrieval_boundary
        Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.

    %(ref_early_phase_full_training)s
    """
    rows = []
    for beta, recs in records.items():
        for key, direction in (("retrieval", "up"), ("recall", "down")):
            fr = aggregate(recs, key)
            bp = {b["L"]: b["N"] for b in boundary_points(fr, direction=direction)}
            pred = th.retrieval_boundary if key == "retrieval" else th.recall_boundary
            for L in Ls:
                rows.append({"beta": beta, "key": key, "L": L, "N_c": bp.get(L),
                             "attn_inf": float(np.mean([r["attn_inf"] for r in recs if r["L"] == L])),
                             "N_c_pred": pred(d, L, beta=beta)})
    return BetaScan(d=d, Ns=list(Ns), Ls=list(Ls), seeds=seeds, rows=rows)


@fill_doc(scan_sections=preset_scan("beta", "BetaScan", "beta_rows"))
def beta_scan(preset, *, seed=0, progress=None):
    r"""Measure the sensitivity of the boundaries to the step size :math:`\beta = \|W_1\|_F`.

    %(scan_sections)s

    See Also
    --------
    validation.token_retrieval.experiments.beta_rows
        Locate the boundaries and the mean informative attention per step size, beside the theory's boundary.
    validation.token_retrieval.experiments.BetaScan
        Sensitivity of the boundaries to the step size :math:`\beta = \|W_1\|_F` (``beta_rows``).

    %(ref_early_phase_full_training)s
    """
    c = _preset(preset)["beta"]
    recs = _run_part(preset, "beta", seed, progress)
    return beta_rows(recs, d=c["d"], Ns=c["Ns"], Ls=c["Ls"], seeds=c["seeds"])


@fill_doc
@dataclass(frozen=True)
class SNRComparison(Result):
    r"""The bulk SNR models against the measured success of one key (:func:`snr_comparison`).

    Parameters
    ----------
    key : {"recall", "retrieval"}
        The success flag.
    n_configs : int
        Configurations compared.
    boundary : list of dict
        Per measured boundary point: ``d``, ``L``, ``N_measured``, ``N_snr``,
        ``N_margin`` (None where the model has no crossing).
    mean_abs_diff_snr, mean_abs_diff_margin : float
        Mean absolute difference of the success fractions.
    mean_log_ratio_snr, sd_log_ratio_snr : float or None
        Mean and standard deviation of :math:`\log(N_{\mathrm{snr}} / N_{\mathrm{measured}})`.
    n_matched_snr : int
        Boundary points with an SNR crossing.

    See Also
    --------
    validation.token_retrieval.experiments.snr_comparison
        Compare SNR predictions with measured success, per configuration and at the boundary.
    validation.token_retrieval.success.gaussian_success_prob
        Compute ``Phi(mean / std) ** n``, the Gaussian-model probability that all margins are positive.

    %(ref_retrieval_probability)s
    """

    key: str
    n_configs: int
    boundary: list
    mean_abs_diff_snr: float
    mean_abs_diff_margin: float
    mean_log_ratio_snr: float | None
    sd_log_ratio_snr: float | None
    n_matched_snr: int


@fill_doc
def snr_comparison(records):
    """Compare SNR predictions with measured success, per configuration and at the boundary.

    ``snr`` is the extreme-value Gaussian model of the bulk score statistics
    (:func:`~validation.token_retrieval.success.extreme_success_prob`),
    ``margin`` the Gaussian model of the per-sample margins.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.

    Returns
    -------
    list of SNRComparison
        One per success key (``recall``, ``retrieval``).

    See Also
    --------
    validation.token_retrieval.success.extreme_success_prob
        Compute the Gaussian extreme-value model of "all ``n`` samples succeed".
    validation.token_retrieval.experiments.SNRComparison
        The bulk SNR models against the measured success of one key (``snr_comparison``).

    %(ref_retrieval_probability)s
    """
    rows = []
    for key, direction in (("recall", "down"), ("retrieval", "up")):
        meas = aggregate(records, key)
        diffs, preds = {}, {}
        for model in ("snr", "margin"):
            pred = aggregate(records, f"p_{key}_{model}")
            preds[model] = {(b["d"], b["L"]): b["N"]
                            for b in boundary_points(pred, direction=direction)}
            diffs[model] = float(np.mean([abs(meas[k][0] - pred[k][0]) for k in meas]))
        bnd = [{"d": b["d"], "L": b["L"], "N_measured": b["N"], "N_snr": preds["snr"].get((b["d"], b["L"])),
                "N_margin": preds["margin"].get((b["d"], b["L"]))}
               for b in boundary_points(meas, direction=direction)]
        lr = [np.log(p["N_snr"] / p["N_measured"]) for p in bnd if p["N_snr"]]
        rows.append(SNRComparison(
            key=key, n_configs=len(meas), boundary=bnd, mean_abs_diff_snr=diffs["snr"],
            mean_abs_diff_margin=diffs["margin"], mean_log_ratio_snr=float(np.mean(lr)) if lr else None,
            sd_log_ratio_snr=float(np.std(lr, ddof=1)) if len(lr) > 1 else None, n_matched_snr=len(lr)))
    return rows
