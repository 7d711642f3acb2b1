"""The main job: ``python -m validation reproduce`` builds the report.

Each report section lives in ``validation/sections/<key>.py`` and exposes

* ``KEY`` (top-level key of ``report.json``), ``TITLE``;
* ``build(ctx) -> SectionResult``.

A section's result is cached in ``DIR/.sections/<key>.json`` as soon as it is
finished, so an interrupted ``reproduce`` resumes with the remaining sections
(``--fresh`` recomputes everything).  All files are written atomically.

One :class:`validation.engine.WorkerPool` serves the whole run: sections pass
``executor=ctx.executor`` to ``run_sweep``, so the worker processes (or the
Dask client) start once, at the first trial to compute.  ``report.json``
``meta.sections`` holds each section's wall and CPU time
(docs/sweeps.md#one-pool-for-many-sweeps).
"""
from __future__ import annotations

import importlib
import os
import platform
import sys
import time
from pathlib import Path

from hcizz import __version__

from ._io import atomic_write_json, atomic_write_text, to_jsonable
from .sections.base import Context, SectionResult, docs_href

__all__ = ["SECTIONS", "reproduce", "reproduce_command"]

#: Report sections in order: (key, module).
SECTIONS = [
    ("theory", "validation.sections.theory"),
    ("spectra", "validation.sections.spectra"),
    ("linear_memory", "validation.sections.linear_memory"),
    ("listwise", "validation.sections.listwise"),
    ("factual_recall", "validation.sections.factual_recall"),
    ("token_retrieval", "validation.sections.token_retrieval"),
]


def _load(module):
    return importlib.import_module(module)


def reproduce_command(out="report", *, quick=False, sections=None, fresh=False, seed=0,
                      executor="processes", workers=2, scheduler=None):
    """Return the ``python -m validation reproduce`` command line equivalent to a :func:`reproduce` call.

    It is recorded as ``meta.command`` in ``report.json``.

    Parameters
    ----------
    out : str or Path, optional
        Output folder.
    quick : bool, optional
        Quick mode.
    sections : list of str, optional
        Section keys (``None``: all).
    fresh : bool, optional
        Ignore cached sections.
    seed : int, optional
        Root seed (omitted from the command when 0).
    executor, workers, scheduler : optional
        The worker pool (omitted when the defaults ``"processes"``, 2, None).

    Returns
    -------
    str
        The shell-quoted command line.

    See Also
    --------
    validation.report.reproduce : The call it writes as a command.

    References
    ----------
    docs/index.md#assocmem-documentation

    Examples
    --------
    >>> reproduce_command("my report", quick=True, seed=3)
    "python -m validation reproduce --out 'my report' --quick --seed 3"
    """
    import shlex

    words = ["python", "-m", "validation", "reproduce", "--out", str(out)]
    if quick:
        words.append("--quick")
    if sections is not None:
        words += ["--sections", ",".join(sections)]
    if fresh:
        words.append("--fresh")
    if seed != 0:
        words += ["--seed", str(seed)]
    if executor != "processes":
        words += ["--executor", str(executor)]
    if workers != 2:
        words += ["--workers", str(workers)]
    if isinstance(scheduler, str):
        words += ["--scheduler", scheduler]
    return shlex.join(words)


def _section_docs_line(mod, out):
    """The line linking a section (module attribute ``DOCS``) to its docs page."""
    docs = getattr(mod, "DOCS", None)
    if not docs:
        return ""
    return f"Model, definitions and derivations: [{docs}]({docs_href(docs, out)}).\n\n"


def _cpu_now():
    """(CPU seconds of this process, CPU seconds of its finished children)."""
    try:
        import resource
    except ImportError:  # not POSIX: this process only
        return time.process_time(), 0.0
    me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def _worker_cpu(pool):
    return pool.trial_cpu_seconds if pool is not None and pool.in_workers else 0.0


def reproduce(out="report", *, quick=False, sections=None, fresh=False, seed=0,
              executor="processes", workers=2, scheduler=None):
    """Build ``out/report.md``, ``out/report.json`` and PNG figures.

    Parameters
    ----------
    out : str or Path
        Output folder (created).
    quick : bool
        Quick mode.
    sections : list of str, optional
        Keys to build (default: all available).  Unknown keys raise ValueError.
    fresh : bool
        Ignore cached section results from an earlier (interrupted) run.
    seed : int
        Root seed.
    executor : {"processes", "dask", "inprocess"}
        The one :class:`validation.engine.WorkerPool` every section's sweeps
        run on (started at the first trial to compute, closed at the end).
    workers : int
        Its size (default 2).
    scheduler : str, optional
        Dask scheduler address (``executor="dask"``); None: a LocalCluster of
        ``workers`` processes.

    Returns
    -------
    dict
        The content of ``report.json``. ``meta.sections.<key>`` holds the
        section's ``wall_seconds`` and ``cpu_seconds`` (this process plus the
        workers: ``cpu_seconds_main``, ``cpu_seconds_workers``) and whether it
        was ``cached``; ``meta.total_wall_seconds`` and
        ``meta.total_cpu_seconds`` cover the whole run, worker start-up
        included; ``meta.pool`` the pool's counters.

    Raises
    ------
    ValueError
        On an unknown section, a negative seed, a bad pool setting or an
        output folder that is a file or cannot be created; nothing is written
        then.

    See Also
    --------
    validation.report.reproduce_command : The command line of a call.

    Notes
    -----
    *CPU time.* ``cpu_seconds_main`` is this process's CPU time
    (``getrusage``) during the section; ``cpu_seconds_workers`` adds the CPU
    time spent inside the section's trials on the shared pool's workers (each
    worker measures its trials) and that of any short-lived child processes
    the section started and reaped. The workers' own start-up and idle time
    belongs to no section; it is in ``meta.total_cpu_seconds``, measured after
    the pool has shut down (this process and all its reaped children; with a
    remote Dask scheduler, plus the trials' CPU time on the cluster).

    References
    ----------
    docs/index.md#assocmem-documentation;
    docs/reliability.md#bad-input-classes-and-what-each-gives
    """
    import matplotlib

    matplotlib.use("Agg")
    from .sections.figstyle import apply as apply_figure_style

    apply_figure_style()
    from hcizz.checks import check_int

    if not isinstance(out, (str, os.PathLike)) or str(out) == "":
        raise ValueError(f"out must be a folder path, got {out!r}")
    out = Path(out)
    known = [k for k, _ in SECTIONS]
    if sections is None:
        wanted = known
    else:
        for s in sections:
            if s not in known:
                raise ValueError(f"sections must be a subset of {known}, got {s!r}")
        wanted = [k for k in known if k in sections]
    seed = check_int("seed", seed, low=0)
    from .engine import WorkerPool

    pool = WorkerPool(executor, workers=workers, scheduler=scheduler)  # checks; starts nothing
    from hcizz.cli import check_output_dir

    check_output_dir("out", out)        # '' is no folder; a file, an unwritable place: refused
    # everything is checked before the first file is written
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"out must be a folder that can be created, got {str(out)!r} "
                         f"({exc.strerror})") from None
    cache = out / ".sections"
    ctx = Context(out=out, quick=quick, seed=seed, executor=pool)
    report, md_parts, timings, costs = {}, [], {}, {}
    t_all = time.perf_counter()
    cpu_all = _cpu_now()
    try:
        _build_sections(ctx, wanted, cache, fresh, report, md_parts, timings, costs)
    finally:
        pool.close()
    total = time.perf_counter() - t_all
    cpu_end = _cpu_now()
    total_cpu = (cpu_end[0] - cpu_all[0]) + (cpu_end[1] - cpu_all[1])
    if pool.executor == "dask" and scheduler is not None:  # trials ran on another machine
        total_cpu += pool.trial_cpu_seconds
    meta = {"quick": quick, "seed": seed, "python": platform.python_version(),
            "platform": platform.platform(), "seconds": timings, "total_seconds": total,
            "sections": costs, "total_wall_seconds": total, "total_cpu_seconds": total_cpu,
            "cpus": os.cpu_count(), "load_average": _loadavg(), "pool": pool.to_dict(),
            "command": reproduce_command(out, quick=quick, sections=sections, fresh=fresh,
                                         seed=seed, executor=executor,
                                         workers=pool.workers if workers is None else workers,
                                         scheduler=scheduler),
            "version": __version__}
    report["meta"] = meta
    from .sections.claims import ledger, ledger_markdown
    from .sections.layout import DETAILS_FILE, condense, strip_markers

    report["claims"] = ledger(report)
    generated = (f"Generated by `{meta['command']}` (assocmem {__version__}) "
                 f"({'quick' if quick else 'full'} mode, seed {seed}); "
                 f"every number below is also in `report.json`; commands, store paths, run "
                 f"times and the secondary tables are in [{DETAILS_FILE}]({DETAILS_FILE}).\n\n")
    times = (f"Section run times (s, wall / CPU): "
              + ", ".join(f"{k} {c['wall_seconds']:.1f} / "
                          + ("?" if c.get("cpu_seconds") is None else f"{c['cpu_seconds']:.1f}")
                          + (" (cached)" if c.get("cached") else "")
                          for k, c in costs.items() if c.get("wall_seconds") is not None)
              + f"; whole run {total:.1f} s wall, {total_cpu:.1f} s CPU on "
              + (f"{pool.workers} worker processes" if pool.executor == "processes" else pool.describe())
              + f" (pool started {pool.starts} time(s), {pool.startup_seconds:.1f} s).\n\n")
    atomic_write_json(out / "report.json", report)
    _write_figure_checks(out, ctx.figure_checks)
    from .sections.setup_text import setup_markdown

    setup = setup_markdown(lambda target: docs_href(target, out)) + "\n"
    body = "\n".join(md_parts)
    title = "# Associative-memory capacity: theory vs simulation\n\n"
    atomic_write_text(out / "report.md", title + generated + ledger_markdown(report["claims"]) + "\n"
                      + condense(setup + "\n" + body))
    atomic_write_text(out / DETAILS_FILE,
                      "# Associative-memory capacity: details of the report\n\n"
                      "The full text of every section of [report.md](report.md): how each number "
                      "was produced (commands, stores, run times) and the secondary tables.\n\n"
                      + generated.replace("every number below", "every number") + times
                      + setup + "\n" + strip_markers(body))
    ctx.progress(f"wrote {out / 'report.md'} and {out / 'report.json'} in {total:.1f} s "
                 f"({total_cpu:.1f} s CPU)")
    return to_jsonable(report)


def _write_figure_checks(out, checks):
    """Merge this run's figure checks into ``out/.figure_checks.json`` (figure -> problems)."""
    import json

    path = out / ".figure_checks.json"
    try:
        old = json.loads(path.read_text()) if path.exists() else {}
    except (ValueError, OSError):
        old = {}
    old.update(checks)
    atomic_write_json(path, old)


def _loadavg():
    try:
        return list(os.getloadavg())
    except (AttributeError, OSError):
        return None


def _build_sections(ctx, wanted, cache, fresh, report, md_parts, timings, costs):
    """Build (or reuse) each wanted section; fills the four output containers."""
    out, quick, seed, pool = ctx.out, ctx.quick, ctx.seed, ctx.executor
    for key, modname in SECTIONS:
        if key not in wanted:
            continue
        try:
            mod = _load(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                ctx.progress(f"section {key}: not implemented yet, skipped")
                continue
            raise
        cfile = cache / f"{key}.json"
        cached = None
        if cfile.exists() and not fresh:
            import json

            try:
                cached = json.loads(cfile.read_text())
                if cached.get("quick") != quick or cached.get("seed") != seed:
                    cached = None
                elif not all((out / f).exists() for f in cached.get("figures", [])):
                    cached = None
            except (ValueError, OSError):
                cached = None
        if cached is not None:
            ctx.progress(f"section {key}: reusing finished result from {cfile}")
            res = SectionResult(cached["markdown"], cached["data"], cached["figures"])
            timings[key] = cached.get("seconds")
            costs[key] = {"wall_seconds": cached.get("seconds"),
                          "cpu_seconds": cached.get("cpu_seconds"),
                          "cpu_seconds_main": cached.get("cpu_seconds_main"),
                          "cpu_seconds_workers": cached.get("cpu_seconds_workers"),
                          "cached": True}
        else:
            ctx.progress(f"section {key}: building ({'quick' if quick else 'full'} mode)")
            t0, c0, w0 = time.perf_counter(), _cpu_now(), _worker_cpu(pool)
            res = mod.build(ctx)
            timings[key] = time.perf_counter() - t0
            c1 = _cpu_now()
            main = c1[0] - c0[0]
            workers = (c1[1] - c0[1]) + (_worker_cpu(pool) - w0)
            costs[key] = {"wall_seconds": timings[key], "cpu_seconds": main + workers,
                          "cpu_seconds_main": main, "cpu_seconds_workers": workers, "cached": False}
            atomic_write_json(cfile, {"quick": quick, "seed": seed, "markdown": res.markdown,
                                      "data": to_jsonable(res.data), "figures": res.figures,
                                      "seconds": timings[key], "cpu_seconds": main + workers,
                                      "cpu_seconds_main": main, "cpu_seconds_workers": workers})
            ctx.progress(f"section {key}: done in {timings[key]:.1f} s wall, "
                         f"{main + workers:.1f} s CPU ({workers:.1f} s in workers)")
        report[key] = res.data
        md_parts.append(f"## {mod.TITLE}\n\n{_section_docs_line(mod, out)}{res.markdown.strip()}\n")
