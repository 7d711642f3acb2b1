"""The full token-retrieval grid: early-phase runs over ``(N, d, L)``, committed for replay.

The report's full-mode grid (``validation.token_retrieval.experiments.GRIDS[False]``: ``N`` in
4..512, ``d`` in 32..256, ``L`` in 4..64, 8 seeds, root seed 0, ``V = 4 N``, random embeddings),
one :func:`validation.token_retrieval.experiments.grid_trial` per ``(N, d, L, seed)`` with the
grid's own seeds (``SeedSequence([0, i_L, i_d, i_N, s])``), so the committed store holds
exactly the runs of ``python -m validation reproduce --sections token_retrieval`` and a replay
computes nothing.  The summary is the simulated success per grid point with its standard error
(:func:`validation.token_retrieval.comparison.simulated_points`); the comparison with the
theories is :func:`validation.token_retrieval.comparison.theory_vs_sim`.

Regenerate (resumes, reuses what the store has)::

    nice -n 10 python -m validation study token_retrieval.full_grid --workers 2

Docs: ``docs/token_retrieval.md#token-level-theory-against-simulation``.
"""
from __future__ import annotations

from validation.token_retrieval.comparison import simulated_points
from validation.token_retrieval.experiments import GRIDS, grid_trial

from .base import Study

__all__ = ["FullGrid", "STUDIES", "grid_params"]


def grid_params(seed=0):
    """Return the parameter records of the full grid, in the order of the report's sweep.

    Parameters
    ----------
    seed : int, optional
        Root seed of the grid (the report uses its ``--seed``, default 0).

    Returns
    -------
    list of dict
        :func:`~validation.token_retrieval.experiments.grid_trial` parameters ``N``, ``d``,
        ``L``, ``seed`` (index) and ``entropy`` (``[seed, i_L, i_d, i_N, s]``).

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation

    Examples
    --------
    >>> p = grid_params()
    >>> len(p), p[0]
    (1280, {'N': 4, 'd': 32, 'L': 4, 'seed': 0, 'entropy': [0, 0, 0, 0, 0]})
    """
    g = GRIDS[False]
    return [{"N": N, "d": d, "L": L, "seed": s, "entropy": [int(seed), i, j, k, s]}
            for i, L in enumerate(g["Ls"]) for j, d in enumerate(g["ds"]) for k, N in enumerate(g["Ns"])
            for s in range(g["seeds"])]


class FullGrid(Study):
    """The report's full token-retrieval grid as a study with a committed store.

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation
    """

    name = "token_retrieval.full_grid"
    title = "early-phase token retrieval over the full (N, d, L) grid, 8 seeds (the report's full-mode runs)"
    trial = grid_trial
    stored = "token_retrieval.full_grid.jsonl"
    docs = "docs/token_retrieval.md#token-level-theory-against-simulation"
    options = ()

    def plan(self):
        """Return the 1280 parameter records (:func:`grid_params` at root seed 0).

        Returns
        -------
        list of dict
            The grid's trials.
        """
        return grid_params(0)

    def summarise(self, results):
        """Summarise the runs: simulated success per grid point with standard errors.

        Parameters
        ----------
        results : list of dict
            Engine records, as :meth:`execute` returns them.

        Returns
        -------
        list of dict
            One row per ``(N, d, L)``: ``N``, ``d``, ``L``, ``seeds`` and, per quantity,
            ``{q}`` and ``{q}_stderr``.
        """
        recs = [r["result"] for r in results if r is not None and r["status"] == "ok"
                and "skipped" not in r["result"]]
        rows = []
        for (N, d, L), p in simulated_points(recs).items():
            row = {"N": N, "d": d, "L": L, "seeds": p["seeds"]}
            for q, v in p.items():
                if q != "seeds":
                    row[q], row[q + "_stderr"] = v
            rows.append(row)
        return rows


STUDIES = (FullGrid(),)
