"""BLAS thread counts (no numpy import here: this must run before numpy loads).

The experiments multiply small matrices (``d <= 256``) many thousands of times.
With a multi-threaded BLAS on a 2-core machine, each product pays thread
synchronisation, and on a machine that is busy with anything else the BLAS
threads spin and wait: measured here, the quick factual-recall memory experiment
took 54 s of CPU with OpenBLAS's default threads under load and 4.9 s with one
thread (same results).  So ``python -m validation`` runs BLAS single-threaded
and gets its parallelism from worker processes (``validation.engine``), unless
the user sets a thread count; sweep workers are always pinned to one thread.
See ``docs/sweeps.md#blas-threads``.
"""
from __future__ import annotations

import os

#: Thread-count variables of the BLAS/OpenMP libraries numpy and scipy may use.
BLAS_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def default_single_thread(environ=None):
    """Set every variable of :data:`BLAS_ENV_VARS` that the user has not set to ``"1"``.

    Effective only before numpy is first imported (the libraries read them at load).

    Parameters
    ----------
    environ : dict, optional
        The environment to change (default ``os.environ``).

    Returns
    -------
    dict
        The variables this call set.
    """
    environ = os.environ if environ is None else environ
    set_now = {k: "1" for k in BLAS_ENV_VARS if k not in environ}
    environ.update(set_now)
    return set_now
