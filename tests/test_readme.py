"""The README's examples are what the program prints (so the README cannot drift).

Every ``console`` block is a list of ``$ command`` lines, each followed by its
expected output; every ``python`` block is a doctest.  Text is compared exactly
(whitespace normalised); numbers are compared numerically: those with three or more significant digits
to one unit in the last digit the README shows, shorter ones exactly: printing rounds to that digit, so two values that differ by
less than a unit in the last place may print as neighbouring digits (e.g. a
quadrature result last-digit-rounded the other way on another platform).
"""
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _blocks(lang):
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def _unit_in_last_place(token):
    mant, _, exp = token.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10.0 ** (-decimals + (int(exp) if exp else 0))


def _significant_digits(token):
    mant = token.lower().partition("e")[0].lstrip("+-").replace(".", "").lstrip("0")
    return len(mant)


def _is_int(token):
    return not any(c in token for c in ".eE")


def same_output(expected, got):
    """True if ``got`` matches ``expected``: equal text around the numbers, and each
    number within one unit of the last digit shown in ``expected``."""
    e_nums, g_nums = _NUM.findall(expected), _NUM.findall(got)
    e_text = " ".join(_NUM.sub("#", expected).split())
    g_text = " ".join(_NUM.sub("#", got).split())
    if e_text != g_text or len(e_nums) != len(g_nums):
        return False
    for e, g in zip(e_nums, g_nums):
        if _is_int(e) != _is_int(g):           # "1" and "1.0" are different outputs
            return False
        # short numbers (< 3 significant digits: parameters, counts, labels) must be exact
        ulp = _unit_in_last_place(e) if _significant_digits(e) >= 3 else 0.0
        if abs(float(e) - float(g)) > ulp * (1 + 1e-9):
            return False
    return True


def test_same_output_is_strict_about_text_and_digits():
    assert same_output("x=0.564189583547756 ok", "x=0.564189583547757  ok")
    assert not same_output("x=0.564189583547756 ok", "x=0.564189583547759 ok")
    assert not same_output("got 1.0", "got 1")        # text differs
    assert not same_output("p=1e+06", "p=2e+06")
    assert same_output("p=1e+06", "p=1e+06")
    assert not same_output("0.9090 [0.8797]", "0.9090 [0.8799]")


def _console_examples():
    cases = []
    for block in _blocks("console"):
        cmd, out = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if cmd:
                    cases.append((cmd, "\n".join(out)))
                cmd, out = line[2:], []
            else:
                out.append(line)
        if cmd:
            cases.append((cmd, "\n".join(out)))
    return cases


CONSOLE = _console_examples()


def test_readme_has_examples():
    assert len(CONSOLE) >= 5 and _blocks("python")


@pytest.mark.parametrize("cmd,expected", CONSOLE, ids=[c for c, _ in CONSOLE])
def test_console_example(cmd, expected):
    env = dict(os.environ)
    cmd = cmd.replace("python -m", f"{sys.executable} -m")
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL, timeout=600)
    # an example shows stdout; an example of an error shows stderr (exit status 2)
    got = r.stdout if r.returncode == 0 else r.stderr
    assert r.returncode in (0, 2), r.stderr[-2000:]
    assert same_output(expected, got), f"README shows:\n{expected}\nprogram prints:\n{got}"


class _NumericChecker(doctest.OutputChecker):
    def check_output(self, want, got, optionflags):
        return same_output(want, got)


def test_python_examples():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(checker=_NumericChecker(), optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(_blocks("python")):
        test = parser.get_doctest(block, {}, f"README.md python block {i}", str(README), 0)
        runner.run(test)
    res = runner.summarize(verbose=False)
    assert res.failed == 0 and res.attempted > 0
