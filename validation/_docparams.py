"""Parameter descriptions shared by docstrings of ``validation`` (one table).

The descriptions common to the whole project (``d``, ``rng``, ``workers``, ...)
live in :data:`hcizz.docstrings.PARAMETERS`; this table holds those that only
``validation`` uses, each written once.  A docstring names entries on a
placeholder line (``%(trial_fn)s %(tasks)s``) and the module decorates the
function with :data:`fill_doc`, which fills both tables in
(``docs/architecture.md#shared-parameter-docs``).  Most entries are one
``name : type`` item (they work in Parameters, Returns and Yields alike); an entry
may also be a whole section (``trial_yields``; the ``ref_*`` entries are whole
``References`` sections, one per text that several docstrings cite).
:func:`returned_by` writes the See Also and References sections of a result
record, each record naming the function that returns it
(``@fill_doc(record_links=returned_by(...))``).
"""
from __future__ import annotations

import functools

from hcizz.docstrings import fill_doc as _fill_doc


def _refs(text):
    """A whole ``References`` section citing ``text``."""
    return "References\n----------\n" + text


#: ``validation``'s own descriptions: key -> numpydoc entry ("name : type", then the text).
PARAMS = {
    # ------------------------------------------------------------------ sweep engine
    "fn": "fn : callable\n    Trial function.",
    "trial_fn": "fn : callable\n    Trial function (importable and picklable).",
    "tasks": "tasks : list of (int, dict)\n    ``(index, params)`` pairs.",
    # the Yields section of every executor (a whole section)
    "trial_yields": ("Yields\n------\n"
                     "index : int\n    Index of the finished trial, in order of completion.\n"
                     "outcome : dict\n"
                     "    Its outcome, as returned by :func:`validation.engine.executors.run_trial`."),
    "n_params": "n_params : int\n    Trials requested (duplicates included).",
    "n_unique": "n_unique : int\n    Distinct trials.",
    # ------------------------------------------------------------------ command line
    # the Parameters section of every ``register(sub)`` of ``python -m validation``
    "register_params": ("Parameters\n----------\n"
                        "sub : argparse._SubParsersAction\n"
                        "    The subparsers object of ``python -m validation``."),
    # ------------------------------------------------------------------ threshold fits
    "trial_x": "x : array_like\n" r"    Regressor of each trial (a load, :math:`\log N`, ...).",
    "trial_success": "success : array_like of bool\n    Outcome of each trial.",
    # ------------------------------------------------------------------ optimisers
    "opt_params": "params : list of ndarray\n    Parameters, updated in place by :meth:`step`.",
    # ------------------------------------------------------------------ factual recall: fits
    "points_n": "n : int\n    Points.",
    "hidden_level": "level : float\n    Confidence level (not written by ``to_dict()``).",
    # ------------------------------------------------------------------ factual recall: memories
    "X_inputs": "X : ndarray (n, d)\n    Input embeddings.",
    "U_outputs": "U : ndarray (k, d)\n    Output embeddings (candidates).",
    "fact_targets": "targets : int ndarray (n,)\n    Index in ``U`` of each input's output.",
    "grads_flag": "grad : bool\n    Compute the gradients.",
    "xent": "loss : float\n    Mean cross-entropy.",
    "param_grads": ("grads : list of ndarray or None\n"
                    "    Gradients in the order of ``params`` (``None`` without ``grad``)."),
    "fact_correct": "correct : bool ndarray (n,)\n    Strict-argmax recall of each fact.",
    # ------------------------------------------------------------------ factual recall: experiments
    "quick_sizes": "quick : bool\n    Quick or full sizes.",
    "exp_rng": "rng : None, int or Generator\n    Randomness.",
    # the Parameters section of the transformer experiments (a whole section)
    "transformer_experiment_params": ("Parameters\n----------\n"
                                      "quick : bool\n    Quick or full sizes.\n"
                                      "rng : None, int or Generator\n    Randomness.\n"
                                      "progress : callable\n"
                                      "    ``progress(message)`` after each configuration.\n"
                                      "D : int\n    Answers per relation."),
    # whole References sections cited by several docstrings (one text per cited page)
    "ref_adaptive_threshold_design": _refs("docs/sweeps.md#adaptive-threshold-design"),
    "ref_associative_memories_paper": _refs(
        "arXiv:2412.06538; docs/factual_recall.md#associative-memories"),
    "ref_escape_times_paper": _refs("arXiv:2412.06538; docs/factual_recall.md#escape-times"),
    "ref_experiments": _refs("docs/factual_recall.md#experiments"),
    "ref_experiments_paper": _refs("arXiv:2412.06538; docs/factual_recall.md#experiments"),
    "ref_facts_per_param": _refs("docs/factual_recall.md#facts-per-parameter-budget-checked"),
    "ref_facts_per_param_paper": _refs(
        "arXiv:2412.06538; docs/factual_recall.md#facts-per-parameter-budget-checked"),
    "ref_measured_results": _refs("docs/factual_recall.md#measured-results"),
    "ref_model_paper": _refs("arXiv:2412.06538; docs/factual_recall.md#model"),
    "ref_one_pool": _refs("docs/sweeps.md#one-pool-for-many-sweeps"),
    "ref_records": _refs("docs/sweeps.md#records"),
    "ref_local_sweep": _refs("docs/sweeps.md#running-a-sweep-locally"),
    "ref_dask_cluster": _refs("docs/sweeps.md#running-on-a-dask-cluster"),
    "ref_stores": _refs("docs/reliability.md#stores"),
    "ref_task_paper": _refs("arXiv:2412.06538; docs/factual_recall.md#task"),
    "ref_papers_protocol_paper": _refs(
        "arXiv:2412.06538; docs/factual_recall.md#the-papers-protocol-against-the-papers-code"),
    "ref_training_objective": _refs("docs/linear_memory.md#training-objective"),
    "ref_writing_a_trial": _refs("docs/sweeps.md#writing-a-trial"),
}

#: ``hcizz.docstrings.fill_doc`` with :data:`PARAMS` added (use as ``@fill_doc``).
fill_doc = functools.partial(_fill_doc, **PARAMS)


def returned_by(fn, refs, *also):
    """Return the See Also and References sections of a result record (a ``fill_doc`` entry).

    Parameters
    ----------
    fn : str
        Fully qualified name of the function that returns the record.
    refs : str
        The References line.
    *also : str
        Further See Also entries (``"name : text"``), after ``fn``.

    Returns
    -------
    str
        The two sections, for the ``record_links`` placeholder of the record's docstring.

    Examples
    --------
    >>> print(returned_by("validation.logistic.fit_threshold", "docs/sweeps.md"))
    See Also
    --------
    validation.logistic.fit_threshold : The function that returns it.
    <BLANKLINE>
    References
    ----------
    docs/sweeps.md
    """
    see = "\n".join([f"{fn} : The function that returns it.", *also])
    return f"See Also\n--------\n{see}\n\n" + _refs(refs)
