"""A report figure's legend lies outside the data: the check that :meth:`Context.savefig` runs.

The oracle is geometry fixed by construction: a legend placed with ``loc="upper left"`` inside an
axes lies inside that axes' frame; one anchored right of the frame lies outside it, and one
anchored just below the frame lies over the x tick labels.  The check
(:func:`validation.sections.figstyle.legend_problems`, part of ``figure_problems``) must flag the
first and third and pass the second, and must see a right-hand legend that runs into the next
panel.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from validation.sections.figstyle import figure_problems, legend_outside, legend_problems  # noqa: E402


def _panel(ax, label="measured"):
    ax.plot([0, 1, 2], [0, 1, 4], "o", label=label)
    ax.set(xlabel="x", ylabel="y")


def test_a_legend_inside_the_axes_is_a_figure_problem():
    fig, ax = plt.subplots()
    _panel(ax)
    ax.legend(loc="upper left")
    assert figure_problems(fig) == ["legend of axes 0 covers the data of axes 0"]
    plt.close(fig)


def test_a_legend_right_of_the_axes_passes():
    fig, ax = plt.subplots()
    _panel(ax)
    legend_outside(ax)
    assert figure_problems(fig) == []
    plt.close(fig)


def test_a_legend_over_the_tick_labels_is_flagged():
    fig, ax = plt.subplots()
    _panel(ax)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.01))
    assert legend_problems(fig) == ["legend of axes 0 covers the labels of axes 0"]
    plt.close(fig)


def test_a_legend_running_into_the_next_panel_is_flagged():
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3))
    _panel(a, label="a long legend entry that runs into the next panel")
    _panel(b)
    legend_outside(a)
    problems = legend_problems(fig)
    assert "legend of axes 0 covers the data of axes 1" in problems
    assert not any("of axes 0 covers the data of axes 0" in p for p in problems)
    plt.close(fig)


def test_a_figure_legend_below_the_panels_passes_and_one_over_them_fails():
    fig, (a, b) = plt.subplots(1, 2, figsize=(6, 3), constrained_layout=True)
    _panel(a)
    _panel(b)
    h, lab = a.get_legend_handles_labels()
    fig.legend(h, lab, loc="outside lower center")
    assert legend_problems(fig) == []
    fig.legends[0].remove()
    fig.legend(h, lab, loc="center")
    assert legend_problems(fig)
    plt.close(fig)
