#!/usr/bin/env bash
# Build the documentation site into docs/_build/html (warnings are errors).
# Needs the docs extra:  pip install -e ".[docs]"
# Entry page: docs/_build/html/index.html
#
# MathJax ships with the site: the first build fetches the pinned mathjax npm
# package (npm pack; or ASSOCMEM_MATHJAX_TARBALL=FILE.tgz) into docs/_static/mathjax
# (docs/_ext/site_mathjax.py).
#
# The validation report becomes the site's "Report" pages when ASSOCMEM_DOCS_REPORT
# is set (docs/_ext/site_report.py):
#   ASSOCMEM_DOCS_REPORT=quick  runs  python -m validation reproduce --quick --out docs/_build/report
#   ASSOCMEM_DOCS_REPORT=full   the same without --quick (about 20 min on 2 cores)
#   ASSOCMEM_DOCS_REPORT=DIR    an existing report folder (with report.md)
# reproduce resumes in docs/_build/report, so a second build reuses the first's report.
set -euo pipefail
cd "$(dirname "$0")/.."
# autosummary pages are regenerated every build: a stale page of a removed object
# would otherwise be a "not in any toctree" warning
rm -rf docs/generated docs/_build/html
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MPLBACKEND=agg
case "${ASSOCMEM_DOCS_REPORT:-}" in
    quick|full)
        mode=()
        [ "$ASSOCMEM_DOCS_REPORT" = quick ] && mode=(--quick)
        python -m validation reproduce "${mode[@]}" --out docs/_build/report
        export ASSOCMEM_DOCS_REPORT="$PWD/docs/_build/report"
        ;;
esac
python -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
