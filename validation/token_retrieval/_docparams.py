"""Shared parameter descriptions of the token-retrieval package (one table, filled into docstrings).

The theory functions take the same model options (``N, d, L``, ``V``, ``tau``,
``kind``, ``noise``, ``m``, the step sizes), the boundary scans, the design
replicates and the preset scans share theirs; each description is written once
in :data:`PARAMS` and a docstring names it on a placeholder line
(``%(NdL)s %(V)s %(tau)s``) that :func:`fill_doc` replaces, as
:func:`hcizz.docstrings.fill_doc` does for the parameters every package shares
(docs/architecture.md#shared-parameter-docs).  Private to this package: an entry
that links a function (``:func:`run_grid```) is named only in that function's module.
The preset scans share their Parameters and Returns sections, written by
:func:`preset_scan`.  The ``ref_*`` entries are whole ``References`` sections,
one per text that several docstrings cite.
"""
from __future__ import annotations

import functools

from hcizz import docstrings

__all__ = ["PARAMS", "fill_doc", "preset_scan"]

def _refs(text):
    """A whole ``References`` section citing ``text``."""
    return "References\n----------\n" + text


_SEEDS = "seeds : int\n    Seeds per point."

#: Descriptions of the model options: name -> numpydoc entry.
PARAMS = {
    "NdL": "N, d, L : int\n    Training sequences (>= 1), dimension (>= 1), length (>= 2).",
    "V": "V : int, optional\n    Vocabulary (>= N); default :math:`4 N`.",
    "tau": "tau : float\n    Trigger scale (``trig_scale``, > 0).",
    "kind": ('kind : {"random", "orthogonal"}\n'
             '    Embeddings; ``"orthogonal"`` sets every :math:`1/d` interference to 0.'),
    "noise": 'noise : {"vocab", "gaussian"}\n    Noise tokens from the vocabulary or fresh Gaussian vectors.',
    "m": "m : int, optional\n    Width of the fixed random MLP (None: no MLP).",
    "eta": "eta : float\n    First step size (> 0).",
    "beta": "beta : float\n" r"    :math:`\|W_1\|_F` under the ``beta`` convention (default 10).",
    "gamma": "gamma : float, optional\n    Literal step size of steps 2 and 3 (overrides ``beta``).",
    "fresh": "fresh : bool\n    Moments on fresh sequences instead of the training sequences.",
    "dL": "d, L : int\n    Dimension and sequence length.",
    "Ns": ("Ns : sequence of int, optional\n"
           r"    ``N`` values scanned (default :math:`2^1, \ldots, 2^{11}` on a fine geometric grid)."),
    "vocab_ratio": "vocab_ratio : float\n    ``V = round(vocab_ratio N)``.",
    "crossing_level": "level : float\n    Crossing level.",
    "success_kw": "**kw\n    Options of :func:`success_probs` (not ``V``).",
    "boundary_dL": "d, L : int\n    The boundary.",
    "replicate": "r : int\n    Replicate (seeds ``1000 r, 1000 r + 1, ...``).",
    "target": "target : float\n" r"    Target 95 % half-width of :math:`\log N_c`.",
    "run": "run : callable\n    ``run(params) -> results`` (dicts with ``N``, ``seed``, ``retrieval``).",
    "design_returns": ("run_result : DesignRun\n    The replicate.\n"
                       "trials : list of dict\n    The results of its trials."),
    "comparisons_returns": "list of DesignComparison\n    One per boundary.",
    "seed_root": "seed : int, optional\n    Root seed.",
    "progress_cb": "progress : callable, optional\n    Progress callback, as in :func:`run_grid`.",
    # the grid of a scan at one dimension: as a record holds it, as a function takes it
    "seeds_per_point": _SEEDS,
    "grid_fields": "d : int\n    Dimension.\nNs, Ls : list of int\n    The grid.\n" + _SEEDS,
    "grid_args": "d : int\n    Dimension.\nNs, Ls : sequence of int\n    The grid.\n" + _SEEDS,
    # whole References sections cited by several docstrings (one text per cited page)
    "ref_adaptive_design": _refs("docs/token_retrieval.md#adaptive-design-of-the-boundary"),
    "ref_attention_scores": _refs("docs/token_retrieval.md#attention-scores"),
    "ref_early_phase_full_training": _refs("docs/token_retrieval.md#early-phase-and-full-training"),
    "ref_experiments": _refs("docs/token_retrieval.md#experiments"),
    "ref_counting_bound": _refs("docs/token_retrieval.md#information-theoretic-counting-bound"),
    "ref_model": _refs("docs/token_retrieval.md#model"),
    "ref_contrast_vs_token_theory": _refs(
        "docs/token_retrieval.md#random-vs-orthogonal-embeddings-and-the-mlp-width-against-the-token-level-theory"),
    "ref_retrieval_probability": _refs("docs/token_retrieval.md#retrieval-probability"),
    "ref_step_3_logits": _refs("docs/token_retrieval.md#step-3-logits-trigger-pollution-and-cross-talk"),
    "ref_task": _refs("docs/token_retrieval.md#task"),
    "ref_task_paper": _refs("arXiv:2603.15923; docs/token_retrieval.md#task"),
    "ref_the_boundary_law": _refs("docs/token_retrieval.md#the-boundary-law"),
    "ref_the_orthonormal_case": _refs("docs/token_retrieval.md#the-orthonormal-case"),
    "ref_theory_of_the_early_phase": _refs("docs/token_retrieval.md#theory-of-the-early-phase"),
    "ref_token_level_theory": _refs("docs/token_retrieval.md#token-level-theory"),
    "ref_token_level_theory_paper": _refs("arXiv:2603.15923; docs/token_retrieval.md#token-level-theory"),
    "ref_theory_vs_sim": _refs("docs/token_retrieval.md#token-level-theory-against-simulation"),
    "ref_lower_bound_question": _refs("docs/token_retrieval.md#which-question-a-lower-bound-answers"),
    "ref_lower_bound_question_paper": _refs("arXiv:2603.15923; docs/token_retrieval.md#which-question-a-lower-bound-answers"),
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` besides the shared table.
fill_doc = functools.partial(docstrings.fill_doc, **PARAMS)


def preset_scan(part, result, fn):
    """Return the Parameters and Returns sections of a preset scan (a ``fill_doc`` entry).

    Parameters
    ----------
    part : str
        The scan's key in each preset of :data:`~validation.token_retrieval.experiments.PRESETS`.
    result : str
        The class the scan returns.
    fn : str
        The function of ``experiments`` that builds it from the runs.

    Returns
    -------
    str
        Both sections, for the ``scan_sections`` placeholder of the scan's docstring.

    Examples
    --------
    >>> print(preset_scan("mlp", "MLPScan", "mlp_boundaries").splitlines()[3])
        Sizes of :data:`PRESETS` (``mlp``).
    """
    return docstrings.fill("Parameters\n----------\n"
                           'preset : {"quick", "full"}\n'
                           f"    Sizes of :data:`PRESETS` (``{part}``).\n"
                           "%(seed_root)s %(progress_cb)s\n\n"
                           f"Returns\n-------\n{result}\n    :func:`{fn}` of the runs.", PARAMS)
