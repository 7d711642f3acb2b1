"""Parameter descriptions shared by several ``hcizz`` docstrings (one table).

The package's own entries for :func:`hcizz.docstrings.fill`; the entries shared
with the other packages are :data:`hcizz.docstrings.PARAMETERS`, and the References
sections cited by several docstrings :data:`hcizz.docstrings.REFERENCES`.
"""
from __future__ import annotations

import functools

from .docstrings import fill_doc as _fill_doc

#: ``hcizz``-only descriptions: name -> numpydoc entry
PARAMS = {
    "mp_ratio": "ratio : float\n    Aspect ratio :math:`\\lambda > 0`.",
    # parameters of several hcizz.spherical, hcizz.cli and spectral-law functions
    "field_theta": "theta : float\n    Field :math:`\\ge 0`.",
    "fields_theta": "theta : float or array_like\n    Field(s) :math:`\\ge 0`.",
    "seed_rng": "rng : None, int or Generator, optional\n    Seed or generator.",
    "law_nodes": "n : int, optional\n    Gauss-Legendre nodes for the expectation over a law (default 400).",
    "prog": 'prog : str\n    Program name, e.g. ``"python -m replica"``.',
    "cli_description": "description : str\n    Text of ``--help``.",
    "mp_lambda": "ratio : float\n    :math:`\\lambda = m / d > 0` (finite).",
    "tiny_kappa": "kappa : float\n    Rank fraction in ``[2.2250738585072014e-308, 1]``.",
    # the record class of the Examples of hcizz.results (a result with an optional field)
    "pair_result_example": (">>> from dataclasses import dataclass\n"
                            ">>> @dataclass(frozen=True)\n"
                            "... class Pair(Result):\n"
                            "...     a: float\n"
                            "...     b: int = optional()"),
    # the Parameters section of x_minus_sin / xms_over_cube (a whole section)
    "x_params": "Parameters\n----------\nx : float or array_like\n    Argument.",
    # the Parameters section of dd_floor / dd_ceil (a whole section)
    "dd_params": "Parameters\n----------\nhi, lo : float\n    A double-double (see :func:`dd_from_mp`).",
}

# See Also (the two other helpers) and References of the three double-double helpers of
# hcizz.numerics: ``dd_helpers_<name>`` for each, built from one description per helper.
_DD_HELPERS = {"dd_from_mp": "Make a double-double.", "dd_floor": "The largest double below a double-double.",
               "dd_ceil": "The smallest double above a double-double."}
PARAMS.update({f"dd_helpers_{name[3:]}": "See Also\n--------\n"
               + "".join(f"hcizz.numerics.{other} : {text}\n" for other, text in _DD_HELPERS.items() if other != name)
               + "\nReferences\n----------\ndocs/reliability.md#spectral-laws-at-the-edges-of-their-domain"
               for name in _DD_HELPERS})

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` added
fill_doc = functools.partial(_fill_doc, **PARAMS)
