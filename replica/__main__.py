"""``python -m replica SUBCOMMAND ... [--json]``: the replica-theory quantities.

Subcommands come from the modules in :data:`CLI_MODULES`; each defines
``register(subparsers)`` which adds parsers (``parser_class`` of the subparsers
object) and sets ``func(args) -> int``.
"""
from __future__ import annotations

import importlib
import sys

from hcizz._cli import ArgumentParser, run_cli

#: Modules that add subcommands (``register(subparsers)``).
CLI_MODULES = [
    "replica.theory_cli",
    "replica.rank_cli",
]


def main(argv=None):
    parser = ArgumentParser(prog="python -m replica",
                            description="Replica theory of linear associative memories.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in CLI_MODULES:
        importlib.import_module(name).register(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m replica"))
