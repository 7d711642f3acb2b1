"""Append-only JSONL store of trial records.

File format
-----------
One JSON object per line (UTF-8, ``\\n``-terminated), one line per finished
trial attempt::

    {"key": "...", "fn": "pkg.mod:func", "params": {...}, "status": "ok",
     "result": {...}, "seconds": 0.21, "finished": "2026-01-01T12:00:00Z"}
    {"key": "...", "fn": "...", "params": {...}, "status": "error",
     "error": {"type": "ValueError", "message": "...", "traceback": "..."}, ...}

The file is only ever appended to, and only by the process that runs the
sweep (workers return their results to it).

Crash safety
------------
Each record is written with a single ``os.write`` of the complete line on a
descriptor opened with ``O_APPEND`` and followed by ``os.fsync``. A process
killed at any moment (SIGKILL included) therefore leaves every earlier record
complete and durable; at worst the line being written is cut short (the
kernel may stop a multi-page write when a fatal signal arrives, and a power
loss can tear an un-synced tail). The reader below tolerates that:

* a damaged line (not a JSON trial record) is skipped, **reported** as a
  warning on stderr and listed in :attr:`StoreScan.damaged` with its line
  number; it is never dropped silently, wherever it is in the file;
* before appending, :class:`TrialStore` terminates an unterminated last line
  with ``\\n`` so that the next record starts on a fresh line. A cut-short
  line thus stays in the file (as evidence) and keeps being reported as
  damaged by later reads; its trial was never recorded and is simply rerun.

One sweep should write to a store at a time. On a local filesystem two
concurrent writers do not interleave bytes within a line (``O_APPEND``
writes are atomic with respect to each other there), but they may compute the
same trial twice; on NFS ``O_APPEND`` is not atomic at all.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

__all__ = ["StoreScan", "DamagedLine", "read_store", "TrialStore"]

_REQUIRED = ("key", "fn", "params", "status")


@dataclasses.dataclass(frozen=True)
class DamagedLine:
    """A line of the store that is not a complete trial record."""

    lineno: int       #: 1-based line number
    offset: int       #: byte offset of the line's start
    reason: str       #: why it was rejected
    text: str         #: the first 80 characters of the line
    trailing: bool    #: True for the file's last line (a cut-short write)


@dataclasses.dataclass
class StoreScan:
    """What :func:`read_store` found in a store file.

    Attributes
    ----------
    path : str
    records : list of dict
        Every complete record, in file order.
    ok : dict
        ``key -> record``: the last record with status ``"ok"`` of each key.
    failed : dict
        ``key -> record``: the last error record of each key that has no ok
        record (these trials are retried by the next sweep).
    damaged : list of DamagedLine
        Lines that were skipped (reported, never dropped silently).
    n_lines : int
        Number of lines in the file, damaged ones included.
    unterminated : bool
        The file ends without ``\\n`` (its last line, complete or not, is
        followed by a ``\\n`` before the next append).
    """

    path: str
    records: list = dataclasses.field(default_factory=list)
    ok: dict = dataclasses.field(default_factory=dict)
    failed: dict = dataclasses.field(default_factory=dict)
    damaged: list = dataclasses.field(default_factory=list)
    n_lines: int = 0
    unterminated: bool = False

    @property
    def n_ok_lines(self):
        return sum(r["status"] == "ok" for r in self.records)

    @property
    def n_error_lines(self):
        return sum(r["status"] != "ok" for r in self.records)

    def summary(self):
        """One line: counts of lines, ok/failed keys and damaged lines."""
        txt = (f"{self.path}: {self.n_lines} lines, {len(self.ok)} trials ok, "
               f"{len(self.failed)} failed (no ok record), {len(self.damaged)} damaged line(s)")
        return txt

    def damage_report(self):
        """Human-readable lines describing each damaged line ('' if none)."""
        out = []
        for d in self.damaged:
            where = "last line" if d.trailing else "line"
            out.append(f"{self.path}: {where} {d.lineno} (byte {d.offset}) skipped: {d.reason}: {d.text!r}")
        return "\n".join(out)


def _check_record(obj):
    if not isinstance(obj, dict):
        return "not a JSON object"
    missing = [k for k in _REQUIRED if k not in obj]
    if missing:
        return f"not a trial record (missing {', '.join(missing)})"
    if obj["status"] not in ("ok", "error"):
        return f"unknown status {obj['status']!r}"
    if obj["status"] == "ok" and "result" not in obj:
        return "ok record without result"
    return None


def read_store(path, *, warn=True):
    """Read a JSONL store, skipping and reporting damaged lines.

    Parameters
    ----------
    path : str or Path
        Store file. A missing file reads as an empty store.
    warn : bool
        Print one warning line per damaged line on stderr.

    Returns
    -------
    StoreScan

    Raises
    ------
    ValueError
        ``path`` is not a str/Path or names a directory.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.jsonl")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('{"key": "k", "fn": null, "params": {}, "status": "ok", "result": {}}\\n')
    ...     _ = fh.write('{"key": "tru')
    >>> scan = read_store(path, warn=False)
    >>> len(scan.ok), [(d.lineno, d.trailing) for d in scan.damaged]
    (1, [(2, True)])
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a str or Path of a store file, got {path!r:.80}")
    if os.path.isdir(path):
        raise ValueError(f"path must be a store file, got the directory {str(path)!r}")
    path = Path(path)
    scan = StoreScan(path=str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return scan
    scan.unterminated = bool(data) and not data.endswith(b"\n")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    offset = 0
    for i, raw in enumerate(lines):
        lineno = i + 1
        trailing = i == len(lines) - 1
        reason = None
        if not raw.strip():
            reason = "empty line"
        else:
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                reason = "invalid UTF-8"
            except ValueError as exc:
                reason = f"invalid JSON ({exc.msg} at char {exc.pos})"
                if trailing and scan.unterminated:
                    reason = "truncated record (interrupted write): " + reason
            else:
                reason = _check_record(obj)
        if reason is None:
            scan.records.append(obj)
            if obj["status"] == "ok":
                scan.ok[obj["key"]] = obj
                scan.failed.pop(obj["key"], None)
            elif obj["key"] not in scan.ok:
                scan.failed[obj["key"]] = obj
        else:
            text = raw[:80].decode("utf-8", errors="replace")
            scan.damaged.append(DamagedLine(lineno, offset, reason, text, trailing))
        offset += len(raw) + 1
    scan.n_lines = len(lines)
    if warn and scan.damaged:
        print("warning: " + scan.damage_report().replace("\n", "\nwarning: "), file=sys.stderr)
    return scan


class TrialStore:
    """Appender for a JSONL store (see the module notes for guarantees).

    Use as a context manager; :meth:`append_line` writes one record as one line
    with one ``os.write`` + ``os.fsync``.
    """

    def __init__(self, path):
        self.path = Path(path)
        self._fd = None

    def open(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as fh:
                    fh.seek(size - 1)
                    last = fh.read(1)
                if last != b"\n":  # seal a cut-short (or unterminated) last line
                    self._write_all(fd, b"\n")
                    os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    @staticmethod
    def _write_all(fd, data):
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]

    def append_line(self, line):
        """Append one already-serialised record (``line`` without ``\\n``)."""
        if self._fd is None:
            raise RuntimeError("store is not open")
        if "\n" in line:
            raise ValueError("a store line must not contain a newline")
        self._write_all(self._fd, (line + "\n").encode("utf-8"))
        os.fsync(self._fd)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
