"""Atomic file output and JSON conversion used by reports and CLIs."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hcizz.jsonout import dumps as _dumps
from hcizz.jsonout import to_json_value

__all__ = ["to_jsonable", "atomic_write_text", "atomic_write_json", "dumps"]


def to_jsonable(obj):
    """Convert ``obj`` recursively into plain JSON values under the project's JSON policy.

    Numpy scalars/arrays, results with ``to_dict()``, paths and non-finite
    floats are converted by :func:`hcizz.jsonout.to_json_value` (NaN/inf become
    the strings ``"nan"``, ``"inf"``, ``"-inf"``).

    Parameters
    ----------
    obj : object
        The value to convert.

    Returns
    -------
    object
        Plain JSON value.

    References
    ----------
    docs/reliability.md#json
    """
    return to_json_value(obj)


def dumps(obj, **kw):
    """Serialise ``obj`` to strict JSON text (:func:`hcizz.jsonout.dumps`).

    Parameters
    ----------
    obj : object
        The value.
    **kw
        Passed to ``json.dumps`` (e.g. ``indent``).

    Returns
    -------
    str
        The JSON text.

    References
    ----------
    docs/reliability.md#json
    """
    return _dumps(obj, **kw)


def _umask():
    """The process umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)   # no portable read-only query elsewhere
    os.umask(mask)
    return mask


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` atomically.

    A temporary file in the same folder is written, fsynced and moved over
    ``path`` with ``os.replace``: readers see the old file or the new one, never
    a partial one.  The file gets the permissions of a plain ``open(path, "w")``
    (``0o666`` less the user's umask); missing parent folders are created.

    Parameters
    ----------
    path : str or Path
        Destination file.
    text : str
        Content, written as UTF-8.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; give it the mode a plain open() would (0666 & ~umask)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path, obj):
    """Atomically write ``obj`` as indented strict JSON.

    Parameters
    ----------
    path : str or Path
        Destination file.
    obj : object
        The value (converted by :func:`dumps`).

    References
    ----------
    docs/reliability.md#json
    """
    atomic_write_text(path, dumps(obj, indent=2) + "\n")
