"""Studies: one module per question, all under one protocol (:class:`validation.studies.base.Study`).

A study holds the plan of its trials, the committed store of its paper-size
runs (read-only package data in ``validation/studies/stored/``) and its
summary; the library below it (``validation.linear_memory``,
``validation.factual_recall``, ``validation.token_retrieval``, the engine and
the fits) holds the models, trials and fits it uses, and the report's
sections render its summaries.  Run one with::

    python -m validation study NAME [--store PATH] [--workers N] [options]
    python -m validation study --list

:data:`STUDY_MODULES` lists the modules; each defines ``STUDIES``, a tuple of
:class:`~validation.studies.base.Study` instances whose ``name`` is unique.
"""
from __future__ import annotations

import importlib

__all__ = ["STUDY_MODULES", "get_study", "study_names", "all_studies"]

#: Modules holding studies, in the order ``--list`` prints them.
STUDY_MODULES = (
    "validation.studies.linear_memory_exact",
    "validation.studies.linear_memory_capacity",
    "validation.studies.linear_memory_d150",
    "validation.studies.linear_memory_lowrank",
    "validation.studies.linear_memory_margins",
    "validation.studies.linear_memory_spectra",
    "validation.studies.linear_memory_adaptive",
    "validation.studies.linear_memory_budget",
    "validation.studies.linear_memory_listwise",
    "validation.studies.linear_memory_listwise_trained",
    "validation.studies.linear_memory_max_margin",
    "validation.studies.linear_memory_listwise_max_margin",
    "validation.studies.factual_recall_memory",
    "validation.studies.factual_recall_capacity",
    "validation.studies.factual_recall_paper",
    "validation.studies.token_retrieval_grid",
    "validation.studies.token_retrieval_adaptive_boundary",
)


def all_studies():
    """Return every study, by name.

    Returns
    -------
    dict
        Study name -> :class:`~validation.studies.base.Study` instance, in
        :data:`STUDY_MODULES` order.

    Raises
    ------
    RuntimeError
        If two studies share a name.

    References
    ----------
    docs/architecture.md#where-to-add
    """
    out = {}
    for mod in STUDY_MODULES:
        for s in importlib.import_module(mod).STUDIES:
            if s.name in out:
                raise RuntimeError(f"two studies are named {s.name!r}")
            out[s.name] = s
    return out


def study_names():
    """Return the names of all studies.

    Returns
    -------
    list of str
        In :data:`STUDY_MODULES` order.

    References
    ----------
    docs/architecture.md#where-to-add
    """
    return list(all_studies())


def get_study(name):
    """Return the study called ``name``.

    Parameters
    ----------
    name : str
        A study name (``python -m validation study --list``).

    Returns
    -------
    validation.studies.base.Study
        The study.

    Raises
    ------
    ValueError
        If there is no such study (the message lists them).

    References
    ----------
    docs/architecture.md#where-to-add
    """
    studies = all_studies()
    if name not in studies:
        raise ValueError(f"study must be one of {', '.join(studies)}, got {name!r}")
    return studies[name]
