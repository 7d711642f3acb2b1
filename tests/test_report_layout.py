"""report.md against report_details.md: what condense keeps of each part (hand-written inputs)."""
from validation.sections.layout import KEY_TABLE_ROWS, condense, strip_markers


def _table(rows, cols=3):
    head = "| " + " | ".join(f"c{i}" for i in range(cols)) + " |\n|" + "---|" * cols
    return head + "".join("\n| " + " | ".join(str(r) for _ in range(cols)) + " |" for r in range(rows))


def test_keeps_result_figure_and_short_table_and_links_the_rest():
    md = ("### Part one\n\nMethod sentence. Run `python -m validation study x` for it.\n\n"
          f"{_table(3)}\n\n![fig](a.png)\n\n**Verdict** the result.\n\nA secondary paragraph.\n\n"
          f"{_table(2)}\n")
    out = condense(md)
    assert "**Verdict** the result." in out                 # the bold reading is the result
    assert "Method sentence" not in out and "A secondary" not in out
    assert out.count("| c0 |") == 1                          # the first (key) table only
    assert "![fig](a.png)" in out
    assert out.rstrip().endswith("*Details: [Part one](report_details.md#part-one).*")


def test_long_or_wide_first_table_goes_to_the_details():
    long_md = f"### T\n\nText.\n\n{_table(KEY_TABLE_ROWS + 1)}\n"
    wide_md = f"### T\n\nText.\n\n{_table(2, cols=11)}\n"
    for md in (long_md, wide_md):
        out = condense(md)
        assert "| c0 |" not in out and "Details:" in out


def test_commands_stores_and_timings_are_left_out_of_the_paragraph():
    md = ("### T\n\nThe threshold agrees. Regenerate with `python -m validation study x`. "
          "Stored in `a.jsonl`. It took 3 s wall and 2 s CPU. The end (code: `a/b.py`).\n")
    out = condense(md)
    assert "The threshold agrees." in out and "The end." in out
    assert "python -m" not in out and ".jsonl" not in out and "CPU" not in out and ".py" not in out


def test_markers_force_main_and_details():
    md = "### T\n\n<!-- details -->\nMethods.\n\n<!-- main -->\nResult.\n"
    out = condense(md)
    assert "Result." in out and "Methods." not in out and "<!--" not in out
    assert strip_markers(md) == "### T\n\nMethods.\n\nResult.\n"


def test_a_part_with_everything_kept_has_no_details_link():
    assert condense("### T\n\nOnly a result.\n") == "### T\n\nOnly a result.\n"


def test_an_aside_about_a_store_is_dropped_without_breaking_the_sentence():
    # the aside holds semicolons and a nested parenthesis; the sentence around it stays
    md = ("### T\n\n**Trained** (Adam; the same instances; read from `a.jsonl` (quick)): the threshold "
          "agrees; 'paired' counts both.\n")
    out = condense(md)
    assert "**Trained**: the threshold agrees; 'paired' counts both." in out
    assert ".jsonl" not in out and "Details:" in out
    kept = out.split("\n\n")[1]
    assert kept.count("(") == kept.count(")")


def test_sentences_do_not_end_inside_parentheses_or_code():
    # a how-sentence after a parenthesis with a semicolon: the parenthesis stays whole
    md = ("### T\n\nIt differs by 0.01 (2.5 sigma; the saddle is the cheap estimate). "
          "Run `python -m x; y` again.\n")
    out = condense(md)
    assert "It differs by 0.01 (2.5 sigma; the saddle is the cheap estimate)." in out
    assert "python -m" not in out


def test_links_and_unbalanced_text_are_left_alone():
    md = "### T\n\nSee [the store](a.jsonl) for it. An open (aside; never closed.\n"
    out = condense(md)
    assert "See [the store]" not in out                       # the link's sentence is a how-sentence
    assert "An open (aside" in out                            # unbalanced: plain split, nothing lost
