"""One-layer transformer for factual recall, forward and analytic backward (numpy).

Model (THEORY.md section 3): frozen token embeddings ``E`` (rows ``N(0, I/d)``)
and answer unembeddings ``U`` (rows ``N(0, I/d)``); ``H`` attention heads of
size ``d_h`` where only the last (EOS) position queries; output projection and
residual; MLP ``W2 relu(W1 z + b)`` with residual; logits ``U y``.

For a sequence ``x_1..x_T`` (embedded):

* scores ``s_{h,i} = x_i^T K_h Q_h^T x_T / sqrt(d_h)``, ``A_h = softmax_i(s_h)``;
* ``z = x_T + sum_h O_h^T V_h^T (sum_i A_{h,i} x_i)``;
* ``y = z + W2^T relu(W1^T z + b)``; ``logits = U y``.

Shapes: ``Q, K, V`` are ``(H, d, d_h)``, ``O`` is ``(H, d_h, d)``, ``W1``
``(d, m)``, ``b`` ``(m,)``, ``W2`` ``(m, d)``.  Trainable parameters counted as
``4 H d_h d + 2 m d`` (the ``m`` biases are not counted, as in the paper).

Implementation: every head is handled by batched matmuls; the key side is
never materialised per head: ``s_h = X (K_h Q_h^T x_T)`` and
``sum_i A_{h,i} V_h^T x_i = V_h^T (A_h X)``, so one step costs
``O(B T d H + B H d d_h + B d m + B d D R)``.
"""
from __future__ import annotations

import math

import numpy as np

from hcizz._checks import check_int, check_rng
from validation.losses import softmax_xent

__all__ = ["OneLayerTransformer"]

PARAM_NAMES = ("Q", "K", "V", "O", "W1", "b", "W2")

#: Every matrix product of the forward and backward passes goes through this
#: name, so that ``benchmarks/bench_transformer.py`` can record and replay them.
_mm = np.matmul


class OneLayerTransformer:
    """One-layer transformer with EOS-only attention (see module docstring).

    Parameters
    ----------
    d : int
        Embedding dimension (>= 1).
    H, d_h : int
        Heads and head size (``H d_h`` must be positive).
    m : int
        MLP width (>= 0; 0 means no MLP).
    vocab : int
        Number of input tokens.
    n_answers : int
        Number of answer tokens (logits).
    rng : seed or Generator
    dtype : float dtype (float32 for training, float64 for gradient checks).

    Attributes
    ----------
    params : list of ndarray
        ``[Q, K, V, O, W1, b, W2]`` (trainable).
    E, U : ndarray
        Frozen embeddings ``(vocab, d)`` and unembeddings ``(n_answers, d)``.

    Examples
    --------
    >>> net = OneLayerTransformer(8, 2, 4, 16, vocab=10, n_answers=6, rng=0)
    >>> net.param_count == 4 * 2 * 4 * 8 + 2 * 16 * 8
    True
    """

    def __init__(self, d, H, d_h, m, *, vocab, n_answers, rng=None, dtype=np.float32):
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
        d, H, d_h, m = self.d, self.H, self.d_h, self.m
        g = lambda *shape, scale: (rng.standard_normal(shape) * scale).astype(self.dtype)
        self.E = g(vocab, d, scale=1 / np.sqrt(d))
        self.U = g(n_answers, d, scale=1 / np.sqrt(d))
        self.params = [g(H, d, d_h, scale=1 / np.sqrt(d)),      # Q
                       g(H, d, d_h, scale=1 / np.sqrt(d)),      # K
                       g(H, d, d_h, scale=1 / np.sqrt(d)),      # V
                       g(H, d_h, d, scale=1 / np.sqrt(H * d_h)),  # O
                       g(d, m, scale=np.sqrt(2.0 / d)),          # W1
                       np.zeros(m, self.dtype),                  # b
                       g(m, d, scale=1 / np.sqrt(max(m, 1)))]    # W2

    @property
    def param_count(self):
        """``4 H d_h d + 2 m d``: attention (Q, K, V, O) plus MLP weights."""
        return 4 * self.H * self.d_h * self.d + 2 * self.m * self.d

    @property
    def attention_params(self):
        return 4 * self.H * self.d_h * self.d

    @property
    def mlp_params(self):
        return 2 * self.m * self.d

    def forward(self, tokens, params=None):
        """Logits ``(B, n_answers)`` and the cache needed by :meth:`backward`."""
        Q, K, V, O, W1, b, W2 = self.params if params is None else params
        B, T = tokens.shape
        H, d_h, d = self.H, self.d_h, self.d
        X = self.E[tokens]                                   # (B, T, d)
        xT = X[:, -1]                                        # (B, d)
        q = _mm(xT[None], Q)                           # (H, B, d_h)
        qk = _mm(q, K.transpose(0, 2, 1))              # (H, B, d): K_h Q_h^T x_T
        s = _mm(X, qk.transpose(1, 2, 0))              # (B, T, H)
        s = s.transpose(0, 2, 1) * (1.0 / math.sqrt(d_h))    # (B, H, T)
        s = s - s.max(axis=2, keepdims=True)
        A = np.exp(s)
        A /= A.sum(axis=2, keepdims=True)
        xbar = _mm(A, X)                               # (B, H, d)
        xbarH = xbar.transpose(1, 0, 2)                      # (H, B, d)
        o = _mm(xbarH, V)                              # (H, B, d_h)
        oflat = o.transpose(1, 0, 2).reshape(B, H * d_h)
        z = xT + _mm(oflat, O.reshape(H * d_h, d))
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
        """Gradients of the loss w.r.t. ``params`` given ``dlogits = dloss/dlogits``."""
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
        ds = A * (dA - (A * dA).sum(axis=2, keepdims=True))
        ds *= 1.0 / math.sqrt(d_h)
        dqk = _mm(ds, X).transpose(1, 0, 2)            # (H, B, d)
        dK = _mm(dqk.transpose(0, 2, 1), q)            # (H, d, d_h)
        dq = _mm(dqk, K)                               # (H, B, d_h)
        dQ = _mm(xT.T[None], dq)                       # (H, d, d_h)
        return [dQ, dK, dV, dO, dW1, db, dW2]

    def loss(self, tokens, targets, params=None, grad=True):
        """Mean cross-entropy, gradients (list, params order) and recall flags."""
        logits, cache = self.forward(tokens, params)
        loss, G, correct = softmax_xent(logits, targets, grad=grad)
        if not grad:
            return loss, None, correct
        return loss, self.backward(G, cache, params), correct
