"""The package layers: ``hcizz`` <- ``replica`` <- ``validation``, and no package
imports another package's private (underscore) names."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hcizz", "replica", "validation")
#: what each package may import from the others
ALLOWED = {"hcizz": set(), "replica": {"hcizz"}, "validation": {"hcizz", "replica"}}


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []


def violations(package, paths, root=ROOT):
    """Layer violations and cross-package private imports in ``paths``."""
    bad = []
    for path in paths:
        for line, module, names in _imports(path):
            top = module.split(".")[0]
            if top not in PACKAGES or top == package:
                continue
            where = f"{path.relative_to(root)}:{line}: {module} {names}"
            if top not in ALLOWED[package]:
                bad.append("layer violation " + where)
            if any(part.startswith("_") for part in module.split(".")[1:]) or \
                    any(n.startswith("_") and not n.startswith("__") for n in names):
                bad.append("private name " + where)
    return bad


@pytest.mark.parametrize("package", PACKAGES)
def test_layers_and_private_names(package):
    bad = violations(package, sorted((ROOT / package).rglob("*.py")))
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from hcizz._checks import check_int\nimport validation.engine\n")
    bad = violations("replica", [f], root=tmp_path)
    assert len(bad) == 2
    assert bad[0].startswith("private name") and bad[1].startswith("layer violation")
