"""``python -m validation study NAME``: run, resume or replay one study; ``--list`` lists them.

The command only parses: every option is checked by the study
(:meth:`validation.studies.base.Study.check_options`) and the store path by
:meth:`~validation.studies.base.Study.run`, before any trial runs or any file
is written; a bad argument is one line on stderr and exit status 2.
"""
from __future__ import annotations

import json
import sys

__all__ = ["register"]


def register(sub):
    """Add the ``study`` and ``migrate-store`` subcommands.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of ``python -m validation``.

    References
    ----------
    docs/architecture.md#where-to-add
    """
    p = sub.add_parser("study", help="run, resume or replay one study (--list lists them)",
                       description="Run (resume) a study on a store in your folder, seeded from the "
                                   "committed runs, or replay the committed runs (--replay).",
                       add_help=False)
    p.add_argument("name", nargs="?", help="the study (see --list)")
    p.add_argument("--list", action="store_true", help="list the studies and exit")
    p.add_argument("-h", "--help", action="store_true", help="show this help (with NAME: the study's options)")
    p.add_argument("--store", help="store to run on (default ./NAME.jsonl; with --replay: the committed one)")
    p.add_argument("--workers", default="2", help="worker processes (default 2)")
    p.add_argument("--executor", default="processes", choices=["processes", "inprocess", "dask"])
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (--executor dask)")
    p.add_argument("--replay", action="store_true", help="read the store only, compute nothing")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=_run, _parser=p)
    m = sub.add_parser("migrate-store", help="rewrite trial stores of an older format as format 2")
    m.add_argument("paths", nargs="+", help="store files")
    m.set_defaults(func=_migrate)


def _study_parser(study, prog):
    from hcizz.cli import ArgumentParser

    ap = ArgumentParser(prog=f"{prog} {study.name}", description=study.title, add_help=False)
    for o in study.options:
        if o.kind is bool:
            ap.add_argument(o.flag, dest=o.name, action="store_true", default=None, help=o.help)
            ap.add_argument(f"--no-{o.flag[2:]}", dest=o.name, action="store_false", help=f"not {o.flag}")
        else:
            d = ",".join(map(str, o.default)) if o.many and o.default is not None else o.default
            ap.add_argument(o.flag, dest=o.name, default=None, help=f"{o.help} (default {d})")
    return ap


def _run(args):
    from validation.studies import all_studies, get_study

    prog = "python -m validation study"
    if args.list:
        for s in all_studies().values():
            print(f"{s.name:40s} {s.title}")
        return 0
    if args.name is None:
        if args.help:
            args._parser.print_help()
            return 0
        raise ValueError("name must be a study name (python -m validation study --list), got none")
    study = get_study(args.name)
    ap = _study_parser(study, prog)
    if args.help:
        args._parser.print_help()
        print(f"\noptions of {study.name}:")
        ap.print_help()
        return 0
    extra = ap.parse_args(args._rest)
    opts = {k: v for k, v in vars(extra).items() if v is not None}
    from hcizz.checks import check_int

    # every argument is checked before a pool, a store or a trial exists
    workers = check_int("--workers", int(args.workers) if args.workers.lstrip("-").isdigit()
                        else args.workers, low=1, high=1024)
    study.check_options(**opts)
    executor = args.executor
    if executor == "dask" or args.scheduler is not None:
        from validation.engine import WorkerPool

        executor = WorkerPool(args.executor, workers=workers, scheduler=args.scheduler)
    try:
        res = study.run(compute=not args.replay, store=args.store, executor=executor, workers=workers,
                        **opts)
    finally:
        close = getattr(executor, "close", None)
        if close is not None:
            close()
    if args.json:
        from hcizz.jsonout import to_json_value

        out = res.to_dict()
        out.pop("results", None)
        print(json.dumps(to_json_value(out), allow_nan=False))
    else:
        print(res.summary())
    return 0


def _migrate(args):
    from validation.engine import migrate_store
    from validation.studies import all_studies

    all_studies()                # registers every trial (and so every alias)
    for path in args.paths:
        r = migrate_store(path)
        state = (f"format {r['from_version']} -> 2: {r['records']} records, {r['renamed']} renamed"
                 if r["changed"] else "already format 2, unchanged")
        if r["unresolved"]:
            state += f"; unregistered trial names kept: {', '.join(r['unresolved'])}"
        print(f"{path}: {state}", file=sys.stderr)
    return 0
