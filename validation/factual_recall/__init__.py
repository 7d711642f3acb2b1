"""Factual recall in one-layer transformers (docs/factual_recall.md), numpy only.

Modules
-------
memories     linear and MLP associative memories (losses with analytic gradients, training)
task         the synthetic factual-recall task (subjects, relations, answer blocks, noise)
transformer  one-layer transformer with EOS-only queries, forward + analytic backward
sequential   linear attention with one-hot embeddings: relation-before-subject learning
experiments  the four quick experiments of the report section (and their CLI)
trials       registered trials of the studies (memories, escape times, transformer budget)
theory       what the measurements are compared with (replica capacity, counting, saddle rates)
fits         capacity, slope, escape-time and trade-off-boundary fits
search       the adaptive search over the number of facts (grid, next index, shapes)

The studies that plan these trials live in :mod:`validation.studies`
(``python -m validation study --list``).
"""
