"""Atomic file output and JSON conversion used by reports and CLIs."""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["to_jsonable", "atomic_write_text", "atomic_write_json", "dumps"]


def to_jsonable(obj):
    """Recursively convert numpy scalars/arrays, dataclass-like results, paths
    and non-finite floats into plain JSON values (NaN/inf become ``None``)."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


def dumps(obj, **kw):
    """``json.dumps`` after :func:`to_jsonable` (strict JSON, no NaN)."""
    return json.dumps(to_jsonable(obj), allow_nan=False, **kw)


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
    """Write ``text`` to ``path`` atomically (temp file in the same folder,
    fsync, ``os.replace``): readers see the old file or the new one, never a
    partial one.  The file gets the permissions of a plain ``open(path, "w")``
    (``0o666`` less the user's umask)."""
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
    """Atomically write ``obj`` as indented strict JSON."""
    atomic_write_text(path, dumps(obj, indent=2) + "\n")
