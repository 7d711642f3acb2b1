"""Test-suite configuration.

Hypothesis: under CI (the environment variable ``CI`` is set, as ``.ci/run`` runs)
the ``ci`` profile is loaded: derandomised (the examples are a fixed function of the
test), no example database, so every CI run tries the same inputs.  Locally the
default profile draws fresh examples each run; ``--hypothesis-seed=N`` replays one
stream, and ``--hypothesis-profile=ci`` selects the CI profile by hand.
"""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
