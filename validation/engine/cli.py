"""``python -m validation sweep-status --store PATH``: what a store holds."""
from __future__ import annotations

import collections
import json
from pathlib import Path

from validation._docparams import fill_doc

from .store import read_store


@fill_doc
def register(sub):
    """Add the ``sweep-status`` subcommand to ``python -m validation``.

    %(register_params)s

    References
    ----------
    docs/sweeps.md#resuming
    """
    p = sub.add_parser("sweep-status",
                       help="count ok / failed trials and damaged lines in a sweep store")
    p.add_argument("--store", required=True, help="JSONL store written by run_sweep")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(func=_run)


def status(path):
    """Count what a store holds, overall and per trial function.

    Parameters
    ----------
    path : str or Path
        An existing store file.

    Returns
    -------
    dict
        JSON-able counts: lines, ok/error/damaged lines, ok and failed trials,
        counts per trial function, the damaged lines and the failures.

    Raises
    ------
    ValueError
        If ``path`` is not an existing file or not a store.

    References
    ----------
    docs/sweeps.md#resuming; docs/reliability.md#stores
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"--store must be an existing store file, got {str(path)!r}")
    scan = read_store(path, warn=False)  # NotAStoreError (a ValueError) for a non-store
    per_fn = collections.defaultdict(lambda: {"ok": 0, "failed": 0})
    for rec in scan.ok.values():
        per_fn[rec["fn"]]["ok"] += 1
    for rec in scan.failed.values():
        per_fn[rec["fn"]]["failed"] += 1
    return {
        "store": str(path),
        "lines": scan.n_lines,
        "header": scan.header,
        "ok_lines": scan.n_ok_lines,
        "error_lines": scan.n_error_lines,
        "damaged_lines": len(scan.damaged),
        "trials_ok": len(scan.ok),
        "trials_failed": len(scan.failed),
        "by_fn": dict(sorted(per_fn.items())),
        "damaged": [{"line": d.lineno, "byte": d.offset, "reason": d.reason,
                     "trailing": d.trailing, "text": d.text} for d in scan.damaged],
        "failures": [{"key": r["key"], "fn": r["fn"], "params": r["params"],
                      "type": r["error"].get("type"), "message": r["error"].get("message")}
                     for r in scan.failed.values()],
    }


def _run(args):
    st = status(args.store)
    if args.json:
        print(json.dumps(st, indent=2, ensure_ascii=False))
        return 0
    head = "1 header, " if st["header"] else ""
    print(f"{st['store']}: {st['lines']} lines ({head}{st['ok_lines']} ok, {st['error_lines']} error, "
          f"{st['damaged_lines']} damaged)")
    print(f"trials: {st['trials_ok']} ok, {st['trials_failed']} failed "
          "(no ok record; retried by the next run)")
    for fn, c in st["by_fn"].items():
        print(f"  {fn}: {c['ok']} ok, {c['failed']} failed")
    for d in st["damaged"][:20]:
        where = "last line" if d["trailing"] else "line"
        print(f"damaged {where} {d['line']} (byte {d['byte']}): {d['reason']}: {d['text']!r}")
    if len(st["damaged"]) > 20:
        print(f"... and {len(st['damaged']) - 20} more damaged lines (use --json)")
    for f in st["failures"][:20]:
        print(f"failed {f['fn']} {json.dumps(f['params'])}: {f['type']}: {f['message']}")
    if len(st["failures"]) > 20:
        print(f"... and {len(st['failures']) - 20} more failures (use --json)")
    return 0
