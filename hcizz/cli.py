"""Command-line helpers shared by ``python -m replica``, ``python -m hcizz`` and
``python -m validation``: one-line errors with exit status 2, JSON output."""
from __future__ import annotations

import argparse
import sys

__all__ = ["run_cli", "dispatch", "ArgumentParser"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse parser whose usage errors are one line on stderr, exit 2."""

    def error(self, message):
        """Print ``prog: error: message`` as one line on stderr and exit with status 2."""
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def run_cli(main, argv=None, *, prog):
    """Run ``main(argv)``; turn ``ValueError`` (bad input) and ``OSError``
    (a path that cannot be read or written: missing folder, permission,
    not a directory) into a one-line error, exit 2."""
    try:
        return main(argv)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def dispatch(argv, *, prog, description, modules):
    """Parse ``argv`` with one subcommand per registered module and run it.

    Each module in ``modules`` (import names) defines ``register(subparsers)``,
    which adds its parser(s) and sets ``func(args) -> int``.  Used by the
    ``__main__`` of every package so that all CLIs behave alike.
    """
    import importlib

    parser = ArgumentParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in modules:
        importlib.import_module(name).register(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0
