r"""Fixed grid against adaptive design for the token-retrieval boundary ``N_c(d, L)``.

At fixed ``(d, L)`` the retrieval boundary is the number of training
sequences ``N_c`` where the probability that the early phase retrieves the
informative token of all ``N`` sequences crosses 1/2 (upward in ``N``: the
boundary points of :func:`validation.token_retrieval.boundary.fit_boundary`
with ``direction="up"``).  Here it is one threshold in ``x = log N``,

.. math:: P(\text{retrieval} \mid N) = \sigma\big((\log N - \log N_c) / w\big),

fitted with the profile-likelihood interval of
:func:`validation.logistic.fit_threshold` (``increasing=True``), and
measured by two designs; replicate ``r`` draws its seeds from the pool
``1000 r, 1000 r + 1, ...`` in both:

* **grid** -- the report's full-mode ``N`` grid
  (:data:`validation.token_retrieval.adaptive_boundary.GRID_NS`, 8 values),
  seeds ``1000 r + 0 .. S - 1`` at every ``N``, ``S = 1, 2, ...`` until the
  95% half-width of ``log N_c`` is <= the target (trials ``8 S``, at most
  :data:`validation.token_retrieval.adaptive_boundary.S_MAX` seeds);
* **adaptive** -- :func:`validation.adaptive.adaptive_threshold` with
  ``increasing=True``: a first round at the theory's ``N_c`` times
  ``exp(START)``, then rounds of 4 values of ``N`` around the current fit,
  seeds ``1000 r, 1000 r + 1, ...``, the same target, at most ``8 S_MAX``
  trials.

A trial's randomness is a function of ``(N, d, L, seed)`` only
(:func:`boundary_trial`), so a pair ``(N, seed)`` run by both designs is the
same task and the same early phase: one stored record, one outcome.  The
trials live in the committed engine store
:data:`validation.token_retrieval.adaptive_boundary.STORE` and the result in
the committed summary
:data:`validation.token_retrieval.adaptive_boundary.SUMMARY` (written by the
command below).  The report's quick mode reads the summary
(:func:`load_summary`, milliseconds); its full mode replays both designs from
the store (:func:`compare` with ``compute=False``: about 700 logistic fits,
several CPU seconds, no trial) and checks that the replay equals the
summary.  Regenerate with::

    nice -n 10 python -m validation.token_retrieval.adaptive_boundary

See ``docs/token_retrieval.md#adaptive-design-of-the-boundary``.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hcizz.checks import check_int, check_real
from hcizz.cli import ArgumentParser, run_cli
from hcizz.results import Result
from validation.logistic import fit_threshold
from validation.engine.trials import trial

__all__ = ["STORE", "SUMMARY", "BOUNDARIES", "GRID_NS", "REPLICATES", "TARGET", "S_MAX", "START", "BATCH", "ROOT",
           "trial_params", "boundary_trial", "DesignComparison",
           "compare", "load_summary"]

#: committed engine store of the comparison's trials
STORE = Path(__file__).resolve().parent / "stored" / "adaptive_design.jsonl"
#: committed result of the default comparison (:func:`load_summary`)
SUMMARY = Path(__file__).resolve().parent / "stored" / "adaptive_design_summary.json"
#: boundaries ``(d, L)`` of the comparison
BOUNDARIES = ((128, 8), (128, 16), (128, 32))
#: the report's full-mode ``N`` grid (``experiments.GRIDS[False]["Ns"]``)
GRID_NS = (4, 8, 16, 32, 64, 128, 256, 512)
#: replicates per boundary and design
REPLICATES = 8
#: target 95% CI half-width of ``log N_c`` (0.2: ``N_c`` to about +-22 %)
TARGET = 0.2
#: most seeds per grid value (the adaptive design is capped at ``len(GRID_NS) * S_MAX`` trials)
S_MAX = 24
#: first adaptive round: ``log N`` offsets from the theory's ``log N_c``
START = (-0.6, -0.2, 0.2, 0.6)
#: values of ``N`` per adaptive round
BATCH = 4
#: root entropy of every trial's ``SeedSequence``
ROOT = 0


def trial_params(N, d, L, seed, *, root=ROOT):
    """The engine parameter record of one boundary trial.

    Parameters
    ----------
    N, d, L : int
        Training sequences, dimension, sequence length.
    seed : int
        Seed index (>= 0).
    root : int, optional
        Root entropy (default :data:`validation.token_retrieval.adaptive_boundary.ROOT`).

    Returns
    -------
    dict
        ``{"N", "d", "L", "seed", "root"}`` as plain ints: the input of
        :func:`boundary_trial` and, through
        :func:`validation.engine.trial_key`, the key of its stored record.

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary

    Examples
    --------
    >>> trial_params(16, 128, 8, 3)
    {'N': 16, 'd': 128, 'L': 8, 'seed': 3, 'root': 0}
    """
    return {"N": int(N), "d": int(d), "L": int(L), "seed": int(seed), "root": int(root)}


@trial("token_retrieval.boundary", aliases=("validation.token_retrieval.adaptive_boundary:boundary_trial",))
def boundary_trial(params):
    """Run the early phase once at ``(N, d, L)`` with randomness keyed by ``(N, d, L, seed)``.

    A trial of :func:`validation.engine.run_sweep` (module level, JSON in and
    out).

    Parameters
    ----------
    params : dict
        ``N``, ``d``, ``L``, ``seed`` and ``root`` (:func:`trial_params`).

    Returns
    -------
    dict
        ``N``, ``seed``, ``retrieval`` and ``recall`` (the success flags of
        :func:`validation.token_retrieval.runs.run_config`), ``gap_mean``
        (its mean attention-score gap, a fingerprint of the draw) and
        ``cpu_seconds`` (timing, not a result); kept small because the
        comparison's store is committed.

    Notes
    -----
    The run draws everything (embeddings, labels, sequences) from
    ``default_rng(SeedSequence([root, d, L, N, seed]))`` with the defaults of
    :func:`~validation.token_retrieval.runs.run_config` (``V = 4N``, random
    embeddings, ``eta = 0.1``, ``beta = 10``).  Unlike the report's grid
    (whose seeds follow the position of a value in the grid), the draw does
    not depend on which design asked for the trial: that is what makes the
    comparison of designs one "on the same seeds".

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#adaptive-design-of-the-boundary
    """
    from .runs import run_config

    N, d, L, s, root = (int(params[k]) for k in ("N", "d", "L", "seed", "root"))
    c0 = time.process_time()
    r = run_config(N, d, L, seed=np.random.default_rng(np.random.SeedSequence([root, d, L, N, s])))
    return {"N": N, "seed": s, "retrieval": bool(r["retrieval"]), "recall": bool(r["recall"]),
            "gap_mean": float(r["gap_mean"]), "cpu_seconds": time.process_time() - c0}


def _fit_boundary(log_n, success, **kw):
    """The boundary fit: :func:`validation.logistic.fit_threshold` in ``log N``, increasing,
    smallest width 0.01 (a transition sharper than 1 % in ``N`` cannot be seen with
    integer ``N`` below 100)."""
    return fit_threshold(log_n, success, increasing=True, min_width=0.01, **kw)


@dataclass(frozen=True)
class DesignComparison(Result):
    """One boundary of :func:`~validation.token_retrieval.adaptive_boundary.compare`: trials of the fixed grid and of the adaptive design.

    Parameters
    ----------
    d, L : int
        The boundary's dimension and sequence length.
    target_halfwidth : float
        Target 95% half-width of ``log N_c``.
    replicates : int
        Replicates per design.
    centre : float
        Centre of the adaptive design's first round (by default ``N_c``
        predicted by :func:`validation.token_retrieval.theory.retrieval_boundary`).
    threshold : float
        ``N_c`` fitted to all distinct trials of both designs and every replicate.
    ci : list of float
        Its 95% profile-likelihood interval ``[low, high]`` (in ``N``).
    width : float
        The logistic width ``w`` (in ``log N``) of that fit.
    trials_grid, trials_adaptive : float
        Mean trials to reach the target (or the cap) over replicates.
    trials_grid_stderr, trials_adaptive_stderr : float
        Their standard errors (sd / sqrt(replicates); NaN for one replicate).
    trials_ratio : float
        ``trials_adaptive / trials_grid``.
    reached_grid, reached_adaptive : int
        Replicates that met the target before the cap.
    cpu_seconds_grid, cpu_seconds_adaptive : float
        Mean summed trial CPU time per replicate.
    trials_pooled : int
        Distinct trials behind ``threshold``.
    covers_grid, covers_adaptive : int
        Replicates whose interval contains ``threshold`` (a check of the
        per-replicate intervals against the pooled estimate; nominal 95 %).
    runs : dict
        ``{"grid": [...], "adaptive": [...]}``: per replicate ``trials``,
        ``threshold`` and ``ci`` (in ``N``), ``reached``, ``cpu_seconds``,
        ``seeds`` (the seed pool used).

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary
    """

    d: int
    L: int
    target_halfwidth: float
    replicates: int
    centre: float
    threshold: float
    ci: list
    width: float
    trials_grid: float
    trials_adaptive: float
    trials_grid_stderr: float
    trials_adaptive_stderr: float
    trials_ratio: float
    reached_grid: int
    reached_adaptive: int
    cpu_seconds_grid: float
    cpu_seconds_adaptive: float
    trials_pooled: int
    covers_grid: int
    covers_adaptive: int
    runs: dict


def _runner(store, compute):
    """``run(params) -> results`` on ``store`` (:func:`validation.engine.stored_runner`)."""
    from validation.engine import stored_runner
    # by its module's name: run as ``python -m`` this file is ``__main__``, and the store keys a
    # trial by the ``module:qualname`` of its function
    from validation.token_retrieval.adaptive_boundary import boundary_trial as trial

    return stored_runner(trial, store, compute=compute)


def _exp_ci(lo, hi):
    return [math.exp(lo) if math.isfinite(lo) else (0.0 if lo < 0 else math.inf),
            math.exp(hi) if math.isfinite(hi) else math.inf]


def _grid(d, L, r, target, run, grid_ns, s_max):
    res = []
    f = None
    for S in range(1, s_max + 1):
        res += run([trial_params(N, d, L, 1000 * r + S - 1) for N in grid_ns])
        f = _fit_boundary([math.log(x["N"]) for x in res], [x["retrieval"] for x in res])
        if (f.ci_high - f.ci_low) / 2 <= target:
            break
    return {"trials": len(res), "threshold": math.exp(f.threshold) if math.isfinite(f.threshold) else math.nan,
            "ci": _exp_ci(f.ci_low, f.ci_high), "reached": bool((f.ci_high - f.ci_low) / 2 <= target),
            "cpu_seconds": float(sum(x.get("cpu_seconds", 0.0) for x in res)),
            "seeds": [1000 * r, 1000 * r + S - 1]}, res


def _adaptive(d, L, r, target, run, centre, max_trials):
    from validation.adaptive import adaptive_threshold

    res = []

    def trials(loads, seeds):
        out = run([trial_params(int(round(math.exp(a))), d, L, s) for a, s in zip(loads, seeds)])
        res.extend(out)
        return [math.log(x["N"]) for x in out], [x["retrieval"] for x in out]

    snap = lambda a: math.log(max(2, int(round(math.exp(a)))))    # noqa: E731  (integer N >= 2)
    ad = adaptive_threshold(trials, _fit_boundary, [math.log(centre) + o for o in START],
                            target_halfwidth=target, max_trials=max_trials, batch=BATCH, seed0=1000 * r,
                            snap=snap, lower=math.log(2), increasing=True)
    return {"trials": ad.trials, "threshold": math.exp(ad.threshold) if math.isfinite(ad.threshold) else math.nan,
            "ci": _exp_ci(ad.ci_low, ad.ci_high), "reached": ad.stop == "target",
            "cpu_seconds": float(sum(x.get("cpu_seconds", 0.0) for x in res)),
            "seeds": [1000 * r, 1000 * r + ad.trials - 1]}, res


def _mean_se(v):
    v = np.asarray(v, float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan)


def compare(boundaries=BOUNDARIES, replicates=REPLICATES, target=TARGET, *, store=STORE, compute=True,
            run=None, grid_ns=GRID_NS, s_max=S_MAX, centre=None):
    """Run (or replay) the fixed grid and the adaptive design on every boundary and replicate.

    Parameters
    ----------
    boundaries : sequence of (int, int)
        ``(d, L)`` of each boundary.
    replicates : int
        Replicates per boundary and design (>= 1); replicate ``r`` uses the
        seeds ``1000 r, 1000 r + 1, ...`` in both designs (at most 1000).
    target : float
        Target 95% CI half-width of ``log N_c`` (> 0).
    store : path, optional
        Engine JSONL store of the trials (default: the committed
        :data:`validation.token_retrieval.adaptive_boundary.STORE`).
    compute : bool, optional
        True: run missing trials in process and append them to ``store``;
        False: replay from ``store`` only, running nothing.
    run : callable, optional
        ``run(params) -> results`` replacing the engine (``store`` and
        ``compute`` are then unused): receives a list of
        :func:`trial_params` records and returns one dict per record with at
        least ``N`` and ``retrieval`` (e.g. a synthetic success model).
    grid_ns : sequence of int, optional
        ``N`` values of the fixed grid (default the report's full-mode grid).
    s_max : int, optional
        Most seeds per grid value (1 to ``1000 // len(grid_ns)``, so that a
        replicate stays inside its seed pool); the adaptive design is capped
        at ``len(grid_ns) * s_max`` trials.
    centre : callable, optional
        ``centre(d, L) -> N``, the centre of the adaptive design's first round
        (default :func:`validation.token_retrieval.theory.retrieval_boundary`,
        16 where it has no crossing).

    Returns
    -------
    list of DesignComparison
        One per boundary.

    Raises
    ------
    ValueError
        ``replicates``, ``target``, ``grid_ns`` or ``s_max`` out of range.
    LookupError
        With ``compute=False``, when a trial the designs need is not in ``store``.

    Notes
    -----
    Both designs stop at the first fit whose 95% half-width is <= ``target``
    (the adaptive one only once two consecutive rounds met it and at least
    12 trials were run: the stopping rule of
    :func:`validation.adaptive.adaptive_threshold`).  ``threshold`` and
    ``ci`` of a boundary come from one fit to every distinct
    ``(N, seed)`` trial of both designs and all replicates.

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#adaptive-design-of-the-boundary;
    docs/sweeps.md#adaptive-threshold-design
    """
    replicates = check_int("replicates", replicates, low=1, high=1000)
    target = check_real("target", target, low=0, low_open=True, allow_array=False)
    grid_ns = [check_int("grid_ns", n, low=2) for n in grid_ns]
    if not grid_ns:
        raise ValueError("grid_ns must hold at least one value of N, got []")
    # a replicate's seeds stay below the next replicate's pool (1000 seeds)
    s_max = check_int("s_max", s_max, low=1, high=1000 // len(grid_ns))
    if run is None:
        run = _runner(store, compute)
    if centre is None:
        from .theory import retrieval_boundary

        centre = lambda d, L: retrieval_boundary(d, L) or 16.0     # noqa: E731
    out = []
    for d, L in boundaries:
        d, L = check_int("d", d, low=1), check_int("L", L, low=2)
        c = float(centre(d, L))
        runs = {"grid": [], "adaptive": []}
        pool = {}
        for r in range(replicates):
            g, rg = _grid(d, L, r, target, run, grid_ns, s_max)
            a, ra = _adaptive(d, L, r, target, run, c, len(grid_ns) * s_max)
            runs["grid"].append(g)
            runs["adaptive"].append(a)
            for x in rg + ra:
                pool[(int(x["N"]), int(x["seed"]))] = bool(x["retrieval"])
        keys = sorted(pool)
        # hundreds of trials: an interval of a few grid cells of the default profile grid
        f = _fit_boundary([math.log(k[0]) for k in keys], [pool[k] for k in keys], n_grid=6001)
        nc = math.exp(f.threshold) if math.isfinite(f.threshold) else math.nan
        covers = {k: sum(x["ci"][0] <= nc <= x["ci"][1] for x in v) for k, v in runs.items()}
        tg, sg = _mean_se([x["trials"] for x in runs["grid"]])
        ta, sa = _mean_se([x["trials"] for x in runs["adaptive"]])
        out.append(DesignComparison(
            d=d, L=L, target_halfwidth=target, replicates=replicates, centre=c,
            threshold=nc,
            ci=_exp_ci(f.ci_low, f.ci_high), width=float(f.width), trials_grid=tg, trials_grid_stderr=sg, trials_adaptive=ta,
            trials_adaptive_stderr=sa, trials_ratio=ta / tg,
            reached_grid=sum(x["reached"] for x in runs["grid"]),
            reached_adaptive=sum(x["reached"] for x in runs["adaptive"]),
            cpu_seconds_grid=_mean_se([x["cpu_seconds"] for x in runs["grid"]])[0],
            cpu_seconds_adaptive=_mean_se([x["cpu_seconds"] for x in runs["adaptive"]])[0],
            trials_pooled=len(keys), covers_grid=covers["grid"], covers_adaptive=covers["adaptive"], runs=runs))
    return out


def load_summary(path=SUMMARY):
    """Read the committed result of the default comparison.

    Parameters
    ----------
    path : str or Path, optional
        Summary file written by ``python -m
        validation.token_retrieval.adaptive_boundary`` (default
        :data:`validation.token_retrieval.adaptive_boundary.SUMMARY`).

    Returns
    -------
    list of DesignComparison
        One per boundary, as :func:`compare` returned them when the file was
        written.

    Raises
    ------
    LookupError
        The file does not exist.
    ValueError
        The file is not such a summary.

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary
    """
    from dataclasses import fields

    from hcizz.jsonout import from_json_value, loads_strict

    path = Path(path)
    if not path.exists():
        raise LookupError(f"no adaptive-design summary at {path}")
    doc = from_json_value(loads_strict(path.read_text()))
    names = [f.name for f in fields(DesignComparison)]
    try:
        return [DesignComparison(**{k: b[k] for k in names}) for b in doc["boundaries"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not an adaptive-design summary ({exc!r})") from None


def _pairs(s):
    try:
        return tuple(tuple(int(v) for v in p.split(":")) for p in s.split(","))
    except ValueError:
        raise ValueError(f"--boundaries must be comma-separated d:L pairs such as 128:16, got {s!r}") from None


def main(argv=None):
    """Command line: ``python -m validation.token_retrieval.adaptive_boundary [--replay] [--json] ...``.

    Runs (or, with ``--replay``, replays from the store) :func:`compare` and
    prints one line per boundary.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status (0).

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary
    """
    ap = ArgumentParser(prog="python -m validation.token_retrieval.adaptive_boundary",
                        description="trials a fixed N grid and the adaptive design need for a given CI of the "
                                    "token-retrieval boundary N_c(d, L)")
    ap.add_argument("--boundaries", default=",".join(f"{d}:{L}" for d, L in BOUNDARIES),
                    help="comma-separated d:L pairs (default %(default)s)")
    ap.add_argument("--replicates", type=int, default=REPLICATES)
    ap.add_argument("--target", type=float, default=TARGET, help="95%% half-width of log N_c")
    ap.add_argument("--store", default=str(STORE))
    ap.add_argument("--replay", action="store_true", help="read the store only, run nothing")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--summary", default=None,
                    help="write the result as JSON here (default: the committed summary, for a computing run "
                         "with the default boundaries, replicates, target and store)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    bounds = _pairs(a.boundaries)
    res = compare(bounds, a.replicates, a.target, store=a.store, compute=not a.replay)
    default = (bounds == tuple(BOUNDARIES) and a.replicates == REPLICATES and a.target == TARGET
               and Path(a.store).resolve() == STORE)
    out = a.summary or (SUMMARY if default and not a.replay else None)
    if out:
        from validation._io import atomic_write_json

        atomic_write_json(out, {"command": "nice -n 10 python -m validation.token_retrieval.adaptive_boundary",
                                "store": STORE.name, "boundaries": [r.to_dict() for r in res]})
    if a.json:
        from validation._io import dumps, to_jsonable

        print(dumps(to_jsonable([r.to_dict() for r in res])))
        return 0
    for r in res:
        print(f"d={r.d} L={r.L}: N_c {r.threshold:.2f} [{r.ci[0]:.2f}, {r.ci[1]:.2f}], width {r.width:.3f} in log N "
              f"(first round around {r.centre:.1f}, "
              f"{r.trials_pooled} trials); trials grid {r.trials_grid:.1f} ± {r.trials_grid_stderr:.1f}, "
              f"adaptive {r.trials_adaptive:.1f} ± {r.trials_adaptive_stderr:.1f} (ratio {r.trials_ratio:.2f}); "
              f"CPU s grid {r.cpu_seconds_grid:.2f}, adaptive {r.cpu_seconds_adaptive:.2f}; reached "
              f"{r.reached_grid}/{r.replicates} and {r.reached_adaptive}/{r.replicates}; intervals covering the "
              f"pooled N_c {r.covers_grid} and {r.covers_adaptive}", flush=True)
    print(f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m validation.token_retrieval.adaptive_boundary"))
