"""The token-retrieval grid: early-phase runs over ``(N, d, L)`` and the scans beside it.

One study, ``token_retrieval.grid``, with the two configurations of
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

Docs: ``docs/token_retrieval.md#experiments``.
"""
from __future__ import annotations

from dataclasses import dataclass

from hcizz.results import Result
from validation.token_retrieval import experiments as ex
from validation.token_retrieval.boundary import aggregate
from validation.token_retrieval.predictions import predicted_boundaries, theory_vs_simulation

from .base import Option, Study

__all__ = ["GridStudy", "TokenRetrievalGrid", "STUDIES", "SUCCESS_KEYS", "PARTS"]

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
    stored = "token_retrieval.grid.jsonl"
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

    def execute(self, runner, preset, seed):
        """Run the whole plan in one call and group the runs by part.

        Parameters
        ----------
        runner : Runner
            Computes or replays the trials.
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
        recs = runner([q for _, _, params in parts for q in params])
        bad = [r for r in recs if r is None or r["status"] != "ok"]
        if bad:
            if bad[0] is None:
                raise LookupError(f"study {self.name}: {len(bad)} planned runs are not in the store "
                                  f"{runner.store.name}; compute them with "
                                  f"`{self.command(preset=preset, seed=seed)} --store PATH`")
            e = bad[0]["error"]
            raise RuntimeError(f"study {self.name}: {len(bad)} runs failed; first ({bad[0]['params']}): "
                               f"{e['type']}: {e['message']}")
        return ex.group(parts, [r["result"] for r in recs])

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


STUDIES = (TokenRetrievalGrid(),)
