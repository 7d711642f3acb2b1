r"""One-layer transformer for factual recall, forward and analytic backward (numpy).

Model (docs/factual_recall.md#model): frozen token embeddings ``E`` (rows :math:`\mathcal{N}(0, I/d)`)
and answer unembeddings ``U`` (rows :math:`\mathcal{N}(0, I/d)`); ``H`` attention heads of
size ``d_h`` where only the last (EOS) position queries; output projection and
residual; MLP :math:`W_2 \mathrm{relu}(W_1 z + b)` with residual; logits :math:`U y`.

For a sequence ``x_1..x_T`` (embedded):

* scores :math:`s_{h,i} = x_i^T K_h Q_h^T x_T / \sqrt{d_h}`, :math:`A_h = \mathrm{softmax}_i(s_h)`;
* :math:`z = x_T + \sum_h O_h^T V_h^T \left(\sum_i A_{h,i} x_i\right)` (``variant="ours"``) or
  :math:`z = \sum_h O_h^T V_h^T \left(\sum_i A_{h,i} x_i\right)` (``variant="paper"``: the
  attention output alone is the residual stream, as in the paper's model);
* :math:`y = z + W_2^T \mathrm{relu}(W_1^T z + b)`; :math:`\mathrm{logits} = U y`.

Shapes: ``Q, K, V`` are ``(H, d, d_h)``, ``O`` is ``(H, d_h, d)``, ``W1``
``(d, m)``, ``b`` ``(m,)``, ``W2`` ``(m, d)``.  Trainable parameters counted as
:math:`4 H d_h d + 2 m d` (the ``m`` biases are not counted, as in the paper).

Implementation: every head is handled by batched matmuls; the key side is
never materialised per head: :math:`s_h = X (K_h Q_h^T x_T)` and
:math:`\sum_i A_{h,i} V_h^T x_i = V_h^T (A_h X)`, so one step costs
:math:`O(B T d H + B H d\, d_h + B d m + B d D R)`.  The four products that involve
the sequence (:math:`X (K_h Q_h^T x_T)`, :math:`A_h X` and their two adjoints) are
per-sample ``(T, d) x (d, H)``-sized products, run as one stacked
``np.matmul`` each.  Computing the keys of all samples as one
``(B T, d) @ (d, H d_h)`` product instead costs ``d_h`` times more flops and
measured 6-12x slower for the scores at the benchmark size
(``benchmarks/bench_transformer.py``, ``docs/factual_recall.md``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result
from validation.losses import softmax_xent
from validation._docparams import fill_doc
from .task import _check_ids

__all__ = ["OneLayerTransformer", "build_transformer", "VARIANTS", "truncated_normal",
           "TransformerShape"]

PARAM_NAMES = ("Q", "K", "V", "O", "W1", "b", "W2")


@dataclass(frozen=True)
class TransformerShape(Result):
    r"""The first fields of a record of one transformer shape: its sizes and parameter count.

    Parameters
    ----------
    d, H, d_h, m : int
        Model sizes.
    params : int
        Trainable parameters, :math:`4 H d_h d + 2 m d`
        (:meth:`OneLayerTransformer.count_params`).

    See Also
    --------
    validation.factual_recall.experiments.TransformerCapacity : A record that starts with them.
    validation.factual_recall.search.PaperCodeRow : Another.

    References
    ----------
    docs/factual_recall.md#model
    """

    d: int
    H: int
    d_h: int
    m: int
    params: int

#: The two model variants: ``"ours"`` (EOS residual, ``1/sqrt(d)`` attention init, He MLP
#: input layer) and ``"paper"`` (the model of arXiv:2412.06538's code: no EOS residual,
#: ``Q, K, V`` std ``1/sqrt(d_h)``, ``O`` std ``1/sqrt(d)``, LeCun MLP layers).
VARIANTS = ("ours", "paper")

#: Standard deviation of a standard normal truncated to ``[-2, 2]``:
#: ``sqrt(1 - 4 phi(2) / (2 Phi(2) - 1))`` (checked against scipy in the tests).
_TRUNC2_STD = 0.87962566103423978


def truncated_normal(rng, shape, std, dtype=np.float64):
    r"""Draw i.i.d. normals truncated at two standard deviations, rescaled to standard deviation ``std``.

    The LeCun initialisation of the paper's framework default: draws of
    :math:`\mathcal{N}(0, 1)` conditioned on :math:`|z| \leq 2` (by rejection), multiplied by
    :math:`\mathrm{std} / 0.8796\ldots` so that the variance is exactly :math:`\mathrm{std}^2`.

    Parameters
    ----------
    rng : None, int or Generator
        Randomness.
    shape : tuple of int
        Output shape.
    std : float
        Standard deviation of the result (> 0).
    dtype : numpy dtype, optional
        Output dtype.

    Returns
    -------
    ndarray
        Entries in :math:`[-2\, \mathrm{std} / 0.8796, 2\, \mathrm{std} / 0.8796]` with mean 0 and variance :math:`\mathrm{std}^2`.

    See Also
    --------
    validation.factual_recall.transformer.build_transformer : Initialises the transformer with it.

    References
    ----------
    Y. LeCun, L. Bottou, G. Orr, K.-R. Mueller, "Efficient BackProp" (1998);
    arXiv:2412.06538 (the model it initialises); docs/factual_recall.md#model

    Examples
    --------
    >>> x = truncated_normal(0, (200_000,), 0.5)
    >>> round(float(x.std()), 2), bool(np.abs(x).max() <= 2 * 0.5 / 0.8796)
    (0.5, True)
    """
    rng = check_rng(rng)
    std = check_real("std", std, low=0, low_open=True, allow_array=False)
    z = rng.standard_normal(shape)
    bad = np.abs(z) > 2
    while bad.any():
        z[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2
    return (z * (std / _TRUNC2_STD)).astype(dtype)

#: Every matrix product of the forward and backward passes goes through this
#: name, so that ``benchmarks/bench_transformer.py`` can record and replay them.
_mm = np.matmul


class OneLayerTransformer:
    r"""One-layer transformer with EOS-only attention (see module docstring).

    Parameters
    ----------
    d : int
        Embedding dimension (>= 1).
    H, d_h : int
        Heads and head size (:math:`H d_h` must be positive).
    m : int
        MLP width (>= 0; 0 means no MLP).
    vocab : int
        Number of input tokens.
    n_answers : int
        Number of answer tokens (logits).
    rng : None, int or Generator
        Randomness of the embeddings and the initialisation.
    dtype : numpy dtype
        Float32 for training, float64 for gradient checks.
    variant : {"ours", "paper"}
        ``"ours"`` (default): EOS residual :math:`z = x_T + \mathrm{attention}`, the
        initialisation below; ``"paper"``: the model of the paper's code (see
        Notes).

    Attributes
    ----------
    params : list of ndarray
        ``[Q, K, V, O, W1, b, W2]`` (trainable).
    E, U : ndarray
        Frozen embeddings ``(vocab, d)`` and unembeddings ``(n_answers, d)``.

    Raises
    ------
    ValueError
        ``H d_h <= 0`` (attention is the only path from the subject and
        relation positions to EOS), ``d < 1``, ``m < 0``, ``n_answers < 2`` or
        a non-floating ``dtype``, or an unknown ``variant``.

    See Also
    --------
    validation.factual_recall.transformer.build_transformer : Builds one sized for a task.
    validation.factual_recall.experiments.train_transformer : Trains it.

    Notes
    -----
    Initialisation of ``variant="ours"``: ``Q, K, V`` entries :math:`\mathcal{N}(0, 1/d)`,
    ``O`` entries :math:`\mathcal{N}(0, 1/(H d_h))`, ``W1`` He (:math:`\mathcal{N}(0, 2/d)`), ``b = 0``,
    ``W2`` entries :math:`\mathcal{N}(0, 1/m)`.

    ``variant="paper"`` differs in four places: there is no EOS residual
    (:math:`z = \sum_h O_h^T V_h^T \bar x_h`, so the subject and relation reach
    the MLP only through attention); ``Q, K, V`` entries :math:`\mathcal{N}(0, 1/d_h)`; ``O``
    entries :math:`\mathcal{N}(0, 1/d)`; ``W1`` and ``W2`` LeCun (normal truncated at two
    standard deviations, rescaled to variance :math:`1/d` and :math:`1/m`,
    :func:`truncated_normal`).  ``E`` and ``U`` are drawn first in both
    variants (rows :math:`\mathcal{N}(0, I/d)`) and never trained.  The residual carries no
    parameter, so :meth:`backward` is the same for both.

    References
    ----------
    Nichani, Lee, Bietti, "Understanding factual recall in transformers via
    associative memories" (docs/factual_recall.md; arXiv:2412.06538).

    Examples
    --------
    >>> net = OneLayerTransformer(8, 2, 4, 16, vocab=10, n_answers=6, rng=0)
    >>> net.param_count == 4 * 2 * 4 * 8 + 2 * 16 * 8
    True
    """

    def __init__(self, d, H, d_h, m, *, vocab, n_answers, rng=None, dtype=np.float32,
                 variant="ours"):
        self.d = check_int("d", d, low=1)
        self.H = check_int("H", H, low=0)
        self.d_h = check_int("d_h", d_h, low=0)
        if self.H * self.d_h <= 0:
            raise ValueError(f"H * d_h must be positive (attention is the only way to read the "
                             f"subject and relation), got H={self.H}, d_h={self.d_h}")
        self.m = check_int("m", m, low=0)
        vocab = check_int("vocab", vocab, low=1)
        n_answers = check_int("n_answers", n_answers, low=2)
        rng = check_rng(rng)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise ValueError(f"dtype must be a floating dtype (float32 or float64), got "
                             f"{self.dtype}")
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant = variant
        self.vocab, self.n_answers = vocab, n_answers
        d, H, d_h, m = self.d, self.H, self.d_h, self.m
        g = lambda *shape, scale: (rng.standard_normal(shape) * scale).astype(self.dtype)
        self.E = g(vocab, d, scale=1 / np.sqrt(d))
        self.U = g(n_answers, d, scale=1 / np.sqrt(d))
        if variant == "paper":
            self.params = [g(H, d, d_h, scale=1 / np.sqrt(d_h)),   # Q
                           g(H, d, d_h, scale=1 / np.sqrt(d_h)),   # K
                           g(H, d, d_h, scale=1 / np.sqrt(d_h)),   # V
                           g(H, d_h, d, scale=1 / np.sqrt(d)),     # O
                           truncated_normal(rng, (d, m), 1 / np.sqrt(d), self.dtype),         # W1
                           np.zeros(m, self.dtype),                                          # b
                           truncated_normal(rng, (m, d), 1 / np.sqrt(max(m, 1)), self.dtype)]  # W2
            return
        self.params = [g(H, d, d_h, scale=1 / np.sqrt(d)),      # Q
                       g(H, d, d_h, scale=1 / np.sqrt(d)),      # K
                       g(H, d, d_h, scale=1 / np.sqrt(d)),      # V
                       g(H, d_h, d, scale=1 / np.sqrt(H * d_h)),  # O
                       g(d, m, scale=np.sqrt(2.0 / d)),          # W1
                       np.zeros(m, self.dtype),                  # b
                       g(m, d, scale=1 / np.sqrt(max(m, 1)))]    # W2

    @staticmethod
    def count_params(d, H, d_h, m):
        """:math:`4 H d_h d + 2 m d` without building a model (biases not counted).

        Examples
        --------
        >>> OneLayerTransformer.count_params(16, 2, 8, 16)
        1536
        """
        return 4 * H * d_h * d + 2 * m * d

    @property
    def param_count(self):
        """:math:`4 H d_h d + 2 m d`: attention (Q, K, V, O) plus MLP weights."""
        return self.count_params(self.d, self.H, self.d_h, self.m)

    @property
    def attention_params(self):
        """:math:`4 H d_h d`: the ``Q, K, V, O`` weights."""
        return self.count_params(self.d, self.H, self.d_h, 0)

    @property
    def mlp_params(self):
        """:math:`2 m d`: the ``W1, W2`` weights (biases not counted)."""
        return self.count_params(self.d, 0, 0, self.m)

    def forward(self, tokens, params=None):
        """Compute the logits and the cache needed by :meth:`backward`.

        Parameters
        ----------
        tokens : int ndarray (B, T)
            Token ids in ``[0, vocab)``; the last column is the query.
        params : list of ndarray, optional
            Parameters to use instead of ``self.params`` (same order).

        Returns
        -------
        logits : ndarray (B, n_answers)
            Scores of the answers at the EOS position.
        cache : tuple
            Intermediate arrays for :meth:`backward`.

        Examples
        --------
        >>> net = OneLayerTransformer(8, 2, 4, 16, vocab=10, n_answers=6, rng=0)
        >>> net.forward(np.array([[1, 2, 9], [3, 4, 9]]))[0].shape
        (2, 6)
        """
        Q, K, V, O, W1, b, W2 = self.params if params is None else params
        tokens = _check_ids("tokens", tokens, self.vocab, ndim=2)
        B, T = tokens.shape
        if B < 1 or T < 1:
            raise ValueError(f"tokens must have shape (B, T) with B, T >= 1, got {tokens.shape}")
        H, d_h, d = self.H, self.d_h, self.d
        X = np.take(self.E, tokens, axis=0)                  # (B, T, d)
        xT = X[:, -1]                                        # (B, d)
        q = _mm(xT[None], Q)                           # (H, B, d_h)
        qk = _mm(q, K.transpose(0, 2, 1))              # (H, B, d): K_h Q_h^T x_T
        # scores directly as a C-contiguous (B, H, T) array (per sample a strided
        # (H, d) block times X_b^T, both BLAS-ready without a copy), so the softmax
        # over T runs in place along the contiguous last axis
        A = _mm(qk.transpose(1, 0, 2), X.transpose(0, 2, 1))  # (B, H, T)
        A *= 1.0 / math.sqrt(d_h)
        A -= A.max(axis=2, keepdims=True)
        np.exp(A, out=A)
        A /= A.sum(axis=2, keepdims=True)
        xbar = _mm(A, X)                               # (B, H, d)
        xbarH = xbar.transpose(1, 0, 2)                      # (H, B, d)
        o = _mm(xbarH, V)                              # (H, B, d_h)
        oflat = o.transpose(1, 0, 2).reshape(B, H * d_h)
        z = _mm(oflat, O.reshape(H * d_h, d))
        if self.variant == "ours":
            z += xT
        if self.m:
            P = _mm(z, W1) + b
            Hd = np.maximum(P, 0)
            y = z + _mm(Hd, W2)
        else:
            P = Hd = None
            y = z
        logits = _mm(y, self.U.T)
        cache = (X, xT, q, qk, A, xbarH, oflat, z, P, Hd, y)
        return logits, cache

    def backward(self, dlogits, cache, params=None):
        r"""Compute the gradients of a loss w.r.t. the parameters (reverse-mode, by hand).

        Parameters
        ----------
        dlogits : ndarray (B, n_answers)
            :math:`\partial \mathrm{loss} / \partial \mathrm{logits}`.
        cache : tuple
            Second output of :meth:`forward` (same ``params``).
        params : list of ndarray, optional
            Parameters to use instead of ``self.params`` (same order).

        Returns
        -------
        list of ndarray
            ``[dQ, dK, dV, dO, dW1, db, dW2]``.

        Notes
        -----
        With ``G = dlogits``: :math:`dy = G U`; MLP: :math:`dP = (dy\, W_2^T) \odot 1[P > 0]`,
        :math:`dz = dy + dP\, W_1^T`; attention output :math:`do_h = dz\, O_h^T`,
        :math:`dV_h = \bar x_h^T do_h`, :math:`d\bar x_h = do_h V_h^T`; softmax:
        :math:`ds = A \odot (dA - \langle A, dA \rangle) / \sqrt{d_h}` with :math:`dA_{h,i} = d\bar x_h \cdot x_i`;
        scores :math:`s_h = X (K_h q_h)`: :math:`d(K_h q_h) = ds_h X`, ``dK_h``,
        ``dq_h``, :math:`dQ_h = x_T^T dq_h`.  Checked against central finite
        differences in ``tests/test_fr_gradients.py``.

        Examples
        --------
        >>> net = OneLayerTransformer(8, 2, 4, 16, vocab=10, n_answers=6, rng=0)
        >>> logits, cache = net.forward(np.array([[1, 2, 9], [3, 4, 9]]))
        >>> [g.shape for g in net.backward(np.ones_like(logits), cache)][:2]
        [(2, 8, 4), (2, 8, 4)]
        """
        Q, K, V, O, W1, b, W2 = self.params if params is None else params
        X, xT, q, qk, A, xbarH, oflat, z, P, Hd, y = cache
        H, d_h, d = self.H, self.d_h, self.d
        B = X.shape[0]
        dy = _mm(dlogits, self.U)                               # (B, d)
        dz = dy
        if self.m:
            dW2 = _mm(Hd.T, dy)
            dP = _mm(dy, W2.T) * (P > 0)
            dW1 = _mm(z.T, dP)
            db = dP.sum(axis=0)
            dz = dy + _mm(dP, W1.T)
        else:
            dW1, db, dW2 = np.zeros_like(W1), np.zeros_like(b), np.zeros_like(W2)
        dO = _mm(oflat.T, dz).reshape(H, d_h, d)
        do = _mm(dz, O.reshape(H * d_h, d).T).reshape(B, H, d_h).transpose(1, 0, 2)  # (H, B, d_h)
        dV = _mm(xbarH.transpose(0, 2, 1), do)         # (H, d, d_h)
        dxbar = _mm(do, V.transpose(0, 2, 1))          # (H, B, d)
        dA = _mm(dxbar.transpose(1, 0, 2), X.transpose(0, 2, 1))  # (B, H, T)
        ds = dA                                                # (B, H, T), in place
        ds -= (A * dA).sum(axis=2, keepdims=True)
        ds *= A
        ds *= 1.0 / math.sqrt(d_h)
        dqk = _mm(ds, X).transpose(1, 0, 2)            # (H, B, d)
        dK = _mm(dqk.transpose(0, 2, 1), q)            # (H, d, d_h)
        dq = _mm(dqk, K)                               # (H, B, d_h)
        dQ = _mm(xT.T[None], dq)                       # (H, d, d_h)
        return [dQ, dK, dV, dO, dW1, db, dW2]

    @fill_doc
    def loss(self, tokens, targets, params=None, grad=True):
        """Mean cross-entropy, its gradients and the recall flags.

        Parameters
        ----------
        tokens : int ndarray (B, T)
            Token ids; the last column is the query.
        targets : int ndarray (B,)
            Answer indices in ``[0, n_answers)``.
        params : list of ndarray, optional
            Parameters to use instead of ``self.params`` (same order).
        grad : bool
            Also run :meth:`backward`.

        Returns
        -------
        %(xent)s %(param_grads)s
        correct : bool ndarray (B,)
            Strict-argmax recall of each sequence.

        Examples
        --------
        >>> net = OneLayerTransformer(8, 2, 4, 16, vocab=10, n_answers=6, rng=0)
        >>> loss, g, ok = net.loss(np.array([[1, 2, 9]]), np.array([3]))
        >>> len(g), ok.shape
        (7, (1,))
        """
        targets = _check_ids("targets", targets, self.n_answers)
        if targets.shape[0] != np.shape(tokens)[0]:
            raise ValueError(f"targets must have one entry per sequence ({np.shape(tokens)[0]}), "
                             f"got {targets.shape[0]}")
        logits, cache = self.forward(tokens, params)
        loss, G, correct = softmax_xent(logits, targets, grad=grad)
        if not grad:
            return loss, None, correct
        return loss, self.backward(G, cache, params), correct


@fill_doc
def build_transformer(d, H, d_h, m, *, task, rng=None, dtype=np.float32, variant="ours"):
    """Build the transformer every factual-recall trainer uses, sized for ``task``.

    The one place where the trainers (:func:`validation.factual_recall.experiments.train_transformer`,
    :func:`validation.factual_recall.trials.transformer_budget_trial`) construct
    their model: a second model variant is added here, and the trainers need
    only its ``params`` (trained in place), ``loss(tokens, targets, grad=...)``
    and ``param_count``.

    Parameters
    ----------
    d, H, d_h, m : int
        Model sizes (see :class:`OneLayerTransformer`).
    task : validation.factual_recall.task.FactTask
        The task (its vocabulary and number of answers).
    rng : None, int or Generator
        Randomness of the embeddings and the initialisation.
    dtype : numpy dtype
        Parameter dtype.
    variant : {"ours", "paper"}
        Model variant (see :class:`OneLayerTransformer`).

    Returns
    -------
    OneLayerTransformer
        The model.

    See Also
    --------
    validation.factual_recall.transformer.OneLayerTransformer : The model.
    validation.factual_recall.transformer.truncated_normal : The initialisation of its weights.

    %(ref_model_paper)s

    Examples
    --------
    >>> from validation.factual_recall.task import make_task
    >>> net = build_transformer(8, 2, 4, 16, task=make_task(2, 2, 2, T=4, rng=0), rng=0)
    >>> net.vocab, net.n_answers, net.param_count
    (9, 4, 512)
    """
    return OneLayerTransformer(d, H, d_h, m, vocab=task.vocab, n_answers=task.n_answers, rng=rng,
                               dtype=dtype, variant=variant)
