"""Fixed grid against adaptive design for the token-retrieval boundary ``N_c(d, L)``.

How many trials do the report's fixed ``N`` grid and the sequential design
:func:`validation.adaptive.adaptive_threshold` need for a given 95 % interval
of ``log N_c`` at a few boundaries ``(d, L)``, on the same seeds?  The trial,
the fit and both designs are library
(:mod:`validation.token_retrieval.design`); this study fixes the boundaries,
the grid, the target and the caps below, runs the designs round by round on
its store (a sequential study: :meth:`AdaptiveBoundary.execute` calls the
runner once per round, so a replay follows the same path and computes
nothing) and summarises them (:class:`~validation.token_retrieval.design.DesignComparisons`).

The committed store ``validation/studies/stored/token_retrieval.adaptive_boundary.jsonl``
holds the 4318 trials of the default comparison; the committed summary
``token_retrieval.adaptive_boundary.summary.json`` beside it holds its result,
which the report's quick mode reads (a replay runs about 700 logistic fits,
about 20 CPU seconds).  Regenerate or extend with::

    nice -n 10 python -m validation study token_retrieval.adaptive_boundary
    python -m validation study token_retrieval.adaptive_boundary --replay --json   # the summary

Docs: ``docs/token_retrieval.md#adaptive-design-of-the-boundary``.
"""
from __future__ import annotations

import math

from validation.token_retrieval.design import (DesignComparisons, boundary_trial, check_design,
                                               design_runs, pooled_comparison, read_comparisons,
                                               theory_centre)

from .base import STORED_DIR, Option, Study, fill_doc

__all__ = ["BOUNDARIES", "GRID_NS", "REPLICATES", "TARGET", "S_MAX", "START", "BATCH", "AdaptiveBoundary",
           "STUDIES"]

#: boundaries ``(d, L)`` of the comparison
BOUNDARIES = ((128, 8), (128, 16), (128, 32))
#: the report's full-mode ``N`` grid (``validation.token_retrieval.experiments.PRESETS["full"]["grid"]["Ns"]``)
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


def _pair(text):
    try:
        d, L = (int(v) for v in text.split(":"))
    except ValueError:
        d = L = None
    if d is None or d < 1 or L < 2:
        raise ValueError(f"--boundaries items must be d:L pairs of integers with d >= 1 and L >= 2, such as "
                         f"128:16, got {text!r}")
    return d, L


class AdaptiveBoundary(Study):
    """Trials the fixed grid and the adaptive design need for a CI of ``N_c(d, L)`` (see the module notes).

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary
    """

    name = "token_retrieval.adaptive_boundary"
    title = "token-retrieval boundary N_c(d, L): trials of a fixed N grid against the adaptive design"
    trial = boundary_trial
    docs = "docs/token_retrieval.md#adaptive-design-of-the-boundary"
    options = (
        Option("boundaries", "--boundaries", str, tuple(f"{d}:{L}" for d, L in BOUNDARIES),
               "comma-separated d:L pairs", many=True),
        Option("replicates", "--replicates", int, REPLICATES, "replicates per boundary and design",
               low=1, high=1000),
        Option("target", "--target", float, TARGET, "target 95%% half-width of log N_c", low=0, high=10,
               low_open=True),
    )

    def validate(self, options):
        for b in options["boundaries"]:
            _pair(b)
        check_design(options["replicates"], options["target"], GRID_NS, S_MAX)
        return options

    def summary_path(self):
        """Return the committed summary of the default comparison (package data).

        Returns
        -------
        pathlib.Path
            ``validation/studies/stored/token_retrieval.adaptive_boundary.summary.json``.
        """
        return STORED_DIR / f"{self.name}.summary.json"

    def committed_summary(self):
        """Read the committed result of the default comparison (milliseconds; no fit is run).

        Returns
        -------
        DesignComparisons
            One comparison per default boundary.

        Raises
        ------
        LookupError, ValueError
            The file is missing or not such a summary.
        """
        return DesignComparisons(boundaries=read_comparisons(self.summary_path()))

    @fill_doc
    def execute(self, runner, boundaries, replicates, target):
        """Run both designs round by round at every boundary (each round one ``runner`` call).

        Parameters
        ----------
        %(runner)s
        %(boundary_options)s

        Returns
        -------
        list of tuple
            ``(d, L, centre, runs, pool)`` per boundary
            (:func:`~validation.token_retrieval.design.design_runs`).

        Raises
        ------
        LookupError
            A trial the design needs is missing from a replayed store.
        """
        out = []
        for b in boundaries:
            d, L = _pair(b)
            c = float(theory_centre(d, L))
            runs, pool = design_runs(d, L, replicates, target, runner.require_ok, centre=c, grid_ns=GRID_NS, s_max=S_MAX,
                                     start=START, batch=BATCH)
            out.append((d, L, c, runs, pool))
        return out

    @fill_doc
    def summarise(self, results, boundaries, replicates, target):
        """Compare the designs at every boundary (the pooled fit of all trials, trials, coverage).

        Parameters
        ----------
        results : list
            As returned by :meth:`execute`.
        %(boundary_options)s

        Returns
        -------
        DesignComparisons
            One :class:`~validation.token_retrieval.design.DesignComparison` per boundary.
        """
        return DesignComparisons(boundaries=[pooled_comparison(d, L, runs, pool, target=target, centre=c)
                                             for d, L, c, runs, pool in results])


def same_comparison(a, b, *, rel=1e-12):
    """Check whether two lists of comparisons agree: counts and outcomes exactly, floats to ``rel``.

    The theory's centre is recomputed on every replay (a root of the
    closed-form success probability), so it may differ from a committed value
    in the last digits between machines; every other float is a deterministic
    function of the stored outcomes.

    Parameters
    ----------
    a, b : list of DesignComparison
        The comparisons.
    rel : float, optional
        Relative tolerance of the floats.

    Returns
    -------
    bool
        True when they agree.
    """
    from hcizz.jsonout import to_json_value

    def same(x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(same(u, v) for u, v in zip(x, y))
        if isinstance(x, float) and isinstance(y, float):
            return x == y or math.isclose(x, y, rel_tol=rel, abs_tol=0)
        return x == y

    return same(to_json_value(list(a)), to_json_value(list(b)))


STUDIES = (AdaptiveBoundary(),)
