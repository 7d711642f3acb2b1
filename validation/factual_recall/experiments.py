r"""The four factual-recall experiments of the report (docs/factual_recall.md).

1. :func:`memory_capacity_experiment`: largest ``N`` stored at >= 99% accuracy by
   linear (:math:`d^2` params) and MLP (:math:`2 m d` params) associative memories,
   found by bisection over ``N``; fits :math:`N \ln N = c\, d^2` and :math:`N = c\, m d`.
2. :func:`transformer_capacity_experiment`: facts stored by the one-layer
   transformer vs its parameter count over several ``d`` and ratios
   :math:`H d_h / d`, :math:`m / d`; facts-per-parameter constant with its spread.
3. :func:`tradeoff_experiment`: accuracy over (attention params, MLP params) at
   a fixed number of facts.
4. :func:`sequential_experiment`: total / relation / subject losses of the
   linear-attention model with detected stage boundaries.

"Stored" always means: trained to the end of a fixed step budget, then at least
``threshold`` (default 0.99) of the facts are recalled exactly (strict argmax).
At small ``N`` the threshold is coarse (for ``N < 100`` it means "no error"),
and the bisection assumes accuracy is monotone in ``N``, which a single seed
only approximates; the capacities are therefore lower-bound-like estimates
tied to the step budget.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from hcizz.estimate import Estimate
from validation.optim import adam_loop, warmup_cosine
from hcizz.results import Result
from validation.engine.trials import trial
from validation._docparams import fill_doc, returned_by
from .memories import train_memory
from .sequential import train_sequential
from .task import make_task, split_facts
from .transformer import OneLayerTransformer, TransformerShape, build_transformer
from .theory import PAPER_FACTS_PER_PARAM
from .trials import COSINE_FINAL, COSINE_WARMUP

__all__ = ["experiment_rng", "largest_passing", "train_transformer", "transformer_capacity",
           "memory_capacity_experiment", "transformer_capacity_experiment",
           "tradeoff_experiment", "sequential_experiment", "fit_through_origin",
           "TransformerTrainResult", "TransformerCapacity", "experiment_trial", "EXPERIMENTS",
           "run_experiments", "run_experiment"]


#: Stream index of each experiment: the CLI and the report section derive the
#: generator of experiment ``name`` from the root seed as
#: ``default_rng([seed, 4, STREAMS[name]])``, so both print the same numbers.
STREAMS = {"memory": 1, "transformer": 2, "tradeoff": 3, "sequential": 4}


@fill_doc
def experiment_rng(seed, name):
    """Return the generator of experiment ``name`` for root ``seed`` (shared by CLI and report).

    Parameters
    ----------
    seed : int
        Root seed (>= 0).
    name : {"memory", "transformer", "tradeoff", "sequential"}
        The experiment (its stream index in ``STREAMS``).

    Returns
    -------
    Generator
        ``default_rng([seed, 4, STREAMS[name]])``.

    See Also
    --------
    validation.factual_recall.experiments.run_experiment : Runs one experiment with this generator.

    %(ref_experiments)s

    Examples
    --------
    >>> a, b = experiment_rng(0, "memory"), experiment_rng(0, "memory")
    >>> print(a.integers(10**9), b.integers(10**9))
    661957624 661957624
    """
    seed = check_int("seed", seed, low=0)
    if name not in STREAMS:
        raise ValueError(f"name must be one of {sorted(STREAMS)}, got {name!r}")
    return np.random.default_rng([seed, 4, STREAMS[name]])


def _progress(msg):
    print(f"[factual-recall] {msg}", file=sys.stderr, flush=True)


@trial("factual_recall.experiment", aliases=("validation.factual_recall.experiments:experiment_trial",))
def experiment_trial(params):
    """Run one experiment as a trial of :func:`validation.engine.run_sweep`.

    The report section runs its four experiments this way, on the report's
    worker pool, so that they run side by side; the numbers are those of the
    direct call ``<name>_experiment(quick=quick, rng=experiment_rng(seed, name))``.

    Parameters
    ----------
    params : dict
        ``name`` (``"memory"``, ``"transformer"``, ``"tradeoff"`` or
        ``"sequential"``), ``quick`` (bool) and ``seed`` (root seed, int >= 0).

    Returns
    -------
    dict
        The experiment's result (progress lines go to stderr).

    See Also
    --------
    validation.factual_recall.experiments.run_experiments : Runs several of these trials.
    validation.engine.run_sweep : The sweep engine that runs it.

    References
    ----------
    docs/sweeps.md#writing-a-trial; docs/factual_recall.md#measured-results
    """
    name = params["name"]
    fns = {"memory": memory_capacity_experiment, "transformer": transformer_capacity_experiment,
           "tradeoff": tradeoff_experiment, "sequential": sequential_experiment}
    if name not in fns:
        raise ValueError(f"name must be one of {sorted(fns)}, got {name!r}")
    return fns[name](quick=bool(params["quick"]), rng=experiment_rng(params["seed"], name))


#: The four experiments, longest first (so that two workers finish together).
EXPERIMENTS = ("transformer", "memory", "sequential", "tradeoff")


def _check_names(names):
    names = tuple(names)
    bad = [n for n in names if n not in STREAMS]
    if not names or bad:
        raise ValueError(f"experiments must be among {', '.join(EXPERIMENTS)}, got "
                         f"{bad[0] if bad else 'none'!r}")
    return names


@fill_doc
def run_experiments(names=EXPERIMENTS, *, quick=True, seed=0, executor="processes", workers=2,
                    progress=True):
    """Run several experiments side by side as trials of :func:`validation.engine.run_sweep`.

    What the report section shows as parts 1-4: each experiment is one
    :func:`experiment_trial`, run on the given pool (no store: every call
    trains), so its numbers are those of the direct call
    ``<name>_experiment(quick=quick, rng=experiment_rng(seed, name))``.

    Parameters
    ----------
    names : sequence of str, optional
        Experiments among :data:`EXPERIMENTS` (default all four, longest first).
    quick : bool, optional
        Quick (report ``--quick``) or full sizes.
    seed : int, optional
        Root seed (>= 0).
    executor : str or validation.engine.WorkerPool, optional
        Where the trials run (see :func:`validation.engine.run_sweep`).
    workers : int, optional
        Worker processes.
    progress : bool, optional
        Progress lines on stderr.

    Returns
    -------
    dict
        Experiment name -> its result (a plain dict payload, as returned by
        the experiment function).

    Raises
    ------
    ValueError
        An unknown experiment or a bad seed, before anything runs.
    RuntimeError
        If an experiment fails (with its error and traceback).

    See Also
    --------
    validation.factual_recall.experiments.experiment_trial : The trial of one experiment.
    validation.factual_recall.experiments.run_experiment : One experiment in this process.

    %(ref_measured_results)s
    """
    from validation.engine import run_sweep

    names = _check_names(names)
    seed = check_int("seed", seed, low=0)
    params = [{"name": n, "quick": bool(quick), "seed": seed} for n in names]
    recs = run_sweep(experiment_trial, params, executor=executor, workers=workers,
                     progress=progress, label="factual_recall experiments")
    bad = [r for r in recs if r["status"] != "ok"]
    if bad:
        e = bad[0]["error"]
        raise RuntimeError(f"factual_recall experiment {bad[0]['params']['name']!r} failed: "
                           f"{e['type']}: {e['message']}\n{e['traceback']}")
    return {p["name"]: r["result"] for p, r in zip(params, recs)}


@fill_doc
def run_experiment(name, *, quick=False, seed=0, out=None):
    """Run one experiment in this process, as ``python -m validation factual-recall NAME`` does.

    Parameters
    ----------
    name : {"memory", "transformer", "tradeoff", "sequential"}
        The experiment.
    quick : bool, optional
        Quick sizes.
    seed : int, optional
        Root seed (>= 0); the generator is :func:`experiment_rng` ``(seed, name)``.
    out : path, optional
        Also write the result as JSON to this file (checked before any work).

    Returns
    -------
    dict
        The experiment's result as plain JSON values, with ``seconds_total``
        and the ``command`` that reproduces it.

    Raises
    ------
    ValueError
        A bad name, seed or output path, before anything runs.

    See Also
    --------
    validation.factual_recall.experiments.run_experiments : Several experiments on a worker pool.
    validation.factual_recall.experiments.experiment_rng : The generator of each experiment.

    %(ref_experiments)s
    """
    from hcizz.cli import check_output_file
    from validation._io import atomic_write_json, to_jsonable

    (name,) = _check_names([name])
    seed = check_int("seed", seed, low=0)
    if out is not None:
        check_output_file("out", out)
    fn = {"memory": memory_capacity_experiment, "transformer": transformer_capacity_experiment,
          "tradeoff": tradeoff_experiment, "sequential": sequential_experiment}[name]
    t0 = time.perf_counter()
    res = to_jsonable(fn(quick=bool(quick), rng=experiment_rng(seed, name)))
    res["seconds_total"] = time.perf_counter() - t0
    res["command"] = ("python -m validation factual-recall " + name
                      + (" --quick" if quick else "") + f" --seed {seed}")
    if out is not None:
        atomic_write_json(out, res)
    return res


@fill_doc
def largest_passing(passes, lo, hi=None, *, rtol=0.1, max_n=10**7):
    r"""Find the largest integer ``n`` with ``passes(n)`` True, assuming monotonicity.

    Parameters
    ----------
    passes : callable
        ``passes(n) -> bool`` for an integer ``n``.
    lo : int
        Starting guess (>= 1).  If it fails, the search halves downwards.
    hi : int, optional
        A value believed to fail; found by doubling when omitted.
    rtol : float
        Stop when ``hi - lo <= max(1, rtol * lo)``.
    max_n : int
        Doubling cap.

    Returns
    -------
    n : int
        Largest passing value found (0 if even ``n = 1`` fails).
    evaluated : list of (int, bool)
        Every call made.

    See Also
    --------
    validation.factual_recall.experiments.transformer_capacity : The transformer capacity it searches.
    validation.factual_recall.experiments.memory_capacity_experiment : The memory capacities it searches.

    Notes
    -----
    Halving down from ``lo`` until a pass, doubling up until a failure, then
    bisection; :math:`O(\log(n / \mathrm{lo}) + \log(1 / \mathrm{rtol}))` calls.

    %(ref_experiments)s

    Examples
    --------
    >>> largest_passing(lambda n: n <= 37, 4, rtol=0)[0]
    37
    """
    lo = check_int("lo", lo, low=1)
    rtol = check_real("rtol", rtol, low=0, allow_array=False)
    max_n = check_int("max_n", max_n, low=lo)
    if hi is not None:
        hi = check_int("hi", hi, low=lo + 1)
    log = []

    def ev(n):
        ok = bool(passes(n))
        log.append((n, ok))
        return ok

    while not ev(lo):
        hi = lo
        if lo == 1:
            return 0, log
        lo = max(1, lo // 2)
    if hi is None:
        hi = 2 * lo
        while ev(hi):
            lo, hi = hi, 2 * hi
            if hi > max_n:
                return lo, log
    while hi - lo > max(1, rtol * lo):
        mid = (lo + hi) // 2
        if ev(mid):
            lo = mid
        else:
            hi = mid
    return lo, log


@fill_doc
def fit_through_origin(x, y):
    r"""Fit the slope of :math:`y = c x` by least squares, with its standard error and the ratio spread.

    The spread is that of the pointwise ratios :math:`y / x`.

    Parameters
    ----------
    x, y : array_like (n,)
        ``n >= 1`` points, ``x`` non-zero.

    Returns
    -------
    Estimate
        :math:`\mathrm{value} = \sum x y / \sum x^2`; ``stderr`` the usual regression standard
        error :math:`\sqrt{\sum r^2 / (n - 1) / \sum x^2}` (NaN for ``n = 1``);
        ``info`` has ``ratio_min``, ``ratio_max``, ``ratio_mean``,
        ``ratio_std`` of :math:`y / x`.

    See Also
    --------
    validation.factual_recall.fits.fit_origin_slope : Weighted fit of the same line, with its chi-square.
    validation.factual_recall.fits.fit_log_ratio : The same slope fitted in logs.

    %(ref_measured_results)s

    Examples
    --------
    >>> e = fit_through_origin([1, 2, 4], [0.5, 1.0, 2.0])
    >>> round(e.value, 6), round(e.stderr, 6)
    (0.5, 0.0)
    """
    x = check_real("x", x, allow_array=True)
    y = check_real("y", y, allow_array=True)
    x, y = np.atleast_1d(x), np.atleast_1d(y)
    if x.ndim != 1 or x.shape != y.shape or x.size == 0:
        raise ValueError(f"x and y must be 1-d of one length >= 1, got shapes {x.shape}, "
                         f"{y.shape}")
    if not np.all(np.isfinite(x) & np.isfinite(y)) or np.any(x == 0):
        raise ValueError("x must be finite and non-zero and y finite")
    c = float(x @ y / (x @ x))
    resid = y - c * x
    n = len(x)
    se = float(np.sqrt(resid @ resid / max(n - 1, 1) / (x @ x))) if n > 1 else float("nan")
    r = y / x
    return Estimate(c, se, n=n, info={"ratio_min": float(r.min()), "ratio_max": float(r.max()),
                                      "ratio_mean": float(r.mean()),
                                      "ratio_std": float(r.std(ddof=1)) if n > 1 else 0.0})


# ----------------------------------------------------------------------------- experiment 1

def memory_capacity_experiment(*, quick=True, rng=None, threshold=0.99, progress=_progress):
    r"""Measure the capacity of linear and MLP associative memories against the parameter count.

    Quick: linear :math:`d \in \{8, 16, 24, 32\}`, MLP ``(d, m)`` with :math:`m d` in a
    4-point range; full: more sizes and longer training.

    Parameters
    ----------
    quick : bool
        Quick (report ``--quick``) or full sizes.
    rng : None, int or Generator
        Randomness (:func:`experiment_rng` ``(seed, "memory")`` in the report).
    threshold : float
        Accuracy that counts as "stored".
    progress : callable
        ``progress(message)`` after each size.

    Returns
    -------
    dict
        A report payload (plain dict): ``linear`` (rows: d, params, N, N ln N,
        c) and ``linear_fit`` (:math:`N \ln N = c d^2`), ``mlp`` (rows: d, m,
        params, N, N/(m d)) and ``mlp_fit`` (:math:`N = c m d`), plus the settings.

    See Also
    --------
    validation.factual_recall.memories.train_memory : One training run of a memory.
    validation.factual_recall.experiments.fit_through_origin : The fit of capacity against parameters.

    Notes
    -----
    The linear memory is the OP of arXiv:2605.10795 with unit-sphere
    embeddings, so :math:`N \ln N / d^2` is compared with its finite-size capacity.

    References
    ----------
    arXiv:2412.06538; arXiv:2605.10795; docs/factual_recall.md#associative-memories

    Examples
    --------
    >>> res = memory_capacity_experiment(quick=True, rng=experiment_rng(0, "memory"))
    ... # doctest: +SKIP
    >>> round(res["linear_fit"]["value"], 3)  # doctest: +SKIP
    0.646
    """
    rng = check_rng(rng)
    threshold = check_real("threshold", threshold, low=0, high=1, low_open=True)
    if quick:
        lin_d, lin_steps = [8, 16, 24, 32], 400
        mlp_dm, mlp_steps = [(8, 8), (8, 16), (16, 16), (16, 32)], 800
    else:
        lin_d, lin_steps = [8, 12, 16, 24, 32, 48, 64], 1500
        mlp_dm, mlp_steps = [(8, 8), (8, 16), (16, 16), (16, 32), (32, 32), (32, 64)], 3000
    n_classes = 2
    out = {"threshold": threshold, "linear_steps": lin_steps, "mlp_steps": mlp_steps,
           "mlp_classes": n_classes, "linear": [], "mlp": []}
    for d in lin_d:
        seed = int(rng.integers(2**31))
        t0 = time.perf_counter()
        N, log = largest_passing(
            lambda n: train_memory("linear", n, d, steps=lin_steps, rng=seed)["accuracy"]
            >= threshold, max(2, d * d // 8), rtol=0.05)
        row = {"d": d, "params": d * d, "N": N, "NlnN": N * math.log(max(N, 1)),
               "c": N * math.log(max(N, 1)) / d**2, "evaluated": log,
               "seconds": time.perf_counter() - t0}
        out["linear"].append(row)
        progress(f"linear memory d={d}: N={N} (N ln N / d^2 = {row['c']:.3f})")
    for d, m in mlp_dm:
        seed = int(rng.integers(2**31))
        t0 = time.perf_counter()
        N, log = largest_passing(
            lambda n: train_memory("mlp", n, d, m=m, n_classes=n_classes, steps=mlp_steps,
                                   rng=seed)["accuracy"] >= threshold, m * d, rtol=0.05)
        row = {"d": d, "m": m, "params": 2 * m * d, "N": N, "c": N / (m * d),
               "evaluated": log, "seconds": time.perf_counter() - t0}
        out["mlp"].append(row)
        progress(f"MLP memory d={d} m={m}: N={N} (N / (m d) = {row['c']:.3f})")
    out["linear_fit"] = fit_through_origin([r["params"] for r in out["linear"]],
                                           [r["NlnN"] for r in out["linear"]]).to_dict()
    out["mlp_fit"] = fit_through_origin([r["d"] * r["m"] for r in out["mlp"]],
                                        [r["N"] for r in out["mlp"]]).to_dict()
    return out


# ----------------------------------------------------------------------------- transformer

@fill_doc(record_links=returned_by(
    "validation.factual_recall.experiments.train_transformer",
    "docs/factual_recall.md#model"))
@dataclass(frozen=True)
class TransformerTrainResult(Result):
    """Outcome of :func:`train_transformer`, a frozen record with ``to_dict()``.

    Parameters
    ----------
    accuracy : float
        Fraction of (fact, sequence) pairs recalled.
    loss : float
        Final training loss.
    params : int
        Parameter count.
    attention_params : int
        Parameters of the attention layer.
    mlp_params : int
        Parameters of the MLP.

    %(record_links)s
    """

    accuracy: float
    loss: float
    params: int
    attention_params: int
    mlp_params: int


@fill_doc(record_links=returned_by(
    "validation.factual_recall.experiments.transformer_capacity",
    "docs/factual_recall.md#experiments"))
@dataclass(frozen=True)
class TransformerCapacity(TransformerShape):
    r"""Outcome of :func:`transformer_capacity`, a frozen record with ``to_dict()``.

    Parameters
    ----------
    d, H, d_h, m : int
        Model sizes.
    params : int
        Parameter count.
    facts : int
        Largest number of facts :math:`S R` stored.
    facts_per_param : float
        :math:`\mathrm{facts} / \mathrm{params}`.
    evaluated : list
        ``(S R, accuracy)`` of every trial.
    D, T : int
        Answers per relation and sequence length.
    steps, batch : int
        Training budget.
    lr : float
        Peak learning rate.

    %(record_links)s
    """

    facts: int
    facts_per_param: float
    evaluated: list
    D: int
    T: int
    steps: int
    batch: int
    lr: float


def _check_transformer_memory(task, d, H, d_h, m, batch, dtype):
    r"""Refuse (``ValueError``) a transformer run whose arrays cannot fit in memory.

    Lower bound of what exists at once: the parameters and Adam's two moments
    (:math:`3 \times`), and per step the activations of one batch (embedded tokens, the
    ``H`` heads' queries, keys and values, attention weights, MLP hidden layer
    and output logits).  See ``docs/reliability.md#sizes``.
    """
    from validation._memory import check_memory

    item = np.dtype(dtype).itemsize
    T, V = task.T, task.vocab
    params = V * d + 4 * H * d_h * d + 2 * m * d + task.n_answers * d
    acts = batch * T * (d + 3 * H * d_h + H * T) + batch * (m + task.n_answers)
    check_memory(item * (3.0 * params + 2.0 * acts),
                 f"factual-recall transformer d={d} H={H} d_h={d_h} m={m} vocab={V} T={T} "
                 f"batch={batch}: parameters + Adam moments + one batch of activations")


@fill_doc
def train_transformer(task, d, H, d_h, m, *, steps=2000, batch=256, lr=3e-3, rng=None,
                      eval_repeats=1, dtype=np.float32):
    """Train the one-layer transformer on fresh batches of ``task`` and measure its accuracy.

    Parameters
    ----------
    task : FactTask
        The facts and the sequence distribution.
    d, H, d_h, m : int
        Model sizes (see :class:`OneLayerTransformer`).
    steps, batch : int
        Adam steps and sequences per step (fresh each step).
    lr : float
        Peak learning rate (5% warm-up, cosine decay to 1%).
    rng : None, int or Generator
        Randomness (initialisation, batches, evaluation sequences).
    eval_repeats : int
        Each fact is evaluated on this many fresh sequences.
    dtype : numpy dtype
        Training dtype.

    Returns
    -------
    TransformerTrainResult
        ``accuracy`` (fraction of (fact, sequence) pairs recalled), ``loss``
        (final training loss), ``params``, ``attention_params``, ``mlp_params``.

    See Also
    --------
    validation.factual_recall.transformer.build_transformer : The model it trains.
    validation.optim.adam_loop : The training loop.

    %(ref_model_paper)s

    Examples
    --------
    >>> task = make_task(2, 2, 2, T=4, rng=0)
    >>> r = train_transformer(task, 8, 1, 8, 8, steps=100, batch=32, lr=2e-2, rng=0)
    >>> r["params"], r["accuracy"]
    (384, 1.0)
    """
    steps = check_int("steps", steps, low=1)
    batch = check_int("batch", batch, low=1)
    lr = check_real("lr", lr, low=0, low_open=True, allow_array=False)
    eval_repeats = check_int("eval_repeats", eval_repeats, low=1)
    rng = check_rng(rng)
    _check_transformer_memory(task, d, H, d_h, m, batch, dtype)
    net = build_transformer(d, H, d_h, m, task=task, rng=rng, dtype=dtype)

    def evaluate(t):
        tok, y, _, _ = task.sample(batch, rng)      # a fresh batch every step
        loss, g, _ = net.loss(tok, y)
        return loss, g, None

    loss = adam_loop(net.params, evaluate, steps=steps, final=False,
                     lr=lambda t: warmup_cosine(t, steps, lr=lr, warmup=COSINE_WARMUP,
                                                final=COSINE_FINAL)).loss
    fs, fr = task.all_facts()
    fs, fr = np.tile(fs, eval_repeats), np.tile(fr, eval_repeats)
    correct = []
    for i in range(0, fs.size, 4096):
        tok, y, _, _ = task.sample(0, rng, subjects=fs[i:i + 4096], relations=fr[i:i + 4096])
        correct.append(net.loss(tok, y, grad=False)[2])
    acc = float(np.concatenate(correct).mean())
    return TransformerTrainResult(accuracy=acc, loss=loss, params=net.param_count,
                                  attention_params=net.attention_params, mlp_params=net.mlp_params)


def _check_positive_heads(H, d_h):
    H = check_int("H", H, low=0)
    d_h = check_int("d_h", d_h, low=0)
    if H * d_h <= 0:
        raise ValueError(f"H * d_h must be positive, got H={H}, d_h={d_h}")
    return H, d_h


@fill_doc
def transformer_capacity(d, H, d_h, m, *, D=8, T=16, steps=1500, batch=256, lr=1e-2,
                         threshold=0.99, eval_repeats=2, rng=None, start=None, rtol=0.1):
    """Largest number of facts :math:`S R` the transformer stores at >= ``threshold`` accuracy.

    Bisection over the number of facts ``n`` (``S, R`` from a square split, see
    :func:`~validation.factual_recall.task.split_facts`); each trial draws a fresh task and model.

    Parameters
    ----------
    d, H, d_h, m : int
        Model sizes (see :class:`OneLayerTransformer`).
    D : int
        Answers per relation.
    T : int
        Sequence length.
    steps, batch : int
        Adam steps and sequences per step.
    lr : float
        Peak learning rate.
    threshold : float
        Accuracy that counts as "stored".
    eval_repeats : int
        Fresh sequences per fact at evaluation.
    rng : None, int or Generator
        Randomness (one seed drawn, then per-``n`` seeds).
    start : int, optional
        First number of facts tried (default ``params // 40``).
    rtol : float
        Relative resolution of the bisection.

    Returns
    -------
    TransformerCapacity
        ``facts`` (largest stored :math:`S R`), ``params``, ``facts_per_param``,
        ``evaluated`` (list of (S R, accuracy)) and the settings.

    See Also
    --------
    validation.factual_recall.experiments.train_transformer : One training run at one number of facts.
    validation.factual_recall.experiments.largest_passing : The search over the number of facts.

    %(ref_experiments_paper)s

    Examples
    --------
    >>> r = transformer_capacity(8, 1, 8, 8, D=4, T=4, steps=60, batch=32, start=4,
    ...                          rng=0, rtol=0.5)
    >>> r["params"], r["facts_per_param"] == r["facts"] / r["params"]
    (384, True)
    """
    d = check_int("d", d, low=1)
    H, d_h = _check_positive_heads(H, d_h)
    m = check_int("m", m, low=0)
    rng = check_rng(rng)
    D = check_int("D", D, low=2)
    T = check_int("T", T, low=3)
    steps = check_int("steps", steps, low=1)
    batch = check_int("batch", batch, low=1)
    lr = check_real("lr", lr, low=0, low_open=True, allow_array=False)
    threshold = check_real("threshold", threshold, low=0, high=1, low_open=True,
                           allow_array=False)
    eval_repeats = check_int("eval_repeats", eval_repeats, low=1)
    rtol = check_real("rtol", rtol, low=0, allow_array=False)
    if start is not None:
        start = check_int("start", start, low=1)
    net_params = OneLayerTransformer.count_params(d, H, d_h, m)
    seed = int(rng.integers(2**31))
    trials = []

    def passes(n):
        S, R = split_facts(n)
        task = make_task(S, R, D, T=T, rng=seed + n)
        res = train_transformer(task, d, H, d_h, m, steps=steps, batch=batch, lr=lr,
                                rng=seed + 7 * n + 1, eval_repeats=eval_repeats)
        trials.append((S * R, res["accuracy"]))
        return res["accuracy"] >= threshold

    start = start or max(4, net_params // 40)
    n, _ = largest_passing(passes, start, rtol=rtol)
    S, R = split_facts(n) if n else (0, 0)
    facts = S * R
    return TransformerCapacity(d=d, H=H, d_h=d_h, m=m, params=net_params, facts=facts,
                               facts_per_param=facts / net_params, evaluated=trials, D=D, T=T,
                               steps=steps, batch=batch, lr=lr)


@fill_doc
def transformer_capacity_experiment(*, quick=True, rng=None, progress=_progress, D=8):
    """Measure the facts stored against the parameters over several ``d`` and shapes.

    The shapes vary the ratios :math:`H d_h / d` and :math:`m / d`.

    Quick: ``d = 16``, three shapes, ``T = 8``, 500 steps of 128 sequences; full:
    ``d = 16`` with :math:`(H d_h / d, m / d)` in {(1, 1), (0.5, 1), (2, 1), (1, 0.5), (1, 2)},
    ``d = 24`` with {(1, 1), (0.5, 2), (2, 0.5)}, ``d = 32`` with (1, 1); ``T = 16``,
    1000 steps of 256 sequences (sized for a shared 2-core machine).

    %(transformer_experiment_params)s

    Returns
    -------
    dict
        A report payload: ``rows`` (one per configuration), ``facts_per_param`` (Estimate dict of
        the least-squares slope of facts vs params, with ``info`` holding the
        min/max/mean/std of the per-configuration ratios) and the settings.

    See Also
    --------
    validation.factual_recall.experiments.transformer_capacity : The capacity of one shape.
    validation.factual_recall.experiments.tradeoff_experiment : Accuracy over attention and MLP sizes.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#comparison-with-the-paper

    Examples
    --------
    >>> res = transformer_capacity_experiment(quick=True,
    ...                                       rng=experiment_rng(0, "transformer"))
    ... # doctest: +SKIP
    >>> [r["facts"] for r in res["rows"]]  # doctest: +SKIP
    """
    rng = check_rng(rng)
    if quick:
        shapes = [(16, 2, 8, 16), (16, 4, 8, 8), (16, 1, 8, 32)]
        kw = dict(T=8, steps=500, batch=128, lr=1e-2, eval_repeats=2)
    else:
        ratios = {16: ((1, 1), (0.5, 1), (2, 1), (1, 0.5), (1, 2)),
                  24: ((1, 1), (0.5, 2), (2, 0.5)),
                  32: ((1, 1),)}
        shapes = []
        for d, rs in ratios.items():
            for a, mm in rs:
                hd = int(a * d)
                H = max(1, hd // 8)
                shapes.append((d, H, hd // H, int(mm * d)))
        kw = dict(T=16, steps=1000, batch=256, lr=1e-2, eval_repeats=2)
    rows = []
    for d, H, d_h, m in shapes:
        t0 = time.perf_counter()
        r = transformer_capacity(d, H, d_h, m, D=D, rng=rng, **kw).to_dict()
        r["seconds"] = time.perf_counter() - t0
        r["attn_ratio"] = H * d_h / d
        r["mlp_ratio"] = m / d
        rows.append(r)
        progress(f"transformer d={d} H={H} d_h={d_h} m={m}: {r['facts']} facts / "
                 f"{r['params']} params = {r['facts_per_param']:.4f} ({r['seconds']:.0f} s)")
    fit = fit_through_origin([r["params"] for r in rows], [r["facts"] for r in rows])
    return {"rows": rows, "facts_per_param": fit.to_dict(), "D": D, **kw,
            "quick": quick, "paper_facts_per_param": PAPER_FACTS_PER_PARAM}


@fill_doc
def tradeoff_experiment(*, quick=True, rng=None, progress=_progress, D=8):
    """Accuracy on a fixed set of facts over a grid of (attention, MLP) sizes.

    Attention size is varied through the number of heads ``H`` (``d_h = 8``),
    MLP size through ``m`` (``m = 0``: no MLP).

    %(transformer_experiment_params)s

    Returns
    -------
    dict
        A report payload: ``facts``, ``H`` and ``m`` grids, ``attention_params``,
        ``mlp_params`` and ``accuracy`` (2-d list indexed [i_H][i_m]).

    See Also
    --------
    validation.factual_recall.experiments.train_transformer : One training run of one shape.
    validation.factual_recall.fits.fit_boundary : The iso-capacity boundary of such a grid.

    %(ref_experiments_paper)s

    Examples
    --------
    >>> res = tradeoff_experiment(quick=True, rng=experiment_rng(0, "tradeoff"))
    ... # doctest: +SKIP
    >>> res["accuracy"][-1][0] >= 0.99  # attention alone, largest H  # doctest: +SKIP
    """
    rng = check_rng(rng)
    if quick:
        d, S, R, Hs, ms = 16, 8, 8, [1, 2, 4], [0, 16, 64]
        kw = dict(steps=600, batch=128, lr=1e-2, eval_repeats=2)
        T = 8
    else:
        d, S, R, Hs, ms = 24, 10, 10, [1, 2, 4, 8], [0, 12, 48, 96]
        kw = dict(steps=1000, batch=256, lr=1e-2, eval_repeats=2)
        T = 16
    d_h = 8
    task = make_task(S, R, D, T=T, rng=rng)
    acc = np.zeros((len(Hs), len(ms)))
    for i, H in enumerate(Hs):
        for j, m in enumerate(ms):
            res = train_transformer(task, d, H, d_h, m, rng=rng, **kw)
            acc[i, j] = res["accuracy"]
            progress(f"trade-off H={H} m={m}: accuracy {acc[i, j]:.3f}")
    return {"d": d, "d_h": d_h, "S": S, "R": R, "D": D, "T": T, "facts": S * R, "H": Hs, "m": ms,
            "attention_params": [OneLayerTransformer.count_params(d, H, d_h, 0) for H in Hs],
            "mlp_params": [OneLayerTransformer.count_params(d, 0, 0, m) for m in ms], "accuracy": acc.tolist(), **kw}


@fill_doc
def sequential_experiment(*, quick=True, rng=None, progress=_progress):
    """Run sequential learning of the one-hot linear-attention model.

    See :func:`validation.factual_recall.sequential.train_sequential`.

    Parameters
    ----------
    %(quick_sizes)s %(exp_rng)s
    progress : callable
        ``progress(message)`` at the end.

    Returns
    -------
    dict
        The curves, ``ln_DR``, ``ln_D``, the detected ``stages`` and ``seconds``.

    See Also
    --------
    validation.factual_recall.sequential.train_sequential : The training run it reports.
    validation.factual_recall.sequential.detect_stages : The stage boundaries it reads off.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> res = sequential_experiment(quick=True, rng=experiment_rng(0, "sequential"))
    ... # doctest: +SKIP
    >>> res["stages"]["order"]  # doctest: +SKIP
    'relation-first'
    """
    rng = check_rng(rng)
    if quick:
        kw = dict(S=64, R=4, D=8, T=8, steps=1500, lr=2.0, init=1e-3, eval_every=5)
    else:
        kw = dict(S=256, R=8, D=8, T=16, steps=6000, lr=4.0, init=1e-3, eval_every=10)
    S, R, D = kw.pop("S"), kw.pop("R"), kw.pop("D")
    t0 = time.perf_counter()
    out = train_sequential(S, R, D, rng=rng, **kw)
    out["seconds"] = time.perf_counter() - t0
    st = out["stages"]
    progress(f"sequential S={S} R={R} D={D}: relation learnt at step {st['relation_learnt']}, "
             f"subject at {st['subject_learnt']} ({st['order']}); plateaus "
             f"{st['plateau1']:.3f} (ln DR = {out['ln_DR']:.3f}), "
             f"{st['plateau2'] if st['plateau2'] is None else round(st['plateau2'], 3)} "
             f"(ln D = {out['ln_D']:.3f})")
    return out
