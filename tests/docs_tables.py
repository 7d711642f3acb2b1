"""Reading the typed tables of a docs page that tests check against the stores.

A checked table sits between ``<!-- NAME -->`` and ``<!-- /NAME -->``; these helpers return its
body rows as lists of stripped cells and parse the cell formats the pages use.
"""
import re


def table_rows(page, name):
    """Body rows (header and rule left out) of the markdown table between the markers ``name``."""
    text = page.read_text()
    block = text.split(f"<!-- {name} -->", 1)[1].split(f"<!-- /{name} -->", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in block.splitlines() if line.startswith("|") and not line.startswith("|---")][1:]


def interval(cell):
    """``"0.890 [0.883, 0.896]"`` -> ``(0.890, 0.883, 0.896)``."""
    m = re.fullmatch(r"([0-9.]+) \[([0-9.]+), ([0-9.]+)\]", cell)
    assert m, cell
    return tuple(float(x) for x in m.groups())


def plus_minus(cell):
    """``"+0.035 ± 0.014"`` -> ``(0.035, 0.014)``."""
    m = re.fullmatch(r"([+-]?[0-9.]+) ± ([0-9.]+)", cell)
    assert m, cell
    return float(m.group(1)), float(m.group(2))
