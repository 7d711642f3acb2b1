"""Parameter descriptions shared by several ``hcizz`` docstrings (one table).

The package's own entries for :func:`hcizz.docstrings.fill`; the entries shared
with the other packages are :data:`hcizz.docstrings.PARAMETERS`.
"""
from __future__ import annotations

import functools

from .docstrings import fill_doc as _fill_doc

#: ``hcizz``-only descriptions: name -> numpydoc entry
PARAMS = {
    "mp_ratio": "ratio : float\n    Aspect ratio :math:`\\lambda > 0`.",
    "double_double": "hi, lo : float\n    A double-double (see :func:`dd_from_mp`).",
}

#: :func:`hcizz.docstrings.fill_doc` with :data:`PARAMS` added
fill_doc = functools.partial(_fill_doc, **PARAMS)
