"""Token-retrieval training as a sweep-engine trial (``params -> dict``).

It lives here, with its experiment, so that the engine (``validation.engine``)
knows no experiment; ``benchmarks/bench_sweep.py`` times the engine on it.
"""
from __future__ import annotations

import time

import numpy as np
from validation.engine.trials import trial

__all__ = ["train_trial"]


@trial("token_retrieval.train", aliases=("validation.token_retrieval.trials:train_trial",))
def train_trial(params):
    r"""Train the token-retrieval attention model from zero as a sweep-engine trial.

    A real training trial for the sweep engine's benchmarks and tests: the
    model is trained from zero by full-batch Adam.
    ``params``: ``seed``, ``N`` (sequences), ``d``, ``L``, ``steps``,
    optional ``lr`` (default 0.05).  Vocabulary :math:`V = 4 N`, random
    embeddings, everything drawn from ``default_rng(seed)``.  Returns the
    final loss, training accuracy and :math:`\|W\|_F` (floats that depend on
    every bit of the run) and ``import_seconds``, the time this call spent
    importing ``validation.token_retrieval`` (seconds on the first call in a
    fresh worker process, ~0 afterwards; timing metadata, not a result).  The
    import is done inside the function so that importing this module stays
    light.

    Parameters
    ----------
    params : dict
        ``seed``, ``N``, ``d``, ``L``, ``steps`` and optionally ``lr``.

    Returns
    -------
    dict
        ``loss``, ``train_acc``, ``w_norm``, ``seed``, ``import_seconds``.

    See Also
    --------
    validation.token_retrieval.early_phase.train_gd
        Train from zero with full-batch Adam or GD, for comparison with the early phase.
    validation.engine.run_sweep : Run ``fn`` on every parameter record of ``params``; resumable, parallel.

    References
    ----------
    docs/sweeps.md#writing-a-trial; docs/token_retrieval.md#early-phase-and-full-training
    """
    t0 = time.perf_counter()
    from validation.token_retrieval.early_phase import train_gd
    from validation.token_retrieval.task import make_embeddings, sample_sequences
    imp = time.perf_counter() - t0

    rng = np.random.default_rng(params["seed"])
    N, d, L = int(params["N"]), int(params["d"]), int(params["L"])
    emb = make_embeddings(4 * N, d, rng=rng)
    batch = sample_sequences(emb, N, L, rng=rng)
    W, Wv, hist = train_gd(emb, batch, steps=int(params["steps"]), lr=params.get("lr", 0.05))
    return {"loss": hist[-1][1], "train_acc": hist[-1][2], "w_norm": float(np.linalg.norm(W)),
            "seed": params["seed"], "import_seconds": imp}
