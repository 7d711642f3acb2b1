"""``python -m validation``: the main job (``reproduce``) and experiment CLIs."""
from __future__ import annotations

import sys

from validation._threads import default_single_thread

default_single_thread()   # before numpy loads: BLAS on one thread unless the user chose

from hcizz.cli import package_main, run_cli  # noqa: E402

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


main = package_main("python -m validation",
                    "Train associative memories in numpy and compare with theory.", CLI_MODULES,
                    reference=["docs/index.md#assocmem-documentation",
                               "docs/reliability.md#bad-input-classes-and-what-each-gives"])


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m validation"))
