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


#: What the ``References`` sections that several docstrings share cite (a docs page, and a paper):
#: key -> text; :data:`PARAMS` holds each whole section as ``ref_<key>``.
REFERENCES = {
    "spectra_init": "docs/rank_constrained.md#spectra-at-capacity-and-at-initialisation",
    "spectra_study": "docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration",
    "protocol": "docs/linear_memory.md#protocol",
    "exact_decisions": "docs/listwise.md#exact-decisions",
    "full_rank_model": "arXiv:2605.10795; docs/theory_full_rank.md#the-model",
    "finite_size": "docs/linear_memory.md#finite-size-law-op-against-dp",
    "mechanism_paper": "arXiv:2605.10795; docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p",
    "budget_study": "docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen",
    "model": "docs/linear_memory.md#model",
    "mechanism": "docs/linear_memory.md#mechanism-at-finite-p-the-minimiser-of-v_p",
    "rank_model": "docs/rank_constrained.md#the-model",
    "max_margin": "docs/linear_memory.md#the-max-margin-memory-at-the-threshold",
}


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
    # the grid of a listwise capacity measurement, exact or trained (several entries)
    "listwise_grid": ("tau : float, optional\n    Tail fraction (``tam`` only).\n"
                      "margin : float\n    Margin :math:`\\geq 0`.\n"
                      "seeds : int\n    Instances per ``n`` (one decision or one run each).\n"
                      "ns : sequence of int, optional\n    Numbers of facts; default ``n_loads`` values spanning "
                      "``(1 +- rel)``\n    times the predicted ``n``.\n"
                      "n_loads : int\n    Size of the default grid (>= 2).\n"
                      "rel : float\n    Relative half-width of the default grid, in ``(0, 1)``.\n"
                      "seed0 : int\n    First seed."),
    # where a sweep of :func:`validation.engine.run_sweep` runs (several entries)
    "sweep_args": ("store : path, optional\n    JSONL store of :func:`validation.engine.run_sweep`.\n"
                   "workers : int, optional\n    Worker processes.\n"
                   'executor : {"processes", "inprocess", "dask"}\n    Executor of ``run_sweep``.\n'
                   "progress : bool\n    Print progress."),
    "Q": "Q : ndarray, shape (d, m)\n    Left factor.",
    "R": "R : ndarray, shape (d, m)\n    Right factor.",
    # the whole References sections: "ref_<key>" for each key of REFERENCES
    **{"ref_" + k: "References\n----------\n" + v for k, v in REFERENCES.items()},
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` added.
fill_doc = functools.partial(_fill_doc, **PARAMS)
