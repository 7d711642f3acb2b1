"""``python -m validation``: the main job (``reproduce``) and experiment CLIs."""
from __future__ import annotations

import importlib
import sys

from hcizz._cli import ArgumentParser, run_cli

#: Modules that add subcommands; each has ``register(subparsers)`` which adds a
#: parser and sets its ``func(args) -> int``.
CLI_MODULES = [
    "validation.report_cli",
    "validation.factual_recall.cli",
    "validation.token_retrieval.cli",
    "validation.engine.cli",
    "validation.linear_memory.cli",
]


def main(argv=None):
    parser = ArgumentParser(prog="python -m validation",
                            description="Train associative memories in numpy and compare with theory.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in CLI_MODULES:
        importlib.import_module(name).register(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m validation"))
