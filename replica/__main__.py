"""``python -m replica SUBCOMMAND ... [--json]``: the replica-theory quantities.

Subcommands come from the modules in :data:`CLI_MODULES`; each defines
``register(subparsers)`` which adds parsers (``parser_class`` of the subparsers
object) and sets ``func(args) -> int``.
"""
from __future__ import annotations

import sys

from hcizz.cli import dispatch, run_cli

#: Modules that add subcommands (``register(subparsers)``).
CLI_MODULES = [
    "replica.theory_cli",
    "replica.rank_cli",
]


def main(argv=None):
    """Run ``python -m replica SUBCOMMAND ...``.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status of the subcommand.

    References
    ----------
    docs/api_replica.md#cli-python--m-replica-subcommand----json
    """
    return dispatch(argv, prog="python -m replica", description="Replica theory of linear associative memories.", modules=CLI_MODULES)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m replica"))
