"""Append-only JSONL store of trial records.

File format
-----------
One JSON object per line (UTF-8, ``\\n``-terminated), one line per finished
trial attempt::

    {"key": "...", "fn": "pkg.mod:func", "params": {...}, "status": "ok",
     "result": {...}, "seconds": 0.21, "finished": "2026-01-01T12:00:00Z"}
    {"key": "...", "fn": "...", "params": {...}, "status": "error",
     "error": {"type": "ValueError", "message": "...", "traceback": "..."}, ...}

The first line of a store is its **header**, written when the store is
created::

    {"format": "assocmem-trial-store", "version": 2, "created": "2026-..."}

so that a store is recognisable as one. The file is only ever appended to,
and only by the process that runs the sweep (workers return their results to
it). Records are strict JSON under the project's one policy
(:mod:`hcizz.jsonout`, ``docs/reliability.md#json``): a non-finite float of
a result is written as the string ``"nan"``, ``"inf"`` or ``"-inf"`` and read
back as the float by :func:`read_store`.

Not a store
-----------
Before reading or appending, the first line is checked. A file that is not
empty and whose first line is neither a store header nor a complete trial
record (a README, ``/etc/passwd``, a binary) is refused with
:class:`NotAStoreError` (a ``ValueError``: one line, exit status 2 in the
CLIs), and nothing is written to it. A header with a newer ``version`` than
this code knows is refused the same way.

*Versions.* Version 2 keys a record by its trial's stable name and its
parameters with floats rounded to 12 significant digits
(:mod:`validation.engine.keys`). Version 1 keyed the exact floats under the
trial function's ``module:qualname``; stores written before the header
existed (version 0) start directly with a trial record. Both are read with
their keys *recomputed* the version-2 way, the ``fn`` of each record mapped to
its trial's stable name through the registered aliases
(:func:`validation.engine.trials.resolve_name`), so a sweep finds the trials
an older version stored; appending to them keeps their header (a header
cannot be changed in an append-only file, and recomputing is idempotent).
:func:`migrate_store` rewrites such a store once, atomically, as version 2.
An empty file is an empty store; the header is written by the first
:meth:`TrialStore.open`.

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

One writer at a time
--------------------
:meth:`TrialStore.open` takes an exclusive ``fcntl.flock`` lock on the store
file for as long as it is open. A second writer (another sweep on the same
``--store``) is refused at once with :class:`StoreLockedError` (a
``ValueError``) instead of computing the same trials twice. The kernel drops
the lock when the holder's file descriptor is closed, which includes the
process dying by SIGKILL, so a killed sweep never leaves a stale lock behind
(no lock file to clean up). Readers (:func:`read_store`, ``sweep-status``)
take no lock: records are complete lines, so a reader sees a consistent
prefix. Where ``fcntl`` is missing (Windows) no lock is taken.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from hcizz.results import Result
from validation._docparams import fill_doc, returned_by

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["StoreScan", "DamagedLine", "read_store", "TrialStore", "NotAStoreError",
           "StoreLockedError", "STORE_FORMAT", "STORE_VERSION", "decode_record", "migrate_store"]

_REQUIRED = ("key", "fn", "params", "status")

#: ``format`` field of the header record.
STORE_FORMAT = "assocmem-trial-store"
#: Newest store format version this code reads and writes.
STORE_VERSION = 2
#: The first line of a store (header or legacy record) is read at most this long.
_MAX_FIRST_LINE = 1 << 20
#: At most this many damaged lines are described in warnings.
_MAX_REPORTED = 20


@fill_doc
class NotAStoreError(ValueError):
    """The file exists, is not empty and is not a trial store.

    See Also
    --------
    validation.engine.store.read_store : Raises it.

    %(ref_stores)s
    """


@fill_doc
class StoreLockedError(ValueError):
    """Another process is writing the store.

    See Also
    --------
    validation.engine.store.TrialStore : Raises it.

    %(ref_stores)s
    """


def decode_record(rec):
    """Return a store record with its result's non-finite strings turned back into floats.

    The strings ``"nan"``/``"inf"``/``"-inf"`` of ``rec["result"]`` become
    floats (:func:`hcizz.jsonout.from_json_value`); other fields are unchanged.

    Parameters
    ----------
    rec : dict
        A record as parsed from a store line.

    Returns
    -------
    dict
        A shallow copy with the decoded result (``rec`` itself if it has no
        dict result).

    See Also
    --------
    validation.engine.store.read_store : Reads the records.

    References
    ----------
    docs/reliability.md#json
    """
    if isinstance(rec, dict) and isinstance(rec.get("result"), dict):
        from hcizz.jsonout import from_json_value

        rec = dict(rec)
        rec["result"] = from_json_value(rec["result"])
    return rec


def _is_header(obj):
    return isinstance(obj, dict) and obj.get("format") == STORE_FORMAT


def _header_problem(obj):
    v = obj.get("version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        return f"its header has an invalid version {v!r}"
    if v > STORE_VERSION:
        return (f"its format version {v} is newer than this code reads ({STORE_VERSION}); "
                "upgrade the package")
    return None


def _classify_first_line(path, fh):
    """Read the first line of an open binary file; return ``(kind, header)``
    with ``kind`` in {"empty", "header", "legacy"}; raise NotAStoreError."""
    first = fh.readline(_MAX_FIRST_LINE)
    if not first:
        return "empty", None
    why = None
    if not first.endswith(b"\n") and len(first) >= _MAX_FIRST_LINE:
        why = f"its first line is longer than {_MAX_FIRST_LINE} bytes"
    else:
        try:
            obj = json.loads(first.decode("utf-8"))
        except UnicodeDecodeError:
            why = "its first line is not UTF-8 text (a binary file?)"
        except ValueError:
            why = "its first line is not JSON"
        else:
            if _is_header(obj):
                problem = _header_problem(obj)
                if problem is None:
                    return "header", obj
                why = problem
            elif _check_record(obj) is None:
                return "legacy", None
            else:
                why = "its first line is neither a store header nor a trial record"
    raise NotAStoreError(f"{str(path)!r} is not a trial store ({why}); refusing to read or "
                         "write it: pass a new file or an existing store")


def check_store_file(path):
    """Raise :class:`NotAStoreError` unless ``path`` is missing, empty or a
    trial store (header or legacy first record). Reads one line at most.

    A path that exists but is not a regular file (a directory, a FIFO, a
    device such as ``/dev/stdout``, a socket) is refused before it is opened:
    opening a FIFO blocks until a writer appears, and appending to a device
    is not a store."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing", None
    if not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
        raise NotAStoreError(f"{str(path)!r} is not a trial store ({kind}); pass a regular file")
    try:
        with open(path, "rb") as fh:
            return _classify_first_line(path, fh)
    except FileNotFoundError:
        return "missing", None


@fill_doc
@dataclasses.dataclass(frozen=True)
class DamagedLine(Result):
    """A line of the store that is not a complete trial record.

    Parameters
    ----------
    lineno : int
        1-based line number.
    offset : int
        Byte offset of the line's start.
    reason : str
        Why it was rejected.
    text : str
        The first 80 characters of the line.
    trailing : bool
        True for the file's last line (a cut-short write).

    See Also
    --------
    validation.engine.store.read_store : Reports these lines.

    %(ref_stores)s
    """

    lineno: int       #: 1-based line number
    offset: int       #: byte offset of the line's start
    reason: str       #: why it was rejected
    text: str         #: the first 80 characters of the line
    trailing: bool    #: True for the file's last line (a cut-short write)


@fill_doc(record_links=returned_by(
    "validation.engine.store.read_store",
    "docs/reliability.md#stores; docs/sweeps.md#resuming"))
@dataclasses.dataclass
class StoreScan(Result):
    """What :func:`read_store` found in a store file.

    Parameters
    ----------
    path : str
        The store file.
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
        Number of lines in the file, header and damaged ones included.
    unterminated : bool
        The file ends without ``\\n`` (its last line, complete or not, is
        followed by a ``\\n`` before the next append).
    header : dict or None
        The header record (None for an empty or a legacy headerless store).
    version : int
        Format version of the file (0: headerless); records of versions
        below 2 are returned with recomputed keys and resolved ``fn`` names.

    %(record_links)s
    """

    path: str
    records: list = dataclasses.field(default_factory=list)
    ok: dict = dataclasses.field(default_factory=dict)
    failed: dict = dataclasses.field(default_factory=dict)
    damaged: list = dataclasses.field(default_factory=list)
    n_lines: int = 0
    unterminated: bool = False
    header: dict | None = None
    version: int = STORE_VERSION

    @property
    def n_ok_lines(self):
        """Number of complete records with status ``"ok"`` (repeats included)."""
        return sum(r["status"] == "ok" for r in self.records)

    @property
    def n_error_lines(self):
        """Number of complete records with status ``"error"`` (repeats included)."""
        return sum(r["status"] != "ok" for r in self.records)

    def summary(self):
        """Return one line with the counts of lines, ok/failed keys and damaged lines.

        Returns
        -------
        str
            The summary line.
        """
        txt = (f"{self.path}: {self.n_lines} lines, {len(self.ok)} trials ok, "
               f"{len(self.failed)} failed (no ok record), {len(self.damaged)} damaged line(s)")
        return txt

    def damage_report(self, limit=None):
        """Describe each damaged line in human-readable text ('' if none).

        Parameters
        ----------
        limit : int, optional
            Describe only the first ``limit`` damaged lines and count the rest.

        Returns
        -------
        str
            One line per damaged line, joined by newlines.
        """
        out = []
        shown = self.damaged if limit is None else self.damaged[:limit]
        for d in shown:
            where = "last line" if d.trailing else "line"
            out.append(f"{self.path}: {where} {d.lineno} (byte {d.offset}) skipped: {d.reason}: {d.text!r}")
        if len(shown) < len(self.damaged):
            out.append(f"{self.path}: ... and {len(self.damaged) - len(shown)} more damaged "
                       "line(s) (python -m validation sweep-status --json lists them all)")
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


def _upgrade(rec):
    """A version-0/1 record with its ``fn`` resolved and its key recomputed (version 2)."""
    from .keys import key_of, normalize_params
    from .trials import resolve_name

    rec = dict(rec)
    rec["fn"] = resolve_name(rec["fn"])
    try:
        rec["key"] = key_of(rec["fn"], normalize_params(rec["params"]))
    except ValueError:          # params that are not plain JSON: keep the stored key
        pass
    return rec


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
        Records, the ok and failed trials by key, and the damaged lines.

    Raises
    ------
    ValueError
        ``path`` is not a str/Path or names a directory.
    NotAStoreError
        The file is not empty and is not a trial store (see the module notes);
        at most its first line was read.

    See Also
    --------
    validation.engine.store.StoreScan : What it returns.
    validation.engine.store.TrialStore : Appends to a store.

    References
    ----------
    docs/reliability.md#stores; docs/sweeps.md#resuming

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
    kind, scan.header = check_store_file(path)
    if kind == "missing":
        return scan
    scan.version = 0 if scan.header is None else int(scan.header["version"])
    if kind == "empty":
        scan.version = STORE_VERSION
    rekey = scan.version < 2
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
        if i == 0 and scan.header is not None:  # the header record
            offset += len(raw) + 1
            continue
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
            obj = decode_record(obj)
            if rekey:
                obj = _upgrade(obj)
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
        print("warning: " + scan.damage_report(_MAX_REPORTED).replace("\n", "\nwarning: "),
              file=sys.stderr)
    return scan


@fill_doc
class TrialStore:
    """Appender for a JSONL store (see the module notes for guarantees).

    Use as a context manager; :meth:`append_line` writes one record as one line
    with one ``os.write`` + ``os.fsync``. ``open()`` refuses a file that is
    not a store (:class:`~validation.engine.store.NotAStoreError`, nothing written), takes the
    exclusive writer lock (:class:`~validation.engine.store.StoreLockedError` if another process holds
    it) and writes the header record into a new or empty store.

    Parameters
    ----------
    path : str or Path
        The store file (created with its folder by ``open()``).

    See Also
    --------
    validation.engine.store.read_store : Reads a store back.

    %(ref_stores)s
    """

    def __init__(self, path):
        self.path = Path(path)
        self._fd = None

    def open(self):
        """Open the store for appending, take its lock and write the header if it is new.

        Returns
        -------
        TrialStore
            ``self``.

        Raises
        ------
        NotAStoreError
            If the file is not empty and not a store (nothing is written).
        StoreLockedError
            If another process holds the store's lock.
        """
        check_store_file(self.path)  # before creating or touching anything
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    raise StoreLockedError(
                        f"store {str(self.path)!r} is being written by another process (it holds "
                        "the store's lock); wait for that sweep to finish or use another store"
                    ) from None
            # re-check under the lock (the file may have changed since)
            with open(self.path, "rb") as fh:
                _classify_first_line(self.path, fh)
            size = os.fstat(fd).st_size
            if size:
                with open(self.path, "rb") as fh:
                    fh.seek(size - 1)
                    last = fh.read(1)
                if last != b"\n":  # seal a cut-short (or unterminated) last line
                    self._write_all(fd, b"\n")
                    os.fsync(fd)
            else:
                head = {"format": STORE_FORMAT, "version": STORE_VERSION,
                        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
                self._write_all(fd, (json.dumps(head, sort_keys=True) + "\n").encode("utf-8"))
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
        """Append one already-serialised record (``line`` without ``\\n``).

        Parameters
        ----------
        line : str
            One record as JSON text, without a newline.
        """
        if self._fd is None:
            raise RuntimeError("store is not open")
        if "\n" in line:
            raise ValueError("a store line must not contain a newline")
        self._write_all(self._fd, (line + "\n").encode("utf-8"))
        os.fsync(self._fd)

    def close(self):
        """Release the lock and close the file (no-op if not open)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()


@fill_doc
def migrate_store(path):
    """Rewrite a store of format version 0 or 1 as version 2, atomically.

    Every record's ``fn`` becomes its trial's stable name (an alias registered
    with :func:`validation.engine.trial`; an unregistered name is kept) and its
    ``key`` is recomputed (:mod:`validation.engine.keys`); parameters, results,
    timings and damaged lines are kept as parsed (a bare ``NaN`` of a
    version-0 record written as the string ``"nan"`` of the JSON policy), the header
    becomes version 2 (``created`` kept, ``migrated_from`` added).

    Parameters
    ----------
    path : str or Path
        An existing store file, rewritten in place.

    Returns
    -------
    dict
        ``path``, ``from_version``, ``records``, ``renamed`` (records whose
        ``fn`` changed), ``unresolved`` (sorted ``fn`` names with no
        registered trial), ``damaged`` (lines kept as they were) and
        ``changed`` (False for a store already at version 2, left untouched).

    Raises
    ------
    ValueError
        ``path`` missing or a directory.
    NotAStoreError
        The file is not a store.
    StoreLockedError
        Another process is writing it.

    See Also
    --------
    validation.engine.trials.resolve_name : The current name of a record's trial.

    Notes
    -----
    The new text is written to a temporary file in the same folder, synced
    and renamed over the store while the writer lock is held, so a reader
    sees the old or the new file, never a mixture, and a crash leaves the old
    store in place.  The trials of the trial modules that are imported when
    this runs are renamed; import them first (``python -m validation
    migrate-store`` imports every study).

    %(ref_records)s
    """
    from hcizz.jsonout import to_json_value

    from .keys import key_of, normalize_params
    from .trials import registered_trials, resolve_name

    if not isinstance(path, (str, os.PathLike)) or os.path.isdir(path) or not os.path.exists(path):
        raise ValueError(f"path must be an existing store file, got {str(path)!r:.80}")
    path = Path(path)
    kind, header = check_store_file(path)
    version = 0 if header is None else int(header["version"])
    if kind == "empty":
        version = STORE_VERSION
    known = set(registered_trials())
    out = {"path": str(path), "from_version": version, "records": 0, "renamed": 0,
           "unresolved": [], "damaged": 0, "changed": False}
    if version >= 2:
        return out
    fd = os.open(path, os.O_RDONLY)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise StoreLockedError(f"store {str(path)!r} is being written by another process; "
                                       "migrate it when that sweep has finished") from None
        data = path.read_bytes()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        head = {"format": STORE_FORMAT, "version": STORE_VERSION,
                "created": (header or {}).get("created")
                or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "migrated_from": version}
        new = [json.dumps(head, sort_keys=True).encode("utf-8")]
        unresolved = set()
        for i, raw in enumerate(lines):
            if i == 0 and header is not None:
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except ValueError:
                obj = None
            if obj is None or _check_record(obj) is not None:
                new.append(raw)              # damaged: kept as evidence, still skipped by readers
                out["damaged"] += 1
                continue
            name = resolve_name(obj["fn"])
            out["renamed"] += name != obj["fn"]
            if name not in known and name is not None:
                unresolved.add(name)
            obj["fn"] = name
            try:
                obj["key"] = key_of(name, normalize_params(obj["params"]))
            except ValueError:
                pass
            out["records"] += 1
            # a bare NaN/Infinity of a version-0 line is written as the policy's string
            new.append(json.dumps(to_json_value(obj), ensure_ascii=False, allow_nan=False).encode("utf-8"))
        tmp = path.with_name(f".{path.name}.migrate.tmp")
        with open(tmp, "wb") as fh:
            fh.write(b"\n".join(new) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    finally:
        os.close(fd)
    out["unresolved"] = sorted(unresolved)
    out["changed"] = True
    return out
