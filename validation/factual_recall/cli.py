"""``python -m validation factual-recall {memory,transformer,tradeoff,sequential}``.

The command only parses: the experiment, the seed and the output path are
checked by :func:`validation.factual_recall.experiments.run_experiment`
before any work (one line on stderr and exit status 2 on bad input).
"""
from __future__ import annotations

from validation._io import dumps
from validation._docparams import fill_doc

EXPERIMENTS = ("memory", "transformer", "tradeoff", "sequential")


@fill_doc
def register(sub):
    """Add ``python -m validation factual-recall`` to an ``argparse`` subparsers object.

    %(register_params)s

    Returns
    -------
    argparse.ArgumentParser
        The ``factual-recall`` parser.

    %(ref_experiments)s
    """
    p = sub.add_parser("factual-recall",
                       help="factual recall in one-layer transformers (docs/factual_recall.md)")
    p.add_argument("experiment", choices=EXPERIMENTS,
                   help="memory: associative-memory capacity; transformer: facts vs params; "
                        "tradeoff: attention/MLP map; sequential: relation-before-subject")
    p.add_argument("--quick", action="store_true", help="small sizes (seconds to a minute)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.set_defaults(func=_run)
    return p


def _run(args):
    from . import experiments as ex

    res = ex.run_experiment(args.experiment, quick=args.quick, seed=args.seed, out=args.out)
    print(dumps(res) if args.json else summary(args.experiment, res))
    return 0


@fill_doc
def summary(experiment, res):
    """Format a short human-readable summary of one experiment's result.

    Parameters
    ----------
    experiment : {"memory", "transformer", "tradeoff", "sequential"}
        The experiment.
    res : dict
        Its JSON result (with ``command`` and ``seconds_total``).

    Returns
    -------
    str
        A few lines of text.

    %(ref_experiments)s
    """
    lines = [f"{res['command']}  ({res['seconds_total']:.1f} s)"]
    if experiment == "memory":
        f1, f2 = res["linear_fit"], res["mlp_fit"]
        lines += [f"linear d={r['d']}: N={r['N']}  N lnN/d^2={r['c']:.3f}" for r in res["linear"]]
        lines.append(f"fit N ln N = c d^2: c = {f1['value']:.3f} +- {f1['stderr']:.3f}")
        lines += [f"mlp d={r['d']} m={r['m']}: N={r['N']}  N/(md)={r['c']:.3f}" for r in res["mlp"]]
        lines.append(f"fit N = c m d ({res['mlp_classes']} classes): c = {f2['value']:.3f} "
                     f"+- {f2['stderr']:.3f}")
    elif experiment == "transformer":
        for r in res["rows"]:
            lines.append(f"d={r['d']} H={r['H']} d_h={r['d_h']} m={r['m']}: params={r['params']} "
                         f"facts={r['facts']} facts/param={r['facts_per_param']:.4f}")
        f = res["facts_per_param"]
        lines.append(f"facts per parameter: {f['value']:.4f} +- {f['stderr']:.4f} (ratios "
                     f"{f['info']['ratio_min']:.4f}..{f['info']['ratio_max']:.4f}); paper "
                     f"~{res['paper_facts_per_param']:g}")
    elif experiment == "tradeoff":
        lines.append(f"{res['facts']} facts, d={res['d']}; rows H={res['H']}, columns m={res['m']}")
        for H, row in zip(res["H"], res["accuracy"]):
            lines.append(f"H={H}: " + " ".join(f"{a:.3f}" for a in row))
    else:
        st = res["stages"]
        lines.append(f"S={res['S']} R={res['R']} D={res['D']}: relation learnt at step "
                     f"{st['relation_learnt']}, subject at {st['subject_learnt']} ({st['order']})")
        lines.append(f"plateau 1 {st['plateau1']:.3f} (ln DR = {res['ln_DR']:.3f}); plateau 2 "
                     f"{st['plateau2']} (ln D = {res['ln_D']:.3f}); final {st['final']:.4f}")
    return "\n".join(lines)
