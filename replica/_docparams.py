"""Parameter descriptions shared by several ``replica`` docstrings (one table).

The package's own entries for :func:`hcizz.docstrings.fill`; the entries shared
with the other packages stay in :data:`hcizz.docstrings.PARAMETERS`, and the
References sections cited by several docstrings in :data:`hcizz.docstrings.REFERENCES`.
"""
from __future__ import annotations

import functools

from hcizz.docstrings import fill_doc as _fill_doc

#: ``replica``-only descriptions: name -> numpydoc entry
PARAMS = {
    "n_terms": ("n_terms : int\n"
                "    Number of coefficients, ``1 <= n_terms <= 100`` (exact rationals: 0.4 s at\n"
                "    50, 5 s at 100)."),
    # replica.symbolic.series / limit
    "variable": ("x : sympy.Symbol or str, optional\n"
                 "    Variable (a name of one of ``f``'s symbols); may be omitted when ``f``\n"
                 "    has one symbol."),
    # the disorder samplers of replica.energy and replica.finite_capacity
    "p_unchecked": "p : int\n    Number of candidates (``p - 1`` competitors); not validated here.",
    "generator": "rng : numpy.random.Generator\n    Generator (already constructed).",
    # the score samplers of replica.pinned_scores
    "fact_samples": "samples : int\n    Independent facts (rows), ``>= 2``.",
    "fact_rng": ("rng : None, int, SeedSequence or Generator\n"
                 "    Source of randomness (``numpy.random.default_rng(rng)``)."),
    "n_top": ("n_top : int, optional\n"
              "    Number of largest competitors returned per row (``1 <= n_top <= p - 1``;\n"
              "    default ``min(10, p - 1)``)."),
    # parameters of several replica.listwise, replica.energy and replica.hebbian functions
    "randomness_rng": "rng : None, int, SeedSequence or Generator\n    Randomness.",
    "tam_margin": "margin : float\n    Margin ``0 <= gamma <= 20``.",
    "tau_fractions": "tau : float or array_like\n    Tail fraction, ``0 < tau <= 1``.",
    "tau_fraction": "tau : float\n    Tail fraction, ``0 < tau <= 1``.",
    "eta_sample": "eta : EtaSample\n    Disorder samples.",
    "eta_samples": "samples : int\n    Monte Carlo samples of :math:`\\eta`.",
    "hebbian_problem": 'problem : {"op", "dp"}\n    See :func:`hebbian_recall_probability`.',
    "replica_sub": "sub : argparse._SubParsersAction\n    The subparsers object of ``python -m replica``.",
    # the Parameters section of replica.CensoredNormal's cdf / sf (a whole section)
    "points_params": "Parameters\n----------\nx : float or array_like\n    Points.",
    # the Raises section of the functions that check every argument's range (a whole section)
    "raises_range": "Raises\n------\nValueError\n    If an argument is out of range.",
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` added
fill_doc = functools.partial(_fill_doc, **PARAMS)
