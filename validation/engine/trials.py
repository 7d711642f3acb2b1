"""Stable names of trial functions: the ``@trial`` registry.

A store key identifies a trial by its function and its parameters. Keyed by
the function's ``module:qualname``, a trial could never move: moving the
module orphans every stored run. A trial function is therefore *registered*
under a stable name, which the key and the ``fn`` field of every record use::

    from validation.engine import trial

    @trial("linear_memory.capacity")
    def capacity_trial(params):
        ...

The name is dotted lower-case words (``"experiment.what"``); it outlives the
module that defines the function, so the function can move freely between
modules without changing a single key.  ``aliases`` lists the names a
function's records were written under before (``"module:qualname"`` of an old
location): :func:`resolve_name` maps them to the stable name, so a store
written by an older version is read with the new keys
(:func:`validation.engine.store.read_store`) and can be rewritten once
(:func:`validation.engine.store.migrate_store`).

The registry is generic infrastructure: it knows names and functions, no
experiment.  A function that is not registered is keyed by its
``module:qualname`` as before (tests, quick scripts).
"""
from __future__ import annotations

import re

from validation._docparams import fill_doc

__all__ = ["trial", "registered_trials", "resolve_name", "trial_name"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")
#: stable name -> function
_TRIALS = {}
#: earlier name (``module:qualname``) -> stable name
_ALIASES = {}


def _where(fn):
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"


def _source(fn):
    # the same function loaded twice (a module run as __main__ and imported by name, or
    # reloaded) has the same file and qualified name
    code = getattr(fn, "__code__", None)
    return (getattr(code, "co_filename", None), getattr(fn, "__qualname__", None))


@fill_doc
def trial(name, *, aliases=()):
    """Register a trial function under a stable name (a decorator).

    Parameters
    ----------
    name : str
        Stable name: dotted lower-case words, at least two
        (``"linear_memory.capacity"``).
    aliases : sequence of str, optional
        Earlier names of the same trial (``"module:qualname"`` of a former
        location) whose stored records are the same trials.

    Returns
    -------
    callable
        A decorator that registers the function and returns it unchanged but
        for the attribute ``__trial_name__``.

    Raises
    ------
    ValueError
        If ``name`` is malformed, or ``name`` or an alias is already taken by
        another function (the same function loaded twice, e.g. a module run
        with ``python -m`` and also imported by name, keeps its name).

    See Also
    --------
    validation.engine.trials.trial_name : The name a function was registered under.
    validation.engine.trials.registered_trials : Every registered trial.

    %(ref_writing_a_trial)s

    Examples
    --------
    >>> from validation.engine import trial, trial_key
    >>> @trial("demo.double")
    ... def double(params):
    ...     return {"y": 2 * params["x"]}
    >>> double.__trial_name__
    'demo.double'
    >>> trial_key({"x": 1}, double) == trial_key({"x": 1}, "demo.double")
    True
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be dotted lower-case words such as 'linear_memory.capacity', got {name!r}")
    aliases = tuple(aliases)
    for a in aliases:
        if not isinstance(a, str) or not a or a == name:
            raise ValueError(f"aliases must be earlier names (str) other than {name!r}, got {a!r}")

    def register(fn):
        if not callable(fn):
            raise ValueError(f"@trial({name!r}) must decorate a function, got {fn!r:.80}")
        old = _TRIALS.get(name)
        if old is not None and _where(old) != _where(fn) and _source(old) != _source(fn):
            raise ValueError(f"trial name {name!r} is already registered by {_where(old)}, "
                             f"cannot register {_where(fn)}")
        for a in aliases:
            if _ALIASES.get(a, name) != name:
                raise ValueError(f"alias {a!r} already names the trial {_ALIASES[a]!r}")
        _TRIALS[name] = fn
        for a in aliases:
            _ALIASES[a] = name
        fn.__trial_name__ = name
        fn.__trial_aliases__ = aliases
        return fn

    return register


@fill_doc
def trial_name(fn):
    """Return the stable name of a registered trial function, else None.

    Parameters
    ----------
    fn : callable
        A function.

    Returns
    -------
    str or None
        The name given to :func:`trial`.

    See Also
    --------
    validation.engine.trials.trial : Registers a trial under a name.

    %(ref_writing_a_trial)s
    """
    return getattr(fn, "__trial_name__", None)


@fill_doc
def resolve_name(name):
    """Map a record's ``fn`` field to the current name of its trial.

    Parameters
    ----------
    name : str or None
        A stable name, an earlier ``module:qualname`` alias, or any other name.

    Returns
    -------
    str or None
        The stable name an alias stands for; ``name`` itself otherwise.

    See Also
    --------
    validation.engine.store.migrate_store : Rewrites a store under the current names.

    Notes
    -----
    Aliases are known once the module defining the trial has been imported
    (its decorator ran); the experiment packages import their trial modules.

    %(ref_records)s
    """
    if name is None:
        return None
    return _ALIASES.get(name, name)


@fill_doc
def registered_trials():
    """Return the registered trials.

    Returns
    -------
    dict
        Stable name -> ``{"function": "module:qualname", "aliases": [...]}``,
        sorted by name.

    See Also
    --------
    validation.engine.trials.trial : Registers a trial.

    %(ref_writing_a_trial)s
    """
    return {n: {"function": _where(f), "aliases": list(getattr(f, "__trial_aliases__", ()))}
            for n, f in sorted(_TRIALS.items())}
