"""Command-line helpers shared by ``python -m replica``, ``python -m hcizz`` and
``python -m validation``: one-line errors with exit status 2, JSON output."""
from __future__ import annotations

import argparse
import sys

__all__ = ["run_cli", "dispatch", "ArgumentParser"]


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser whose usage errors are one line on stderr, exit 2.

    Its constructor is ``argparse.ArgumentParser``'s (same arguments).

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """

    def error(self, message):
        """Print ``prog: error: message`` as one line on stderr and exit with status 2.

        Parameters
        ----------
        message : str
            The usage error.

        Raises
        ------
        SystemExit
            Always, with status 2.
        """
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def run_cli(main, argv=None, *, prog):
    """Run ``main(argv)`` and turn bad input into a one-line error with exit status 2.

    ``ValueError`` (bad input) and ``OSError`` (a path that cannot be read or
    written: missing folder, permission, not a directory) are printed as
    ``prog: error: message`` on stderr; Ctrl-C gives status 130.

    Parameters
    ----------
    main : callable
        ``main(argv) -> int``, the command.
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``, as read by ``main``).
    prog : str
        Program name printed in front of the error.

    Returns
    -------
    int
        The exit status: ``main``'s, 2 on an error, 130 on interruption.

    References
    ----------
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """
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

    Parameters
    ----------
    argv : list of str or None
        Command-line arguments (``None``: ``sys.argv[1:]``).
    prog : str
        Program name, e.g. ``"python -m replica"``.
    description : str
        Text of ``--help``.
    modules : iterable of str
        Import names of the modules that register subcommands.

    Returns
    -------
    int
        Exit status of the subcommand (0 when it returns ``None``).

    References
    ----------
    docs/api_replica.md#cli-python--m-replica-subcommand----json
    """
    import importlib

    parser = ArgumentParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in modules:
        importlib.import_module(name).register(sub)
    args = parser.parse_args(argv)
    return args.func(args) or 0
