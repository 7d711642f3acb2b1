"""Parameter descriptions shared by the docstrings of :mod:`validation.linear_memory`.

The descriptions common to the whole project (``d``, ``p``, ``rng``, ...) live in
:data:`hcizz.docstrings.PARAMETERS`; this table holds those of the linear
memories, each written once.  A docstring names entries on a placeholder line
(``%(W)s %(facts)s``) and its function is decorated with :data:`fill_doc`, which
fills both tables in (``docs/architecture.md#shared-parameter-docs``).  The
``ref_*`` entries are whole ``References`` sections, one per docs page that
several docstrings cite.
"""
from __future__ import annotations

import functools

from hcizz.docstrings import fill_doc as _fill_doc


def _refs(text):
    """A whole ``References`` section citing ``text``."""
    return "References\n----------\n" + text


#: The package's own descriptions: key -> numpydoc entry ("name : type", then the text).
PARAMS = {
    "W": "W : ndarray, shape (d, d)\n    The memory.",
    "facts": "facts : Facts\n    OP or DP fact set (:mod:`validation.linear_memory.data`).",
    "model": "model : str\n    A registered memory model.",
    "dtype": "dtype : dtype\n    Float32 or float64.",
    # the arguments of a byte count of the candidate tensor (several entries)
    "nbytes_args": "p : int\n    Number of facts.\nd : int\n    Dimension.\ndtype : dtype\n    Element type.",
    "fact_model": 'model : str\n    ``"op"`` or ``"dp"``.',
    # a listwise case: criterion, tail fraction and margin (several entries)
    "case": ('criterion : str\n    ``"top1"`` or ``"tam"``.\n'
             "tau : float or None\n    Tail fraction.\n"
             "margin : float\n    Margin."),
    "Q": "Q : ndarray, shape (d, m)\n    Left factor.",
    "R": "R : ndarray, shape (d, m)\n    Right factor.",
    # whole References sections that several docstrings cite (one docs page each)
    "ref_spectra_init": _refs("docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation"),
    "ref_spectra_study": _refs("docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration"),
    "ref_protocol": _refs("docs/linear_memory.md#protocol"),
    "ref_exact_decisions": _refs("docs/listwise.md#exact-decisions"),
    "ref_full_rank_model": _refs("arXiv:2605.10795; docs/theory_full_rank.md#the-model"),
    "ref_finite_size": _refs("docs/linear_memory.md#finite-size-law-op-against-dp"),
    "ref_mechanism_paper": _refs("arXiv:2605.10795; docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p"),
    "ref_budget_study": _refs("docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen"),
    "ref_model": _refs("docs/linear_memory.md#model"),
    "ref_mechanism": _refs("docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p"),
    "ref_rank_model": _refs("docs/rank_constrained.md#the-model"),
    "ref_max_margin": _refs("docs/linear_memory.md#the-max-margin-memory-at-the-threshold"),
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` added.
fill_doc = functools.partial(_fill_doc, **PARAMS)
