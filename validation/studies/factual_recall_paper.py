"""The paper's protocol on the paper's model, and its comparison with the paper's own code.

One study, ``factual_recall.paper_protocol``, on the trial
:func:`~validation.factual_recall.trials.paper_protocol_trial`: for every shape of
:data:`PAPER_SHAPES` and every seed, a lean search over the number of subjects
``S = R`` (:func:`~validation.factual_recall.search.next_paper_trial`): start
near the expected capacity, try the learning rates
:data:`~validation.factual_recall.search.PAPER_LRS` at a size until one passes
(a run stops at its first pass), move two sizes up after a pass and two down
after a failure of every rate until bracketed, then bisect; stop once a passed
size has a failed successor.
The criterion is the paper's: the largest passed size
(:func:`~validation.factual_recall.search.largest_passed`).

The summary puts these sizes next to those of the paper's public code, run at
the same shapes in a separate environment (jax on CPU; nothing of that code is
in this package); its runs are committed as data in
``stored/factual_recall.paper_code.json`` and read by :func:`paper_code_runs`.

Regenerate or extend (resumable; the new store is in your folder)::

    OMP_NUM_THREADS=1 nice -n 10 python -m validation study factual_recall.paper_protocol --workers 2

Notes
-----
Starts: the paper code's largest passed size at each shape (13 at d = 16, 27
at d = 32).  Single-threaded BLAS (``OMP_NUM_THREADS=1``) was 7x faster per
step than the default threading on the shared 2-core machine where the
committed store was computed.  One size that fails costs three runs of 16384
steps (about 4 CPU min at d = 16, 11 at d = 32).

Docs: ``docs/factual_recall.md#the-papers-protocol-against-the-papers-code``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from hcizz.results import Result
from validation.engine import trial_key
from validation.factual_recall.search import (PAPER_LRS, LargestPassed, largest_passed,
                                              next_paper_trial, paper_code_comparison, shape_of)
from validation.factual_recall.transformer import OneLayerTransformer
from validation.factual_recall.trials import paper_protocol_trial

from .base import STORED_DIR, Option, Study, fill_doc

__all__ = ["PAPER_PROTOCOL", "PAPER_SHAPES", "paper_base", "paper_code_runs", "PaperPath",
           "PaperProtocolSummary", "PaperProtocol", "STUDIES"]

#: The paper's protocol: batch, step budget, test checks, learning rates (tried in this
#: order at a size); the search: most sizes per path, sizes per move until bracketed.
PAPER_PROTOCOL = {"D": 8, "T": 32, "batch": 1024, "steps": 16384, "eval_every": 128,
                  "n_test": 1024, "lrs": PAPER_LRS, "max_sizes": 6, "step": 2}

#: Shapes ``(d, H d_h / d, m / d, start S, seeds, budget)``: the shapes the paper's code
#: was run at (d = 16, 32), started at its largest passed size, and d = 64 (not run with
#: the paper's code), started at S = 41 (about 0.07 facts per parameter, below the 0.086
#: of our d = 32).  ``budget`` is the step budget of the criterion, a quarter of the
#: paper's 16384: a failed size costs three runs of the full budget (at 16384 steps about
#: 2.5 CPU min each at d = 16 and 4.6 at d = 32, beyond the CPU this study was given); the
#: paper code's runs are read at the same budget (a run is a prefix of a longer one).
#: ``--steps 16384`` runs the paper's budget.
PAPER_SHAPES = ((16, 1.0, 1.0, 13, 2, 4096), (32, 1.0, 1.0, 27, 2, 4096), (64, 1.0, 1.0, 41, 1, 4096))

#: The committed runs of the paper's own code (data, see :func:`paper_code_runs`).
PAPER_CODE_FILE = "factual_recall.paper_code.json"


@fill_doc
def paper_base(shape, *, variant, steps):
    """Return the trial parameters shared by every run of one shape (all but ``S``, ``R``, ``seed``, ``lr``).

    Parameters
    ----------
    shape : tuple
        ``(d, H d_h / d, m / d, start, seeds, budget)``.
    variant : {"paper", "ours"}
        Model variant.
    steps : int
        Step budget.

    Returns
    -------
    dict
        Model shape (:func:`~validation.factual_recall.search.shape_of`, 8
        heads) and the settings of :data:`PAPER_PROTOCOL`.

    %(ref_paper_protocol)s
    """
    d, H, d_h, m = shape_of(*shape[:3])
    p = PAPER_PROTOCOL
    return {"d": d, "H": H, "d_h": d_h, "m": m, "D": p["D"], "T": p["T"], "batch": p["batch"],
            "steps": int(steps), "eval_every": p["eval_every"], "n_test": p["n_test"],
            "variant": variant}


@fill_doc
def paper_code_runs(path=None):
    """Read the committed runs of the paper's own code.

    Parameters
    ----------
    path : path, optional
        The JSON file (default: the committed ``stored/factual_recall.paper_code.json``).

    Returns
    -------
    dict
        ``{"meta": {...}, "runs": [...]}``: how the code was run (repository,
        commit, command, environment) and one record per training run
        (``seed``, ``d``, ``H``, ``d_h``, ``m``, ``S``, ``R``, ``lr``,
        ``passed``, ``pass_step``, ``max_accuracy``, ``cpu_seconds``).

    %(ref_paper_protocol)s
    """
    with open(STORED_DIR / PAPER_CODE_FILE if path is None else path) as fh:
        return json.load(fh)


@fill_doc
@dataclass(frozen=True)
class PaperPath(Result):
    """One search path (shape, seed) of the paper protocol: its runs and the paper's criterion.

    Parameters
    ----------
    d, H, d_h, m : int
        Shape.
    seed : int
        Seed.
    variant : str
        Model variant.
    steps : int
        Step budget of the criterion.
    params : int
        ``4 H d_h d + 2 m d``.
    outcome : LargestPassed
        The criterion on the path's runs.
    runs : list of dict
        ``S``, ``lr``, ``budget`` (of the run), ``passed``, ``pass_step`` and
        ``max_accuracy`` (at the path's budget), ``cpu_seconds`` per run.
    done : bool
        Whether the search of the path is finished.
    cpu_seconds : float
        CPU seconds of its runs.

    %(ref_paper_protocol)s
    """

    d: int
    H: int
    d_h: int
    m: int
    seed: int
    variant: str
    steps: int
    params: int
    outcome: LargestPassed
    runs: list
    done: bool
    cpu_seconds: float

    @property
    def facts_per_param(self):
        """``S R / params`` at the largest passed size (None if none passed)."""
        return None if self.outcome.facts is None else self.outcome.facts / self.params

    def to_dict(self):
        d = super().to_dict()
        d["facts_per_param"] = self.facts_per_param
        return d


@fill_doc
@dataclass(frozen=True)
class PaperProtocolSummary(Result):
    """The paper protocol's paths and the comparison with the paper's code.

    Parameters
    ----------
    paths : list of PaperPath
        Every path, shapes in :data:`PAPER_SHAPES` order, then seeds.
    comparison : list of validation.factual_recall.search.PaperCodeRow
        Per shape: the paper code's largest passed sizes next to ours.
    paper_code : dict
        How the paper's code was run (``meta`` of :func:`paper_code_runs`).
    pending : int
        Paths whose search is not finished.

    %(ref_paper_protocol)s
    """

    paths: list
    comparison: list
    paper_code: dict
    pending: int


def _budget(shape, steps):
    return int(steps) if steps is not None else int(shape[5])


def _paths(ok, variant, steps):
    """``(shape, base, seed, runs, next)`` of every path from the store's ok records ``ok``.

    The runs of a path are every stored run of its shape and seed with a budget at
    least the path's, read at the path's budget (a run is a prefix of a longer one)."""
    out = []
    for shape in PAPER_SHAPES:
        budget = _budget(shape, steps)
        base = paper_base(shape, variant=variant, steps=budget)
        same = {k: v for k, v in base.items() if k != "steps"}
        mine = [r for r in ok.values() if all(r["params"].get(k) == v for k, v in same.items())
                and r["params"]["steps"] >= budget]
        for seed in range(shape[4]):
            recs = [r for r in mine if r["params"]["seed"] == seed and r["params"]["S"] == r["params"]["R"]]
            recs.sort(key=lambda r: r["params"]["steps"] != budget)   # the path's own budget first
            runs, seen = [], set()
            for r in recs:
                q, res = r["params"], r["result"]
                if (q["S"], q["lr"]) in seen:
                    continue
                seen.add((q["S"], q["lr"]))
                ok_b = bool(res["passed"]) and res["pass_step"] is not None and res["pass_step"] <= budget
                best = max(a for t, a in zip(res["eval_steps"], res["accuracy"]) if t <= budget)
                runs.append({"S": q["S"], "R": q["R"], "lr": q["lr"], "budget": q["steps"], **res,
                             "passed": ok_b, "pass_step": res["pass_step"] if ok_b else None,
                             "max_accuracy": best})
            nxt = next_paper_trial(runs, shape[3], lrs=PAPER_PROTOCOL["lrs"],
                                   max_sizes=PAPER_PROTOCOL["max_sizes"],
                                   step=PAPER_PROTOCOL["step"])
            q = None if nxt is None else {**base, "S": nxt[0], "R": nxt[0], "seed": seed,
                                          "lr": nxt[1]}
            out.append((shape, base, seed, runs, q))
    return out


class PaperProtocol(Study):
    """The paper's protocol at the paper code's shapes, and the comparison with that code.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#the-papers-protocol-against-the-papers-code
    """

    name = "factual_recall.paper_protocol"
    title = ("the paper's protocol (batch 1024, best of three rates, largest passed size; 4096 of "
             "the paper's 16384 steps by default) on the paper's model, next to the paper's own code")
    trial = paper_protocol_trial
    docs = "docs/factual_recall.md#the-papers-protocol-against-the-papers-code"
    options = (Option("variant", "--variant", str, "paper",
                      "model variant: paper (the paper's model) or ours (EOS residual, our init)",
                      choices=("paper", "ours")),
               Option("steps", "--steps", int, None,
                      "step budget of every shape (default: the budgets of PAPER_SHAPES; the "
                      "paper's is 16384)", low=128),
               Option("max_rounds", "--max-rounds", int, 40,
                      "most search rounds (each runs the next trial of every unfinished path)", low=0))

    @fill_doc
    def execute(self, runner, variant, steps, max_rounds):
        """Run the lean searches round by round; return every path.

        Parameters
        ----------
        %(runner)s
        variant : str
            Model variant.
        steps : int or None
            Step budget of every shape (None: those of :data:`PAPER_SHAPES`).
        max_rounds : int
            Most rounds.

        Returns
        -------
        list of tuple
            ``(shape, base, seed, runs, next)`` per path.

        Notes
        -----
        The next trial of a path is decided from the store; a replay asks only
        for trials the store holds (a path whose next trial is missing is
        reported as pending, not as an error).
        """
        for _ in range(max_rounds):
            ok = runner.stored_ok()
            todo = [q for *_, q in _paths(ok, variant, steps) if q is not None]
            if not runner.compute:
                todo = [q for q in todo if trial_key(q, self.trial) in ok]
            if not todo:
                break
            runner(todo)
            if not runner.compute:
                break
        return _paths(runner.stored_ok(), variant, steps)

    def summarise(self, results, variant, steps, max_rounds):
        """Apply the paper's criterion to every path and compare with the paper's code.

        Parameters
        ----------
        results : list
            What :meth:`execute` returned.
        variant : str
            Model variant.
        steps : int or None
            Step budget of every shape (None: those of :data:`PAPER_SHAPES`).
        max_rounds : int
            The option (unused).

        Returns
        -------
        PaperProtocolSummary
            Paths and comparison.
        """
        code = paper_code_runs()
        paths = []
        for shape, base, seed, runs, nxt in results:
            out = largest_passed(runs, PAPER_PROTOCOL["lrs"])
            d, H, d_h, m = base["d"], base["H"], base["d_h"], base["m"]
            paths.append(PaperPath(d, H, d_h, m, seed, variant, base["steps"],
                                   OneLayerTransformer.count_params(d, H, d_h, m), out,
                                   [{k: r.get(k) for k in ("S", "lr", "budget", "passed", "pass_step",
                                                           "max_accuracy", "cpu_seconds")}
                                    for r in sorted(runs, key=lambda r: (r["S"], -r["lr"]))],
                                   nxt is None, round(sum(r["cpu_seconds"] for r in runs), 1)))
        shapes = []
        for shape in PAPER_SHAPES:
            d, H, d_h, m = shape_of(*shape[:3])
            theirs = [r for r in code["runs"] if (r["d"], r["H"], r["d_h"], r["m"]) == (d, H, d_h, m)]
            seeds = sorted({r["seed"] for r in theirs})
            ours = [p.runs for p in paths if (p.d, p.H, p.d_h, p.m) == (d, H, d_h, m) and p.runs]
            shapes.append(((d, H, d_h, m), [[r for r in theirs if r["seed"] == s] for s in seeds],
                           ours))
        budgets = [_budget(shape, steps) for shape in PAPER_SHAPES]
        return PaperProtocolSummary(paths, paper_code_comparison(shapes, budgets=budgets),
                                    code["meta"], sum(1 for *_, q in results if q is not None))


STUDIES = (PaperProtocol(),)
