"""Report framework: section assembly, JSON content, resume after interruption, CLI errors."""
import json
import subprocess
import sys
import types

import pytest

from validation import report as rep


def _fake_section(key, calls, fail=False):
    mod = types.ModuleType(f"fake_{key}")
    mod.KEY, mod.TITLE = key, f"Fake {key}"

    def build(ctx):
        calls.append(key)
        if fail:
            raise KeyboardInterrupt  # an interruption in the middle of the run
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        name = ctx.savefig(fig, f"{key}.png")
        return rep.SectionResult(f"value **{len(calls)}**\n\n![fig]({name})",
                                 {"value": float(len(calls)), "nan": float("nan")}, [name])

    mod.build = build
    return mod


@pytest.fixture
def fake_sections(monkeypatch):
    calls, mods = [], {}
    monkeypatch.setattr(rep, "SECTIONS", [("a", "fake_a"), ("b", "fake_b")])
    monkeypatch.setattr(rep, "_load", lambda name: mods[name])
    return calls, mods


def test_report_written_with_one_key_per_section(tmp_path, fake_sections):
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls))
    data = rep.reproduce(tmp_path, quick=True)
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved == data
    assert set(saved) == {"a", "b", "meta"}
    assert saved["a"]["value"] == 1.0 and saved["b"]["value"] == 2.0
    assert saved["a"]["nan"] == "nan"  # strict JSON: NaN written as the string "nan" (hcizz.jsonout)
    md = (tmp_path / "report.md").read_text()
    assert "## Fake a" in md and "## Fake b" in md and "(a.png)" in md
    assert (tmp_path / "a.png").stat().st_size > 0


def test_interrupted_run_resumes_without_recomputing(tmp_path, fake_sections):
    calls, mods = fake_sections
    mods.update(fake_a=_fake_section("a", calls), fake_b=_fake_section("b", calls, fail=True))
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce(tmp_path, quick=True)
    assert calls == ["a", "b"]
    assert not (tmp_path / "report.json").exists()
    mods["fake_b"] = _fake_section("b", calls)
    rep.reproduce(tmp_path, quick=True)
    assert calls == ["a", "b", "b"]  # a reused, b computed once more
    # another mode does not reuse the cache
    rep.reproduce(tmp_path, quick=False, sections=["a"])
    assert calls[-1] == "a"
    # --fresh recomputes
    n = len(calls)
    rep.reproduce(tmp_path, quick=False, sections=["a"], fresh=True)
    assert len(calls) == n + 1


def test_unknown_section_is_value_error(tmp_path, fake_sections):
    with pytest.raises(ValueError, match="sections must be a subset"):
        rep.reproduce(tmp_path, sections=["nope"])


def test_cli_error_is_one_line_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "validation", "reproduce", "--sections", "nope",
                        "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "sections" in r.stderr
    r = subprocess.run([sys.executable, "-m", "validation", "no-such-command"],
                       capture_output=True, text=True)
    assert r.returncode == 2
