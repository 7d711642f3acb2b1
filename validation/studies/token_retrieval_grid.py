"""The token-retrieval grid: early-phase runs over ``(N, d, L)`` and the scans beside it.

Two studies.  ``token_retrieval.grid``, with the two configurations of
:data:`validation.token_retrieval.experiments.PRESETS` (``--preset quick``,
the default, or ``full``): the main grid, random against orthogonal embeddings
and, in the full preset only, the MLP-width and step-size scans; every run is
one trial :func:`validation.token_retrieval.experiments.grid_trial`, whose
randomness follows its position in its grid (``SeedSequence([seed, i_L, i_d,
i_N, s])``).  The summary (:class:`GridStudy`) holds the success fractions,
the theory against the simulation at every grid point, the boundary fits and
tests, the bulk SNR model, the contrast of embeddings, the scans and the
theory's boundaries over the preset's ``d x L``.

The committed store ``validation/studies/stored/token_retrieval.grid.jsonl``
holds the runs of the quick preset at seed 0 (the report's quick mode replays
it); the full preset (about 2300 runs, a few CPU minutes) runs on a store in
your folder::

    python -m validation study token_retrieval.grid --preset full --workers 2

``token_retrieval.full_grid`` (:class:`FullGrid`) is the main grid of the full preset alone
(1280 runs, committed in ``validation/studies/stored/token_retrieval.full_grid.jsonl``, same
trial keys as the full preset's grid part), compared with the committed token-level predictions
``token_retrieval.full_grid.token_theory.json``.

Docs: ``docs/token_retrieval.md#experiments``,
``docs/token_retrieval.md#token-level-theory-against-simulation``.
"""
from __future__ import annotations

from dataclasses import dataclass

from hcizz.results import Result
from validation.token_retrieval import experiments as ex
from validation.token_retrieval.boundary import aggregate
from validation.token_retrieval.comparison import (column_check, limits_on_grid, load_theory_grid, scan_comparison,
                                                   seed_check, simulated_points, target_check, theory_vs_sim)
from validation.token_retrieval.predictions import predicted_boundaries, theory_vs_simulation

from .base import STORED_DIR, Option, Study, fill_doc, ok_pairs

__all__ = ["GridStudy", "TokenRetrievalGrid", "FullGridStudy", "FullGrid", "FullGridSeeds", "FullGridMoreSeeds",
           "MoreSeedsStudy", "SEED_CHECK_POINTS", "FullScans", "STUDIES", "SUCCESS_KEYS"]

#: success flags and fractions aggregated per grid point
SUCCESS_KEYS = ("recall", "retrieval", "test_acc", "retrieval_acc", "recall_acc")
#: the parts of each preset's plan: the MLP-width and step-size scans belong to the full preset only
PARTS = {"quick": ("grid", "orthogonal"), "full": ("grid", "orthogonal", "mlp", "beta")}


@dataclass(frozen=True)
class GridStudy(Result):
    """Summary of the study ``token_retrieval.grid`` (:meth:`TokenRetrievalGrid.summarise`).

    Parameters
    ----------
    preset : str
        ``"quick"`` or ``"full"``.
    seed : int
        Root seed.
    grid : dict
        ``Ns``, ``ds``, ``Ls``, ``seeds`` of the main grid.
    runs : int
        Runs of the main grid.
    success : dict
        ``{key: {(N, d, L): (fraction, runs)}}`` for :data:`SUCCESS_KEYS`.
    theory_vs_sim : TheoryVsSimulation
        The theory at every grid point (:func:`~validation.token_retrieval.predictions.theory_vs_simulation`).
    fits : dict
        Boundary fits and the product-form test (:func:`~validation.token_retrieval.experiments.fits`).
    snr : list of SNRComparison
        The bulk SNR models (:func:`~validation.token_retrieval.experiments.snr_comparison`).
    predicted : PredictedBoundaries
        The theory's boundaries and the counting bound over the preset's ``theory`` grid.
    orthogonal : OrthogonalContrast
        Random against orthogonal embeddings.
    mlp : MLPScan or None
        The MLP-width scan (full preset).
    mlp_theory : dict
        The theory's recall boundary over the MLP scan's ``d x ({0} + ms)``.
    beta : BetaScan or None
        The step-size scan (full preset).

    References
    ----------
    docs/token_retrieval.md#experiments
    """

    preset: str
    seed: int
    grid: dict
    runs: int
    success: dict
    theory_vs_sim: object
    fits: dict
    snr: list
    predicted: object
    orthogonal: object
    mlp: object
    mlp_theory: dict
    beta: object

    def summary(self):
        """Return a few lines: the grid, the theory's errors, the fitted exponents.

        Returns
        -------
        str
            The lines.
        """
        tv = self.theory_vs_sim
        g = self.grid
        lines = [f"token_retrieval.grid ({self.preset}, seed {self.seed}): N in {list(g['Ns'])}, d in "
                 f"{list(g['ds'])}, L in {list(g['Ls'])}, {g['seeds']} seeds ({self.runs} runs)",
                 f"theory vs simulation, P(retrieval) and P(recall): mean |error| {tv.mean_abs_error:.3f}, "
                 f"max {tv.max_abs_error:.3f}"]
        for name in ("retrieval_boundary", "recall_boundary"):
            f = self.fits[name]
            if f.exponents:
                lines.append(f"{name}: " + ", ".join(f"{v} {e.value:+.2f} ± {e.stderr:.2f}"
                                                     for v, e in f.exponents.items())
                             + f" ({f.n_points} points)")
            else:
                lines.append(f"{name}: {f.n_points} boundary points, too few for a fit")
        mt = self.fits["retrieval_multiplicative"]
        lines.append(f"product-form test (retrieval): LR {mt.lr:.1f}, df {mt.df}, p {mt.p_value:.2g}")
        return "\n".join(lines)


class TokenRetrievalGrid(Study):
    """The token-retrieval grid and its scans in one configuration (see the module notes).

    References
    ----------
    docs/token_retrieval.md#experiments
    """

    name = "token_retrieval.grid"
    title = "token retrieval over (N, d, L): early-phase success, theory, boundary fits, embedding and scans"
    trial = ex.grid_trial
    docs = "docs/token_retrieval.md#experiments"
    options = (
        Option("preset", "--preset", str, "quick", "configuration", choices=tuple(ex.PRESETS)),
        Option("seed", "--seed", int, 0, "root seed", low=0),
    )

    def parts(self, preset, seed):
        """Return the plan's parts (:func:`validation.token_retrieval.experiments.plan`).

        Parameters
        ----------
        preset : str
            The configuration.
        seed : int
            Root seed.

        Returns
        -------
        list of tuple
            ``(part, label, params)``: the main grid and the contrast of
            embeddings, and in the full preset the MLP and step-size scans.
        """
        return ex.plan(preset, seed=seed, parts=PARTS[preset])

    def plan(self, preset, seed):
        return [q for _, _, params in self.parts(preset, seed) for q in params]

    @fill_doc
    def execute(self, runner, preset, seed):
        """Run the whole plan in one call and group the runs by part.

        Parameters
        ----------
        %(runner)s
        preset : str
            The configuration.
        seed : int
            Root seed.

        Returns
        -------
        dict
            :func:`validation.token_retrieval.experiments.group` of the runs.

        Raises
        ------
        LookupError
            A planned run is missing from a replayed store.
        RuntimeError
            A run failed.
        """
        parts = self.parts(preset, seed)
        return ex.group(parts, runner.require_ok([q for _, _, params in parts for q in params],
                                                 command=self.command(preset=preset, seed=seed)))

    def summarise(self, results, preset, seed):
        """Aggregate, fit and compare with the theory (no run is computed here).

        Parameters
        ----------
        results : dict
            As returned by :meth:`execute`.
        preset : str
            The configuration.
        seed : int
            Root seed (also the bootstraps' seed).

        Returns
        -------
        GridStudy
            The summary.
        """
        P = ex.PRESETS[preset]
        recs = results["grid"]
        o, m, b = P["orthogonal"], P["mlp"], P["beta"]
        return GridStudy(
            preset=preset, seed=seed, grid=dict(P["grid"]), runs=len(recs),
            success={k: aggregate(recs, k) for k in SUCCESS_KEYS},
            theory_vs_sim=theory_vs_simulation(recs), fits=ex.fits(recs, seed=seed),
            snr=ex.snr_comparison(recs), predicted=predicted_boundaries(**P["theory"]),
            orthogonal=ex.contrast(results["orthogonal"], d=o["d"], Ns=o["Ns"], Ls=o["Ls"], seeds=o["seeds"]),
            mlp=ex.mlp_boundaries(results["mlp"], seed=seed, **m) if results["mlp"] else None,
            mlp_theory=ex.mlp_theory(m["ds"], m["ms"], m["L"]),
            beta=(ex.beta_rows(results["beta"], d=b["d"], Ns=b["Ns"], Ls=b["Ls"], seeds=b["seeds"])
                  if results["beta"] else None))




@fill_doc
@dataclass(frozen=True)
class FullGridStudy(Result):
    """Summary of the study ``token_retrieval.full_grid`` (:meth:`FullGrid.summarise`).

    Parameters
    ----------
    runs : int
        Runs of the grid (1280).
    points : list of dict
        Per ``(N, d, L)``: ``N``, ``d``, ``L``, ``seeds`` and, per quantity of
        :data:`validation.token_retrieval.comparison.QUANTITIES`, ``{q}`` and ``{q}_stderr``.
    comparison : TheoryVsSim
        The token-level theory (committed predictions, ``FullGrid.committed_theory``) and
        the closed form against the runs (:func:`~validation.token_retrieval.comparison.theory_vs_sim`).
    targets : TargetCheck
        The issue's targets against the comparison
        (:func:`~validation.token_retrieval.comparison.target_check`).
    limits : LimitsOnGrid
        Retrieval boundaries of the runs and theories beside the statistical limits
        (:func:`~validation.token_retrieval.comparison.limits_on_grid`).

    %(ref_token_theory)s
    """

    runs: int
    points: list
    comparison: object
    targets: object
    limits: object

    def summary(self):
        """Return the targets' lines (:meth:`TargetCheck.summary`).

        Returns
        -------
        str
            The lines.
        """
        return (f"token_retrieval.full_grid: {len(self.points)} points, {self.runs} runs\n"
                + self.targets.summary())


def _runs(records):
    """Results of the finished runs among ``records`` (configurations the trial skipped left out)."""
    return [r for _, r in ok_pairs(records) if "skipped" not in r]


class _CommittedTheory(Study):
    """A study with committed token-level predictions beside its committed store."""

    #: file name of the committed predictions (in :data:`STORED_DIR`)
    theory_file = None

    def committed_theory(self):
        """Load the committed token-level predictions of the study's configurations.

        Returns
        -------
        dict
            Tuple key -> :class:`~validation.token_retrieval.token_theory.TokenTheory`
            (:func:`~validation.token_retrieval.comparison.load_theory_grid`).
        """
        return load_theory_grid(STORED_DIR / self.theory_file)


@fill_doc
class FullGrid(_CommittedTheory):
    """The main grid of the full preset (``--preset full``, seed 0) alone, with a committed store.

    The 1280 runs (``N`` in 4..512, ``d`` in 32..256, ``L`` in 4..64, 8 seeds) are the
    ``grid`` part of :class:`TokenRetrievalGrid` at ``--preset full --seed 0``, trial for trial
    (same stable trial name and parameters, so the same store keys): its committed store
    ``token_retrieval.full_grid.jsonl`` replays without computing, and a user store of the full
    preset started from it reuses them.  The committed token-level predictions at its 160 points
    (``token_retrieval.full_grid.token_theory.json``, ``theory_grid(points, reps=100, rng=0)``,
    about 540 CPU s) are read by ``committed_theory``.

    Regenerate the runs (resumes)::

        nice -n 10 python -m validation study token_retrieval.full_grid --store tr_full.jsonl --workers 2

    %(ref_token_theory)s
    """

    name = "token_retrieval.full_grid"
    title = "early-phase token retrieval over the full (N, d, L) grid, 8 seeds, against the token-level theory"
    trial = ex.grid_trial
    docs = "docs/token_retrieval.md#token-level-theory-against-simulation"
    options = ()
    #: committed token-level predictions at the grid's points (in :data:`STORED_DIR`)
    theory_file = "token_retrieval.full_grid.token_theory.json"

    def plan(self):
        """Return the 1280 parameter records (the ``grid`` part of the full preset at seed 0).

        Returns
        -------
        list of dict
            :func:`~validation.token_retrieval.experiments.grid_params` records.
        """
        return ex.plan("full", seed=0, parts=("grid",))[0][2]

    def summarise(self, results):
        """Summarise the runs and compare them with the committed token-level predictions.

        Parameters
        ----------
        results : list of dict
            Engine records, as :meth:`execute` returns them.

        Returns
        -------
        FullGridStudy
            Simulated success per grid point, the comparison, the targets and the statistical
            limits beside the boundaries.
        """
        recs = _runs(results)
        rows = []
        for (N, d, L), p in simulated_points(recs).items():
            row = {"N": N, "d": d, "L": L, "seeds": p["seeds"]}
            for q, v in p.items():
                if q != "seeds":
                    row[q], row[q + "_stderr"] = v
            rows.append(row)
        tv = theory_vs_sim(recs, theory=self.committed_theory())
        return FullGridStudy(runs=len(recs), points=rows, comparison=tv, targets=target_check(tv),
                             limits=limits_on_grid(tv))



#: The all-``N`` probabilities of the full grid whose 8-seed error exceeds 0.20
#: (``FullGrid`` summary, ``targets.misses`` above the maximum-error target): ``(N, d, L, quantity)``.
SEED_CHECK_POINTS = (
    (4, 32, 4, "p_retrieval"), (4, 256, 8, "p_recall"), (8, 128, 8, "p_retrieval"), (16, 64, 16, "p_retrieval"),
    (16, 128, 16, "p_retrieval"), (16, 256, 16, "p_recall"), (32, 64, 16, "p_retrieval"),
    (64, 32, 8, "p_retrieval"), (64, 128, 32, "p_retrieval"), (128, 32, 8, "p_retrieval"),
    (128, 64, 32, "p_retrieval"), (256, 64, 32, "p_retrieval"), (512, 32, 8, "p_retrieval"),
    (512, 64, 32, "p_retrieval"),
)


class _GridSeeds(Study):
    """New seeds of the full grid's runs (the grid's seeding, ``s`` in :attr:`seeds`); shared by two studies."""

    trial = ex.grid_trial
    docs = "docs/token_retrieval.md#token-level-theory-against-simulation"
    options = ()
    #: seeds of the new runs
    seeds = range(8, 64)

    def _records(self, points, *, seed_major):
        """The parameter records of the new seeds at ``points`` ``(N, d, L)`` (all grid points if None)."""
        base = {(p["N"], p["d"], p["L"]): p["entropy"][:4] for p in FullGrid().plan() if p["seed"] == 0}
        points = list(base) if points is None else [tuple(k) for k in points]
        pairs = ([(s, k) for s in self.seeds for k in points] if seed_major
                 else [(s, k) for k in points for s in self.seeds])
        return [{"N": k[0], "d": k[1], "L": k[2], "seed": s, "entropy": base[k] + [s]} for s, k in pairs]

    @staticmethod
    def _grid_runs():
        """The full grid's committed runs (seeds 0..7)."""
        from validation.engine import read_store

        return _runs(read_store(FullGrid().committed_store(), warn=False).ok.values())


@fill_doc
class FullGridSeeds(_GridSeeds):
    """Seeds 8..63 at the full-grid points whose all-``N`` error exceeds 0.20 with 8 seeds.

    The 14 points of :data:`SEED_CHECK_POINTS` get 56 new runs each (784 runs, about 90 CPU s),
    seeded like the grid (``SeedSequence([0, i_L, i_d, i_N, s])`` with the point's grid
    positions and ``s = 8..63``, so they extend the grid's seeds).  The summary compares the
    committed token-level predictions with the new runs alone (unbiased by the choice of the
    points) and with all 64 runs (:func:`~validation.token_retrieval.comparison.seed_check`).

    Regenerate (resumes)::

        nice -n 10 python -m validation study token_retrieval.full_grid_seeds --store tr_seeds.jsonl

    %(ref_token_theory)s
    """

    name = "token_retrieval.full_grid_seeds"
    title = "56 more seeds at the full-grid points where the token-level theory misses by more than 0.20"

    def plan(self):
        """Return the 784 parameter records (56 seeds at each point of :data:`SEED_CHECK_POINTS`).

        Returns
        -------
        list of dict
            :func:`~validation.token_retrieval.experiments.grid_trial` parameters.
        """
        return self._records([(N, d, L) for (N, d, L, _) in SEED_CHECK_POINTS], seed_major=False)

    def summarise(self, results):
        """Compare the committed predictions with the new runs (and with all 64 runs).

        Parameters
        ----------
        results : list of dict
            Engine records, as :meth:`execute` returns them.

        Returns
        -------
        SeedCheck
            One row per point (:func:`~validation.token_retrieval.comparison.seed_check`).
        """
        new = [r for _, r in ok_pairs(results)]
        return seed_check(SEED_CHECK_POINTS, self._grid_runs(), new, FullGrid().committed_theory())



@fill_doc
@dataclass(frozen=True)
class MoreSeedsStudy(Result):
    """Summary of :class:`FullGridMoreSeeds`: the full grid with 64 seeds per point.

    Parameters
    ----------
    runs : int
        New runs (seeds 8..63).
    seeds : int
        Runs per point in the comparison (the grid's 8 and the new ones).
    comparison : TheoryVsSim
        The committed token-level predictions against all runs
        (:func:`~validation.token_retrieval.comparison.theory_vs_sim`, its noise floor at 64 seeds).
    targets : TargetCheck
        :func:`~validation.token_retrieval.comparison.target_check` of ``comparison``.
    columns_new : dict
        ``"p_retrieval"``, ``"p_recall"`` -> the all-``N`` probability column by column on the new
        seeds alone (:func:`~validation.token_retrieval.comparison.column_check`; these runs chose
        nothing).
    columns_all : dict
        The same on all runs.

    %(ref_token_theory)s
    """

    runs: int
    seeds: int
    comparison: object
    targets: object
    columns_new: object
    columns_all: object

    def summary(self):
        """Return a short text summary (the targets at 64 seeds and the columns that miss).

        Returns
        -------
        str
            The text.
        """
        q = self.targets.quantities
        lines = [f"full grid with {self.seeds} seeds per point ({self.runs} new runs)"]
        for k in ("p_retrieval", "p_recall"):
            e = q[k]
            lines.append(f"  {k}: mean |error| {e['mean_abs_error']:.3f} (exact theory with the predictions' MC "
                         f"error {e['floor_mean_abs_error_mc']:.3f}), max {e['max_abs_error']:.3f} (exact theory "
                         f"{e['floor_max_abs_error']:.3f}); {e['within_3se']}/{e['n']} within 3 SE")
        lines += ["  new seeds, " + c.summary() for c in self.columns_new.values()]
        return "\n".join(lines)


@fill_doc
class FullGridMoreSeeds(_GridSeeds):
    """Seeds 8..63 at every point of the full grid: the targets and the (d, L) columns at 64 seeds.

    Every one of the 160 points of :class:`FullGrid` gets 56 new runs (8960 runs, about 250 CPU s),
    seeded like the grid and like :class:`FullGridSeeds` (``SeedSequence([0, i_L, i_d, i_N, s])``,
    ``s = 8..63``; at the 14 points of :data:`SEED_CHECK_POINTS` these are the same trials as
    there).  With 64 seeds an exact theory would show about a third of the 8-seed errors, so the
    comparison separates the theory's own error from sampling; the column check on the new seeds
    alone tests patterns seen in the 8-seed grid (such as ``d = 64``, ``L = 32``) on runs that did
    not suggest them.

    Regenerate (resumes)::

        nice -n 10 python -m validation study token_retrieval.full_grid_64 --store tr_64.jsonl --workers 2

    %(ref_token_theory)s
    """

    name = "token_retrieval.full_grid_64"
    title = "56 more seeds at every point of the full grid: the token-level theory's targets at 64 seeds"

    def plan(self):
        """Return the 8960 parameter records (56 seeds at each of the 160 grid points).

        Returns
        -------
        list of dict
            :func:`~validation.token_retrieval.experiments.grid_trial` parameters, seed-major.
        """
        return self._records(None, seed_major=True)

    def summarise(self, results):
        """Compare the committed predictions with all 64 runs per point, and column by column.

        Parameters
        ----------
        results : list of dict
            Engine records, as :meth:`execute` returns them.

        Returns
        -------
        MoreSeedsStudy
            The comparison, the targets and the column checks.
        """
        theory = FullGrid().committed_theory()
        new = [r for _, r in ok_pairs(results)]
        tv = theory_vs_sim(self._grid_runs() + new, theory=theory)
        tv_new = theory_vs_sim(new, theory=theory)
        return MoreSeedsStudy(runs=len(new), seeds=min(p["seeds"] for p in tv.points), comparison=tv,
                              targets=target_check(tv),
                              columns_new={q: column_check(tv_new, quantity=q) for q in ("p_retrieval", "p_recall")},
                              columns_all={q: column_check(tv, quantity=q) for q in ("p_retrieval", "p_recall")})


class FullScans(_CommittedTheory):
    """The embedding contrast and the MLP-width scan of the full preset, against the token-level theory.

    The ``orthogonal`` and ``mlp`` parts of :class:`TokenRetrievalGrid` at ``--preset full
    --seed 0``, trial for trial (768 runs: random against one-hot embeddings at ``d = 256``,
    ``N`` in 2..63, ``L`` in 4, 16; the recall boundary at ``L = 4`` for ``d`` in 64, 128, 256
    without an MLP and with widths 64, 256, 1024; 8 seeds).  The committed token-level predictions
    at their 96 configurations (``token_retrieval.full_scans.token_theory.json``,
    :func:`~validation.token_retrieval.comparison.scan_theory` with ``reps=100, rng=0``) are read
    by ``committed_theory``; the summary is
    :func:`~validation.token_retrieval.comparison.scan_comparison`.

    Regenerate the runs (resumes)::

        nice -n 10 python -m validation study token_retrieval.full_scans --store tr_scans.jsonl --workers 2

    References
    ----------
    docs/token_retrieval.md#random-vs-orthogonal-embeddings-and-the-mlp-width-against-the-token-level-theory
    """

    name = "token_retrieval.full_scans"
    title = "random vs orthogonal embeddings and the MLP width (full preset) against the token-level theory"
    trial = ex.grid_trial
    docs = "docs/token_retrieval.md#random-vs-orthogonal-embeddings-and-the-mlp-width-against-the-token-level-theory"
    options = ()
    #: committed token-level predictions at the scans' configurations (in :data:`STORED_DIR`)
    theory_file = "token_retrieval.full_scans.token_theory.json"

    def parts(self):
        """Return the two parts of the full preset's plan.

        Returns
        -------
        list of tuple
            ``(part, label, params)`` (:func:`validation.token_retrieval.experiments.plan`).
        """
        return ex.plan("full", seed=0, parts=("orthogonal", "mlp"))

    def plan(self):
        """Return the 768 parameter records.

        Returns
        -------
        list of dict
            :func:`~validation.token_retrieval.experiments.grid_params` records.
        """
        return [q for _, _, params in self.parts() for q in params]

    def configurations(self):
        """Return the ``(kind, m, N, d, L)`` of the plan, once each.

        Returns
        -------
        list of tuple
            In plan order.
        """
        out = []
        for q in self.plan():
            k = (q.get("kind", "random"), q.get("m"), q["N"], q["d"], q["L"])
            if k not in out:
                out.append(k)
        return out

    @fill_doc
    def execute(self, runner):
        """Run the plan in one call and split the runs by part.

        Parameters
        ----------
        %(runner)s

        Returns
        -------
        dict
            ``{"orthogonal": [...], "mlp": [...]}`` run results (skipped configurations dropped).
        """
        parts = self.parts()
        recs = runner([q for _, _, params in parts for q in params])
        out, i = {"orthogonal": [], "mlp": []}, 0
        for part, _, params in parts:              # a part may come in several pieces (one per label)
            out[part] += _runs(recs[i:i + len(params)])
            i += len(params)
        return out

    def summarise(self, results):
        """Compare both scans with the committed predictions and the closed form.

        Parameters
        ----------
        results : dict
            As returned by :meth:`execute`.

        Returns
        -------
        ScanComparison
            :func:`~validation.token_retrieval.comparison.scan_comparison`.
        """
        return scan_comparison(results["orthogonal"], results["mlp"], self.committed_theory())


STUDIES = (TokenRetrievalGrid(), FullGrid(), FullGridSeeds(), FullGridMoreSeeds(), FullScans())
