"""Factual recall in one-layer transformers (docs/factual_recall.md), numpy only.

Modules
-------
memories     linear and MLP associative memories (losses with analytic gradients, training)
task         the synthetic factual-recall task (subjects, relations, answer blocks, noise)
transformer  one-layer transformer with EOS-only queries, forward + analytic backward
sequential   linear attention with one-hot embeddings: relation-before-subject learning
experiments  the four experiments of the report section
"""
