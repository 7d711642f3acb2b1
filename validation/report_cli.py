"""``python -m validation reproduce``."""
from __future__ import annotations

from validation._docparams import fill_doc

from .report import SECTIONS, reproduce


@fill_doc
def register(sub):
    """Add the ``reproduce`` subcommand to ``python -m validation``.

    %(register_params)s

    References
    ----------
    docs/index.md#assocmem-documentation
    """
    p = sub.add_parser("reproduce", help="build report.md, report.json and figures")
    p.add_argument("--quick", action="store_true", help="small sizes (a few minutes on 2 cores)")
    p.add_argument("--out", default="report", help="output folder (default: ./report)")
    p.add_argument("--sections", default=None,
                   help="comma-separated subset of: " + ",".join(k for k, _ in SECTIONS))
    p.add_argument("--fresh", action="store_true",
                   help="recompute sections finished by an earlier, interrupted run")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes of the one pool every section's sweeps run on "
                        "(default 2)")
    p.add_argument("--executor", default="processes", choices=["processes", "dask", "inprocess"],
                   help="the pool: local processes (default), Dask, or in this process")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address, e.g. tcp://HOST:8786 (with --executor dask; "
                        "default: a LocalCluster of --workers processes)")
    p.set_defaults(func=_run)


def _run(args):
    from hcizz.cli import parse_list

    # an empty --sections is an error, not "all sections" (None: the option was not given)
    sections = None if args.sections is None else parse_list(
        args.sections, "--sections", item=str, choices=[k for k, _ in SECTIONS])
    reproduce(args.out, quick=args.quick, sections=sections, fresh=args.fresh, seed=args.seed,
              executor=args.executor, workers=args.workers, scheduler=args.scheduler)
    return 0
