#!/usr/bin/env bash
# Build the documentation site into docs/_build/html (warnings are errors).
# Needs the docs extra:  pip install -e ".[docs]"
# Entry page: docs/_build/html/index.html (overview; the toctree root is contents.html)
set -euo pipefail
cd "$(dirname "$0")/.."
# autosummary pages are regenerated every build: a stale page of a removed object
# would otherwise be a "not in any toctree" warning
rm -rf docs/generated
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MPLBACKEND=agg
python -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
