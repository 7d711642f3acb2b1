"""``python -m validation``: the main job (``reproduce``) and experiment CLIs."""
from __future__ import annotations

import sys

from validation._threads import default_single_thread

default_single_thread()   # before numpy loads: BLAS on one thread unless the user chose

from hcizz.cli import dispatch, run_cli  # noqa: E402

#: Modules that add subcommands; each has ``register(subparsers)`` which adds a
#: parser and sets its ``func(args) -> int``.
CLI_MODULES = [
    "validation.report_cli",
    "validation.factual_recall.cli",
    "validation.token_retrieval.cli",
    "validation.engine.cli",
    "validation.linear_memory.cli",
    "validation.studies.cli",
]


def main(argv=None):
    """Run ``python -m validation SUBCOMMAND ...``.

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
    docs/index.md#assocmem-documentation;
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """
    return dispatch(argv, prog="python -m validation",
                    description="Train associative memories in numpy and compare with theory.",
                    modules=CLI_MODULES)


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m validation"))
