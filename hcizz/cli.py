"""Command-line helpers shared by ``python -m replica``, ``python -m hcizz`` and
``python -m validation``: one-line errors with exit status 2, JSON output."""
from __future__ import annotations

import argparse
import sys

from ._docparams import fill_doc

__all__ = ["run_cli", "dispatch", "package_main", "ArgumentParser", "parse_list", "check_output_file", "check_output_dir"]


@fill_doc
class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse`` parser whose usage errors are one line on stderr, exit 2.

    Its constructor is ``argparse.ArgumentParser``'s (same arguments).

    See Also
    --------
    hcizz.cli.dispatch : Builds the parsers of the package CLIs.
    hcizz.cli.run_cli : Turns bad input into a one-line error.

    %(refs_bad_input)s

    Examples
    --------
    >>> parser = ArgumentParser(prog="demo")
    >>> _ = parser.add_argument("--n", type=int)
    >>> print(parser.parse_args(["--n", "3"]).n)
    3
    >>> try:                                    # stderr: demo: error: argument --n: ...
    ...     parser.parse_args(["--n", "x"])
    ... except SystemExit as err:
    ...     print(err.code)
    2
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


@fill_doc
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

    See Also
    --------
    hcizz.cli.dispatch : The ``main`` of the package CLIs.
    hcizz.cli.ArgumentParser : One-line usage errors.

    %(refs_bad_input)s

    Examples
    --------
    >>> def main(argv):
    ...     raise ValueError("p must be >= 2, got 1")
    >>> print(run_cli(main, [], prog="demo"))      # stderr: demo: error: p must be >= 2, got 1
    2
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


@fill_doc
def dispatch(argv, *, prog, description, modules):
    """Parse ``argv`` with one subcommand per registered module and run it.

    Each module in ``modules`` (import names) defines ``register(subparsers)``,
    which adds its parser(s) and sets ``func(args) -> int``.  Used by the
    ``__main__`` of every package so that all CLIs behave alike.  A subcommand
    whose options depend on a positional argument (``study NAME``) sets the
    default ``_parser`` and parses ``args._rest`` itself; for every other
    subcommand an unknown argument is a usage error.

    Parameters
    ----------
    argv : list of str or None
        Command-line arguments (``None``: ``sys.argv[1:]``).
    %(prog)s
    %(cli_description)s
    modules : iterable of str
        Import names of the modules that register subcommands.

    Returns
    -------
    int
        Exit status of the subcommand (0 when it returns ``None``).

    See Also
    --------
    hcizz.cli.run_cli : Runs it with one-line errors.
    replica.theory_cli.register : A module's ``register``.

    %(refs_replica_cli_json)s

    Examples
    --------
    >>> print(dispatch(["gaussian-max", "2"], prog="python -m replica", description="demo",  # doctest: +ELLIPSIS
    ...                modules=["replica.theory_cli"]))
    n=2  E[M_n]=0.56418958354775...  E[M_n^2]=1
    0
    """
    import importlib

    parser = ArgumentParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    for name in modules:
        importlib.import_module(name).register(sub)
    args, rest = parser.parse_known_args(argv)
    if rest and not hasattr(args, "_parser"):      # only a subcommand that parses its own rest takes it
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args._rest = rest
    return args.func(args) or 0


@fill_doc
def package_main(prog, description, modules, reference):
    """Return the ``main(argv=None)`` of a package CLI: :func:`dispatch` over ``modules``.

    The ``__main__`` of every package is this function's result plus the list
    of its subcommand modules, so that all CLIs are built alike.

    Parameters
    ----------
    %(prog)s
    %(cli_description)s
    modules : list of str
        Import names of the modules that register subcommands (read at each
        call, so a module appended later is seen).
    reference : str or sequence of str
        The documentation section(s) of the CLI, named in ``main``'s docstring.

    Returns
    -------
    callable
        ``main(argv=None) -> int``, the exit status of the subcommand.

    See Also
    --------
    hcizz.cli.dispatch : What ``main`` calls.
    hcizz.cli.run_cli : Runs ``main`` with one-line errors.

    %(refs_replica_cli_json)s

    Examples
    --------
    >>> main = package_main("python -m replica", "demo", ["replica.theory_cli"], "docs/cli.md")
    >>> print(main(["gaussian-max", "2"]))        # 1/sqrt(pi); the last digit is quadrature rounding  # doctest: +ELLIPSIS
    n=2  E[M_n]=0.56418958354775...  E[M_n^2]=1
    0
    >>> print(main.__doc__.splitlines()[0])
    Run ``python -m replica SUBCOMMAND ...``.
    >>> main = package_main("python -m demo", "demo", [], ["docs/a.md", "docs/b.md"])
    >>> print(main.__doc__.splitlines()[-2])
        docs/b.md
    """
    def main(argv=None):
        return dispatch(argv, prog=prog, description=description, modules=modules)

    refs = ";\n    ".join([reference] if isinstance(reference, str) else reference)
    main.__doc__ = f"""Run ``{prog} SUBCOMMAND ...``.

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
    {refs}
    """
    return main


@fill_doc
def parse_list(text, name, *, item=float, low=None, high=None, low_open=False, choices=None):
    """Parse a comma-separated command-line list strictly: the one list syntax of the CLIs.

    Parameters
    ----------
    text : str or sequence
        ``"0.5,0.7"``; a list or tuple is checked item by item (an API caller).
    name : str
        The option's name for messages (``"--alphas"``).
    item : {float, int, str}
        Type of the items.
    low, high : float, optional
        Inclusive bounds of numeric items (``low_open``: exclusive lower bound).
    low_open : bool, optional
        Whether ``low`` itself is excluded.
    choices : sequence of str, optional
        Allowed values of ``str`` items.

    Returns
    -------
    list
        The items, in order.

    Raises
    ------
    ValueError
        On an empty list, an empty item (``"0.5,,0.7"``, a trailing comma),
        an item that is not of the type, out of range or not a choice; the
        message names the option, the item and the valid range.

    See Also
    --------
    hcizz.checks.check_real : The range check of each numeric item.
    replica.theory_cli.number : Parses one number.

    %(refs_bad_input)s

    Examples
    --------
    >>> parse_list("20,30", "--d", item=int, low=2)
    [20, 30]
    >>> parse_list("0.5,,0.7", "--alphas")
    Traceback (most recent call last):
    ...
    ValueError: --alphas must be a comma-separated list of numbers without empty items, got '0.5,,0.7'
    """
    from .checks import check_int, check_real

    kind = {float: "numbers", int: "integers", str: "names"}.get(item)
    if kind is None:
        raise ValueError(f"item must be float, int or str, got {item!r}")
    if isinstance(text, str):
        parts = [t.strip() for t in text.split(",")]
        if text.strip() == "":
            raise ValueError(f"{name} must be a non-empty comma-separated list of {kind}, got {text!r}")
        if any(t == "" for t in parts):
            raise ValueError(f"{name} must be a comma-separated list of {kind} without empty items, got {text!r}")
    elif isinstance(text, (list, tuple)):
        if not text:
            raise ValueError(f"{name} must be a non-empty list of {kind}, got {list(text)!r}")
        parts = list(text)
    else:
        raise ValueError(f"{name} must be a comma-separated list of {kind}, got {text!r:.80}")
    out = []
    for t in parts:
        if item is str:
            v = str(t)
            if choices is not None and v not in choices:
                raise ValueError(f"{name} items must be among {', '.join(map(str, choices))}, got {v!r}")
        else:
            if isinstance(t, str):
                try:
                    t = int(t) if item is int else float(t)
                except ValueError:
                    raise ValueError(f"{name} must be a comma-separated list of {kind}, got the item "
                                     f"{t!r} in {text!r}") from None
            if item is int:
                v = check_int(f"{name} item", t, low=low, high=high)
            else:
                v = check_real(f"{name} item", t, low=low, high=high, low_open=low_open, allow_array=False)
        out.append(v)
    return out


def _as_path(name, path, what):
    """``path`` as a ``pathlib.Path``; a non-path or the empty path is refused (``what``: file, folder)."""
    import os
    from pathlib import Path

    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise ValueError(f"{name} must be a {what} path, got {path!r}")
    return Path(path)


def _writable_dir(name, folder, path):
    import os

    probe = folder
    while not os.path.exists(probe):            # the first existing ancestor must accept a new entry
        parent = os.path.dirname(os.path.abspath(probe))
        if parent == os.path.abspath(probe):
            break
        probe = parent
    if not os.path.isdir(probe):
        raise ValueError(f"{name} must be a path whose parent is a folder, got {str(path)!r} "
                         f"({probe!r} is not a folder)")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{name} must be a path in a writable folder, got {str(path)!r} "
                         f"({probe!r} is not writable)")
    try:
        blocks = os.statvfs(probe).f_blocks
    except OSError:  # pragma: no cover - statvfs missing or refused: keep the access check's answer
        blocks = None
    if blocks == 0:                              # /proc, /sys: pseudo file systems hold no files (root too)
        raise ValueError(f"{name} must be a path on a file system that holds files, got {str(path)!r} "
                         f"({probe!r} is on a pseudo file system such as /proc)")


@fill_doc
def check_output_file(name, path, *, must_exist=False):
    """Check, before any work, that ``path`` can be written as a regular file.

    Parameters
    ----------
    name : str
        The option's name for messages (``"--store"``).
    path : str or path-like
        The file to be written (created, or appended to).
    must_exist : bool, optional
        Also require that it exists.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        An empty path, a directory, a FIFO, a device or socket (writing would
        block or go nowhere), an existing file that is not writable, or a
        parent that is not a folder or not writable; nothing is created.

    See Also
    --------
    hcizz.cli.check_output_dir : The same check for a folder.

    %(refs_bad_input)s

    Examples
    --------
    >>> check_output_file("--out", "")
    Traceback (most recent call last):
    ...
    ValueError: --out must be a file path, got ''
    """
    import os
    import stat

    p = _as_path(name, path, "file")
    if p.exists():
        mode = os.stat(p).st_mode
        if stat.S_ISDIR(mode):
            raise ValueError(f"{name} must be a file, got the folder {str(p)!r}")
        if not stat.S_ISREG(mode):
            raise ValueError(f"{name} must be a regular file, got {str(p)!r} (a FIFO, device or socket)")
        if not os.access(p, os.W_OK):
            raise ValueError(f"{name} must be a writable file, got {str(p)!r} (permission denied)")
        return p
    if must_exist:
        raise ValueError(f"{name} must be an existing file, got {str(p)!r}")
    _writable_dir(name, str(p.parent) if str(p.parent) else ".", p)
    return p


@fill_doc
def check_output_dir(name, path):
    """Check, before any work, that ``path`` is or can become a writable folder.

    Parameters
    ----------
    name : str
        The option's name for messages (``"--out"``).
    path : str or path-like
        The folder to write into (created later with its parents).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    ValueError
        An empty path, an existing path that is not a folder, a folder that
        is not writable, or an ancestor that is a file or not writable;
        nothing is created.

    See Also
    --------
    hcizz.cli.check_output_file : The same check for a file.

    %(refs_bad_input)s

    Examples
    --------
    >>> check_output_dir("--out", "")
    Traceback (most recent call last):
    ...
    ValueError: --out must be a folder path, got ''
    """
    import os

    p = _as_path(name, path, "folder")
    if p.exists():
        if not p.is_dir():
            raise ValueError(f"{name} must be a folder, got the existing file {str(p)!r}")
        if not os.access(p, os.W_OK | os.X_OK):
            raise ValueError(f"{name} must be a writable folder, got {str(p)!r} (permission denied)")
        return p
    _writable_dir(name, str(p), p)
    return p
