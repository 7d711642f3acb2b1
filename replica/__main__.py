"""``python -m replica SUBCOMMAND ... [--json]``: the replica-theory quantities.

Subcommands come from the modules in :data:`CLI_MODULES`; each defines
``register(subparsers)`` which adds parsers (``parser_class`` of the subparsers
object) and sets ``func(args) -> int``.
"""
from __future__ import annotations

import sys

from hcizz.cli import package_main, run_cli

#: Modules that add subcommands (``register(subparsers)``).
CLI_MODULES = [
    "replica.theory_cli",
    "replica.rank_cli",
]


main = package_main("python -m replica", "Replica theory of linear associative memories.", CLI_MODULES,
                    reference="docs/api_replica.md#cli-python--m-replica-subcommand----json")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m replica"))
