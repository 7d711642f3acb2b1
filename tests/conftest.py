"""Test-suite configuration.

BLAS runs single-threaded in the tests unless the environment sets a thread
count (``validation._threads``).

Hypothesis: under CI (the environment variable ``CI`` is set, as ``.ci/run`` runs)
the ``ci`` profile is loaded: derandomised (the examples are a fixed function of the
test), no example database, so every CI run tries the same inputs.  Locally the
default profile draws fresh examples each run; ``--hypothesis-seed=N`` replays one
stream, and ``--hypothesis-profile=ci`` selects the CI profile by hand.
"""
import os

from validation._threads import default_single_thread

# BLAS on one thread (as `python -m validation` and the sweep workers run it):
# small matrix products, where threads only cost; set before numpy loads.
default_single_thread()

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
