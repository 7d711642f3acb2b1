"""Shared parameter documentation: one text per common parameter, filled into docstrings.

Many functions of the three packages take the same parameters (a dimension
``d``, a number of facts ``p``, a rank ratio ``kappa``, a random state
``rng``, the sweep engine's ``workers``/``executor``/``store``/``progress``).
Their descriptions are written once, in :data:`PARAMETERS`, and a docstring
names them on a line of its own::

    @fill_doc
    def f(d, rng=None):
        \"\"\"Do something.

        Parameters
        ----------
        %(d)s
        %(rng)s
        \"\"\"

:func:`fill_doc` replaces each such line by the shared text, indented like the
placeholder; a ``%`` anywhere else in the docstring is left alone (only whole
placeholder lines are substituted).  An entry may be a whole section: the
References sections cited by several docstrings are written once, in
:data:`REFERENCES` (``%(refs_spectral_laws)s``).  This is the approach of
``scipy._lib.doccer``, kept to whole lines so that docstrings need no escaping.
"""
from __future__ import annotations

import re

__all__ = ["PARAMETERS", "REFERENCES", "fill_doc", "fill"]

#: Shared descriptions: name -> numpydoc entry ("name : type" line, then the description).
PARAMETERS = {
    "d": "d : int\n    Dimension (>= 1).",
    "p": "p : int\n    Number of facts (>= 2).",
    "kappa": "kappa : float\n    Rank ratio ``m / d`` in (0, 1] (the rank is ``m = max(1, round(kappa d))``).",
    "alpha": "alpha : float\n    Load ``p ln p / d^2`` (> 0).",
    "rng": ("rng : None, int or numpy.random.Generator, optional\n"
            "    Source of randomness: a seed or a generator (:func:`hcizz.checks.check_rng`)."),
    "samples": "samples : int, optional\n    Monte Carlo samples (>= 1); the standard error falls as ``samples**-0.5``.",
    "workers": "workers : int, optional\n    Worker processes of the sweep (>= 1).",
    "executor": ("executor : str or validation.engine.WorkerPool, optional\n"
                 "    ``\"processes\"``, ``\"inprocess\"``, ``\"dask\"`` or a shared pool "
                 "(see :func:`validation.engine.run_sweep`)."),
    "store": ("store : str or path-like, optional\n"
              "    JSONL trial store: finished trials are read back, new ones appended "
              "(``docs/sweeps.md#resuming``)."),
    "progress": "progress : bool, optional\n    Print progress lines on stderr.",
    "level": "level : float, optional\n    Confidence level of the interval, in (0, 1) (default 0.95).",
    "conf_alpha": "alpha : float, optional\n    One minus the confidence level, in (0, 1) (default 0.05).",
    "rank_fraction": "kappa : float\n    Rank fraction in :math:`(0, 1]`.",
}
# the Parameters section of every ``conf_int(alpha)`` (a whole section)
PARAMETERS["conf_int_params"] = "Parameters\n----------\n" + PARAMETERS["conf_alpha"]
# the Returns section of a confidence interval given as two floats (a whole section)
PARAMETERS["ci_returns"] = "Returns\n-------\ntuple of float\n    ``(low, high)``."

#: References sections cited by several docstrings of the project, one per place cited
#: (a whole section, its header included): name -> section text.  Every ``fill_doc``
#: (``hcizz``, ``replica`` and ``validation``) fills them in.  The ``refs_paper_*``
#: entries cite arXiv:2605.10795, the ``refs_listwise_paper_*`` ones arXiv:2605.05189.
REFERENCES = {
    name: "References\n----------\n" + where for name, where in {
        "refs_listwise_paper_large_p": "arXiv:2605.05189; docs/listwise.md#large-p-limit",
        "refs_listwise_paper_score_laws": "arXiv:2605.05189; docs/listwise.md#laws-of-the-scores-at-capacity",
        "refs_paper_quantile_coupling": "arXiv:2605.10795; docs/rank_constrained.md#reduction-to-a-quantile-coupling",
        "refs_paper_hebbian": "arXiv:2605.10795; docs/theory_full_rank.md#hebbian-rule",
        "refs_paper_independent_gaussian": "arXiv:2605.10795; docs/theory_full_rank.md#independent-gaussian-model",
        "refs_paper_large_p": "arXiv:2605.10795; docs/theory_full_rank.md#large-p-limit",
        "refs_paper_free_entropy": "arXiv:2605.10795; docs/theory_full_rank.md#replica-symmetric-free-entropy",
        "refs_paper_model": "arXiv:2605.10795; docs/theory_full_rank.md#the-model",
        "refs_replica_cli_json": "docs/api_replica.md#cli-python--m-replica-subcommand----json",
        "refs_symbolic_checks": "docs/api_replica.md#symbolic-checks",
        "refs_symbolic_interface": "docs/api_replica.md#symbolic-interface",
        "refs_result_protocol": "docs/architecture.md#one-result-protocol",
        "refs_lm_excess": "docs/linear_memory.md#the-excess-over-the-finite-p-theory",
        "refs_listwise_finite_p": "docs/listwise.md#finite-p-corrections",
        "refs_listwise_large_p": "docs/listwise.md#large-p-limit",
        "refs_listwise_score_laws": "docs/listwise.md#laws-of-the-scores-at-capacity",
        "refs_closed_form": "docs/rank_constrained.md#closed-form",
        "refs_numerics": "docs/rank_constrained.md#numerics-and-oracles",
        "refs_quarter_circle": "docs/rank_constrained.md#quarter-circle-law",
        "refs_quantile_coupling": "docs/rank_constrained.md#reduction-to-a-quantile-coupling",
        "refs_small_kappa": "docs/rank_constrained.md#small-kappa-expansion",
        "refs_spectral_laws": "docs/rank_constrained.md#spectral-laws-hcizz",
        "refs_spectral_laws_edges": "docs/rank_constrained.md#spectral-laws-hcizz;\ndocs/reliability.md#spectral-laws-at-the-edges-of-their-domain",
        "refs_spherical": "docs/rank_constrained.md#spherical-integrals-hcizzspherical",
        "refs_bad_input": "docs/reliability.md#bad-input-classes-and-what-each-gives",
        "refs_json": "docs/reliability.md#json",
        "refs_margin_capacity": "docs/theory_full_rank.md#capacity-at-a-margin",
        "refs_energy_term": "docs/theory_full_rank.md#computing-the-energy-term",
        "refs_v_one_sample": "docs/theory_full_rank.md#computing-v-for-one-sample",
        "refs_hebbian": "docs/theory_full_rank.md#hebbian-rule",
        "refs_hebbian_tam": "docs/listwise.md#the-hebbian-memory",
        "refs_large_p": "docs/theory_full_rank.md#large-p-limit",
        "refs_order_statistics": "docs/theory_full_rank.md#order-statistics-method",
    }.items()
}

#: a placeholder line: one or more ``%(name)s`` separated by blanks, nothing else
_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<names>%\(\w+\)s(?:[ \t]+%\(\w+\)s)*)[ \t]*$", re.M)
_NAME = re.compile(r"%\((\w+)\)s")


def fill(doc, params=None):
    """Return ``doc`` with every whole-line ``%(name)s`` replaced by the shared text.

    A placeholder line may name several entries (``%(d)s %(p)s %(rng)s``): they are
    filled in that order, one after the other.

    Parameters
    ----------
    doc : str or None
        A docstring (``None`` is returned unchanged).
    params : dict, optional
        Descriptions to use instead of (or besides) :data:`PARAMETERS` and
        :data:`REFERENCES`.

    Returns
    -------
    str or None
        The filled docstring.

    Raises
    ------
    KeyError
        A placeholder names no shared description.

    See Also
    --------
    hcizz.docstrings.fill_doc : The decorator that applies it.

    References
    ----------
    docs/architecture.md#shared-parameter-docs

    Examples
    --------
    >>> print(fill("Parameters\\n----------\\n%(d)s\\n"))
    Parameters
    ----------
    d : int
        Dimension (>= 1).
    <BLANKLINE>
    >>> print(fill("    %(d)s %(p)s"))
        d : int
            Dimension (>= 1).
        p : int
            Number of facts (>= 2).
    """
    if doc is None:
        return None
    table = {**PARAMETERS, **REFERENCES, **(params or {})}

    def sub(m):
        ind = m.group("indent")
        text = "\n".join(table[name] for name in _NAME.findall(m.group("names")))
        return "\n".join(ind + line if line else line for line in text.split("\n"))

    return _LINE.sub(sub, doc)


def fill_doc(obj=None, **params):
    """Fill the shared parameter descriptions into a function's or class's docstring (a decorator).

    Parameters
    ----------
    obj : callable or type, optional
        The object (used bare, ``@fill_doc``).
    **params
        Extra or overriding descriptions (used as ``@fill_doc(x="x : float\\n    ...")``).

    Returns
    -------
    object
        The object, its ``__doc__`` filled (:func:`fill`).

    See Also
    --------
    hcizz.docstrings.fill : The substitution it applies.

    References
    ----------
    docs/architecture.md#shared-parameter-docs

    Examples
    --------
    >>> @fill_doc
    ... def f(d):
    ...     '''Return d.
    ...
    ...     Parameters
    ...     ----------
    ...     %(d)s
    ...     '''
    ...     return d
    >>> print(f.__doc__.strip().splitlines()[-2:])
    ['    d : int', '        Dimension (>= 1).']
    """
    def apply(o):
        o.__doc__ = fill(o.__doc__, params)
        return o

    return apply(obj) if obj is not None else apply
