"""Token retrieval with random (non-orthogonal) embeddings: a one-layer
attention model trained by a three-step early phase of gradient descent
(the formulation is ours: docs/token_retrieval.md#task)."""
from .task import Embeddings, Batch, make_embeddings, sample_sequences
from .model import make_mlp, forward, loss_and_grads, margins
from .early_phase import EarlyPhase, Evaluation, early_phase, evaluate, train_gd

__all__ = ["Embeddings", "Batch", "make_embeddings", "sample_sequences", "make_mlp", "forward",
           "loss_and_grads", "margins", "EarlyPhase", "Evaluation", "early_phase", "evaluate", "train_gd"]
