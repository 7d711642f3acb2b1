"""Demo trial functions for examples, tests and ``benchmarks/bench_sweep.py``.

They live in the package (not in ``tests/``) because worker processes import
trial functions by module name, and the package is importable everywhere it
is installed while ``tests/`` is not.

Two of them have a side effect that real trials must not have: they append a
line to the file ``params["log"]`` each time they run, so tests can count
executions (that is how "a rerun recomputes nothing" is checked).
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

__all__ = ["square", "lstsq_trial", "counted", "flaky", "env_probe", "import_probe", "die",
           "bad_result", "read_log"]

#: Modules a worker must not import unless its trial needs them: heavy packages,
#: and the parts of ``hcizz`` beyond the light shared layer (the engine imports
#: ``hcizz.jsonout``; the ``hcizz`` package ``__init__`` imports nothing more).
HEAVY_MODULES = ("scipy", "matplotlib", "sympy", "mpmath", "replica", "hcizz.numerics",
                 "hcizz.quarter_circle", "hcizz.marchenko_pastur", "hcizz.mp_product",
                 "hcizz.free_transforms", "hcizz.spherical")


def square(params):
    """``{"y": x * x}``: a trivial trial (engine overhead benchmarks)."""
    x = params["x"]
    return {"y": x * x}


def lstsq_trial(params):
    r"""A training-like numpy workload: least squares on random data.

    ``params``: ``seed``, ``n`` (rows), ``d`` (columns), optional ``reps``
    (repeat the solve on fresh data to lengthen the trial). Draws
    :math:`A \sim \mathcal{N}(0, 1)^{n \times d}`, :math:`w \sim \mathcal{N}(0, 1)^d`, :math:`b = A w + 0.1\, \mathrm{noise}` from
    ``default_rng(seed)``, fits ``w_hat`` by ``lstsq`` and also runs a few
    gradient steps on the normal equations (matmul-shaped). Returns the
    residual norms and the recovery error (floats depend on every bit of the
    computation, so they reveal any executor-dependent difference).
    """
    rng = np.random.default_rng(params["seed"])
    n, d = int(params["n"]), int(params["d"])
    out = {"resid": [], "err": [], "gd_loss": []}
    for _ in range(int(params.get("reps", 1))):
        A = rng.standard_normal((n, d))
        w = rng.standard_normal(d)
        b = A @ w + 0.1 * rng.standard_normal(n)
        w_hat, *_ = np.linalg.lstsq(A, b, rcond=None)
        out["resid"].append(float(np.linalg.norm(A @ w_hat - b)))
        out["err"].append(float(np.linalg.norm(w_hat - w)))
        G = A.T @ A / n
        h = A.T @ b / n
        v = np.zeros(d)
        for _ in range(10):
            v -= 0.5 * (G @ v - h)
        out["gd_loss"].append(float(np.mean((A @ v - b) ** 2)))
    out["seed"] = params["seed"]
    return out


def _log(params, **fields):
    path = params.get("log")
    if path:
        line = json.dumps({"pid": os.getpid(), **fields}) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def counted(params):
    """Sleep ``params.get("sleep", 0)`` s, log one execution to
    ``params["log"]`` and return ``{"i": i, "y": i * i}``."""
    time.sleep(params.get("sleep", 0.0))
    _log(params, i=params["i"])
    return {"i": params["i"], "y": params["i"] ** 2}


def flaky(params):
    """Raise ``ValueError`` when ``params["fail"]`` is true (and the file
    ``params.get("fix")`` does not exist); log each execution."""
    _log(params, i=params["i"])
    fix = params.get("fix")
    if params.get("fail") and not (fix and os.path.exists(fix)):
        raise ValueError(f"trial {params['i']} failed on purpose")
    return {"i": params["i"]}


def env_probe(params):
    """The BLAS thread variables and pid of the process that ran the trial."""
    from .executors import BLAS_ENV_VARS
    return {"env": {k: os.environ.get(k) for k in BLAS_ENV_VARS}, "pid": os.getpid()}


def import_probe(params):
    """The pid of the process that ran the trial and which of
    :data:`HEAVY_MODULES` it has imported (checks what workers import)."""
    import sys

    loaded = set(sys.modules) | {m.partition(".")[0] for m in sys.modules}
    return {"pid": os.getpid(), "heavy": [m for m in HEAVY_MODULES if m in loaded],
            "n_modules": len(sys.modules), "i": params.get("i")}


def die(params):
    """Kill the worker process running it (``os._exit``) when
    ``params["die"]`` is true: simulates a worker lost to a crash or OOM."""
    if params.get("die"):
        os._exit(3)
    return {"i": params["i"]}


def bad_result(params):
    """Returns something that is not a JSON dict (a set inside)."""
    return {"s": {1, 2}}


def read_log(path):
    """Lines logged by :func:`counted` / :func:`flaky` (list of dicts)."""
    try:
        with open(path) as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        return []
