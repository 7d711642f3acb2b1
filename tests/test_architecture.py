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


# ----------------------------------------------------------------- layers inside validation
#: Layer of each part of ``validation`` (longest prefix wins): a module may import modules of
#: its own layer only inside its own package, and any module of a lower layer.  Infrastructure
#: (engine, atomic I/O) knows no experiment; the shared fits and optimisers sit above it; the
#: experiment packages hold data, models, training, trials, fits and theory adaptors (factual
#: recall may use the linear memories); studies sit on the library; the report's sections and
#: its driver only render.
INNER_LAYERS = {
    "validation._threads": 0, "validation._io": 0, "validation._memory": 0,
    "validation.engine": 1,
    "validation.losses": 2, "validation.optim": 2, "validation.logistic": 2, "validation.adaptive": 2,
    "validation.linear_memory": 3,
    "validation.factual_recall": 4, "validation.token_retrieval": 4,
    "validation.studies": 5,
    "validation.sections": 6, "validation.report": 7, "validation.report_cli": 8,
    "validation.__main__": 9,
}


def _layer(module):
    best = None
    for prefix, layer in INNER_LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return best


def _module_name(path, root=ROOT):
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute_imports(path, root=ROOT):
    """Every import of ``path`` (module level and inside functions) as absolute module names."""
    name = _module_name(path, root)
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module
            for a in node.names:          # "from pkg import submodule" imports the submodule
                yield node.lineno, mod, f"{mod}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, a.name


def _validation_modules(root=ROOT):
    return {_module_name(p, root): p for p in sorted((root / "validation").rglob("*.py"))}


def inner_violations(root=ROOT):
    mods = _validation_modules(root)
    bad = []
    for name, path in mods.items():
        me = _layer(name)
        if me is None:
            continue
        for line, mod, sub in _absolute_imports(path, root):
            target = sub if sub in mods else mod
            if not target or not target.startswith("validation"):
                continue
            other = _layer(target)
            if other is None or other[0] == me[0]:
                continue
            if other[1] > me[1] or (other[1] == me[1]):
                bad.append(f"{path.relative_to(root)}:{line}: {me[0]} (layer {me[1]}) imports "
                           f"{target} (layer {other[1]})")
    return bad


def import_cycles(root=ROOT):
    """Cycles of the import graph between validation's modules (function-level imports included)."""
    mods = _validation_modules(root)
    graph = {}
    for name, path in mods.items():
        deps = set()
        for _, mod, sub in _absolute_imports(path, root):
            t = sub if sub in mods else mod
            if t in mods and t != name and not name.startswith(t + ".") and t != "validation":
                deps.add(t)
        graph[name] = deps
    # Tarjan's strongly connected components
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return out


def test_layers_inside_validation():
    bad = inner_violations()
    assert not bad, "\n".join(bad)


def test_no_import_cycles_inside_validation():
    cycles = import_cycles()
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_inner_checks_see_a_violation_and_a_cycle(tmp_path):
    pkg = tmp_path / "validation"
    (pkg / "engine").mkdir(parents=True)
    (pkg / "linear_memory").mkdir()
    for p in (pkg, pkg / "engine", pkg / "linear_memory"):
        (p / "__init__.py").write_text("")
    (pkg / "engine" / "core.py").write_text("def f():\n    from validation.linear_memory import a\n")
    (pkg / "linear_memory" / "a.py").write_text("from .b import x\n")
    (pkg / "linear_memory" / "b.py").write_text("def g():\n    from . import a\n")
    bad = inner_violations(tmp_path)
    assert len(bad) == 1 and "engine (layer 1) imports validation.linear_memory" in bad[0]
    assert import_cycles(tmp_path) == [["validation.linear_memory.a", "validation.linear_memory.b"]]
