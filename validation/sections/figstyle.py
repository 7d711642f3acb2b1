"""One style for every report figure, and the checks a figure must pass before it is saved.

* :func:`apply` sets the style (mathtext labels, fonts of at least 9 pt at 100 %, no boxed
  legends over data); :meth:`validation.sections.base.Context.savefig` applies it to every figure
  it saves, next to a PDF (vector) copy of the PNG (150 dpi).
* :func:`legend_outside` puts an axes' legend to the right of its data; :func:`legend_below`
  gives a figure of several panels one legend below them.
* :func:`wilson_interval` gives the interval to draw for a probability estimated from ``k``
  successes of ``n`` (never outside [0, 1], unlike the Wald interval).
* :func:`figure_problems` lists the axes of a figure without both axis labels or without data,
  and every legend drawn over an axes (:func:`legend_problems`).
"""
from __future__ import annotations

__all__ = ["RC", "MIN_FONT", "apply", "legend_outside", "legend_below", "wilson_interval", "figure_problems",
           "THEORY_ZORDER", "enforce_min_font", "legend_problems"]

#: The smallest font size (points) any text of a report figure gets.
MIN_FONT = 9.0
#: Theory curves are drawn over the measurements.
THEORY_ZORDER = 4

#: The report's matplotlib style.
RC = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "figure.titlesize": 11,
    "mathtext.fontset": "dejavusans",
    "legend.framealpha": 0.85,
    "savefig.dpi": 150,
}


def apply():
    """Set the report style in matplotlib's rcParams (call before drawing).

    Returns
    -------
    dict
        The parameters set (:data:`RC`).

    References
    ----------
    docs/quickstart.md#4-the-report

    Examples
    --------
    >>> import matplotlib
    >>> _ = apply()
    >>> matplotlib.rcParams["legend.fontsize"] >= MIN_FONT
    True
    """
    import matplotlib

    matplotlib.rcParams.update(RC)
    return dict(RC)


def enforce_min_font(fig, minimum=MIN_FONT):
    """Raise every text of a figure smaller than ``minimum`` points to ``minimum``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    minimum : float, optional
        Smallest size in points.

    Returns
    -------
    int
        How many texts were enlarged.

    References
    ----------
    docs/quickstart.md#4-the-report
    """
    from matplotlib.text import Text

    n = 0
    for t in fig.findobj(Text):
        if t.get_text() and t.get_fontsize() < minimum:
            t.set_fontsize(minimum)
            n += 1
    return n


def legend_outside(ax, below=False, **kwargs):
    """Draw an axes' legend outside its plotting area: right of it, or below its x labels.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes.
    below : bool, optional
        Centre the legend under the axes, under its tick labels and x label (measured
        once here, in inches, so that the gap survives a later ``tight_layout``), instead
        of to the right of the axes.
    **kwargs
        Passed to ``ax.legend`` (``ncol``, ...).

    Returns
    -------
    matplotlib.legend.Legend or None
        None when the axes has no labelled artist.

    References
    ----------
    docs/quickstart.md#4-the-report
    """
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0,
          "fontsize": RC["legend.fontsize"]}
    if below:
        from matplotlib.transforms import ScaledTranslation

        fig = ax.figure
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        frame = ax.get_window_extent(renderer)
        parts = [b for b in (ax.xaxis.get_tightbbox(renderer),) if b is not None]
        bottom = min([frame.y0] + [b.y0 for b in parts])
        drop = (frame.y0 - bottom) / fig.dpi + 0.06          # inches below the frame
        kw.update(loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=ax.transAxes + ScaledTranslation(0, -drop, fig.dpi_scale_trans))
    kw.update(kwargs)
    return ax.legend(handles, labels, **kw)


def legend_below(fig, axes=None, ncol=2, **kwargs):
    """Draw one legend for a whole figure, centred below its panels.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; it is given the constrained layout (which makes room for the legend)
        unless it has a layout engine already.
    axes : matplotlib.axes.Axes or sequence of Axes, optional
        Whose labelled artists the legend lists (default: every axes of ``fig``); a label
        met twice is listed once.
    ncol : int, optional
        Number of legend columns.
    **kwargs
        Passed to ``matplotlib.figure.Figure.legend``, over the defaults
        (``loc="outside lower center"``, the report's legend font).

    Returns
    -------
    matplotlib.legend.Legend or None
        The figure legend (in ``fig.legends``); None when no axes has a labelled artist.

    References
    ----------
    docs/quickstart.md#4-the-report
    """
    if axes is None:
        axes = fig.axes
    elif not isinstance(axes, (list, tuple)):
        axes = [axes]
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if not seen:
        return None
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    kw = {"loc": "outside lower center", "ncol": ncol, "fontsize": RC["legend.fontsize"]}
    kw.update(kwargs)
    return fig.legend(list(seen.values()), list(seen), **kw)


def wilson_interval(k, n, level=0.95):
    """Wilson score interval of a binomial proportion.

    Parameters
    ----------
    k : array_like of int
        Successes.
    n : array_like of int
        Trials (positive).
    level : float, optional
        Confidence level.

    Returns
    -------
    (ndarray, ndarray)
        Lower and upper ends, inside [0, 1].

    Raises
    ------
    ValueError
        If some ``n <= 0`` or ``k`` is outside ``[0, n]``.

    Notes
    -----
    With :math:`\\hat p = k/n` and :math:`z` the normal quantile,

    .. math:: \\frac{\\hat p + z^2/(2n) \\pm z\\sqrt{\\hat p(1-\\hat p)/n + z^2/(4n^2)}}{1 + z^2/n}.

    References
    ----------
    Wilson (1927), J. Am. Stat. Assoc. 22, 209; docs/quickstart.md#4-the-report

    Examples
    --------
    >>> lo, hi = wilson_interval(0, 2)
    >>> print(f"{float(lo):.3f} {float(hi):.3f}")
    0.000 0.658
    """
    import numpy as np
    from scipy.stats import norm

    k = np.asarray(k, float)
    n = np.asarray(n, float)
    if np.any(n <= 0):
        raise ValueError(f"n must be positive, got {n.tolist()!r}")
    if np.any((k < 0) | (k > n)):
        raise ValueError(f"k must lie in [0, n], got k={k.tolist()!r}, n={n.tolist()!r}")
    z = norm.ppf(0.5 + level / 2)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    # k = 0 and k = n give exactly 0 and 1 (rounding would leave 1e-17 on the wrong side)
    lo = np.where(k == 0, 0.0, np.clip(mid - half, 0.0, 1.0))
    hi = np.where(k == n, 1.0, np.clip(mid + half, 0.0, 1.0))
    return lo, hi


def _has_data(ax):
    return bool(ax.lines or ax.collections or ax.images or ax.patches or ax.containers)


def _label(ax, which):
    get = ax.get_xlabel if which == "x" else ax.get_ylabel
    if get():
        return True
    shared = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    if any((s.get_xlabel() if which == "x" else s.get_ylabel()) for s in shared.get_siblings(ax)):
        return True
    fig = ax.figure
    sup = getattr(fig, "_supxlabel" if which == "x" else "_supylabel", None)
    return bool(sup is not None and sup.get_text())


def _legends(fig):
    """``(name, legend)`` for every visible legend of a figure: axes legends, then figure legends."""
    out = []
    for i, ax in enumerate(fig.axes):
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            out.append((f"legend of axes {i}", leg))
    out.extend((f"figure legend {j}", leg) for j, leg in enumerate(fig.legends) if leg.get_visible())
    return out


def _overlap(a, b, slack=0.5):
    """Whether two display boxes share more than ``slack`` pixels in both directions."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > slack and h > slack


def legend_problems(fig):
    """The legends of a figure drawn over the data area or the axis labels of an axes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (it is laid out here, without rendering, so that the boxes are final).

    Returns
    -------
    list of str
        One line per legend and axes it covers (``"legend of axes 0 covers the data of axes 0"``,
        ``"figure legend 0 covers the labels of axes 1"``, ``"legend of axes 0 covers legend
        of axes 1"``). The data area of an axes is its
        window extent (the frame); its labels are the tick labels and axis labels of both axes.
        Axes drawn without axis (``set_axis_off``) hold nothing a legend could cover.

    See Also
    --------
    figure_problems : Every check of a report figure, this one included (with an example).

    References
    ----------
    docs/quickstart.md#4-the-report
    """
    legends = _legends(fig)
    if not legends:
        return []
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    out = []
    for name, leg in legends:
        box = leg.get_window_extent(renderer)
        for i, ax in enumerate(fig.axes):
            if not ax.get_visible() or not ax.axison:
                continue
            if _overlap(box, ax.get_window_extent(renderer)):
                out.append(f"{name} covers the data of axes {i}")
                continue
            labels = [b for b in (ax.xaxis.get_tightbbox(renderer), ax.yaxis.get_tightbbox(renderer))
                      if b is not None]
            if any(_overlap(box, b) for b in labels):
                out.append(f"{name} covers the labels of axes {i}")
    for k, (name, leg) in enumerate(legends):
        for other, leg2 in legends[k + 1:]:
            if _overlap(leg.get_window_extent(renderer), leg2.get_window_extent(renderer)):
                out.append(f"{name} covers {other}")
    return out


def figure_problems(fig):
    """The axes of a figure that lack data or an axis label.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.

    Returns
    -------
    list of str
        One line per problem (``"axes 2 (title): no data"``, ``"... no y label"``,
        then the lines of :func:`legend_problems`);
        colour bars are checked for their label only; an axis label counts when
        the axes shares that axis with a labelled one (a grid labelled on its
        outer edge) or the figure has a ``supxlabel`` / ``supylabel``.

    References
    ----------
    docs/quickstart.md#4-the-report

    Examples
    --------
    >>> from matplotlib import pyplot
    >>> fig, (a, b) = pyplot.subplots(1, 2)
    >>> _ = a.plot([0, 1], [0, 1], label="y = x"); _ = a.set(xlabel="x", ylabel="y")
    >>> _ = a.legend(loc="upper left")           # inside the frame
    >>> for line in figure_problems(fig):
    ...     print(line)
    axes 1: no data
    axes 1: no x label
    axes 1: no y label
    legend of axes 0 covers the data of axes 0
    >>> _ = legend_outside(a)                    # right of the frame, but over the next panel
    >>> figure_problems(fig)[3:]
    ['legend of axes 0 covers the data of axes 1']
    >>> pyplot.close(fig)
    """
    out = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        name = f"axes {i}" + (f" ({ax.get_title()})" if ax.get_title() else "")
        if ax.get_label() == "<colorbar>":
            if not (ax.get_ylabel() or ax.get_xlabel()):
                out.append(f"{name}: colour bar without a label")
            continue
        if not _has_data(ax):
            out.append(f"{name}: no data")
        for w in ("x", "y"):
            if not _label(ax, w):
                out.append(f"{name}: no {w} label")
    return out + legend_problems(fig)

