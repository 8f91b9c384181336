"""The layering rules, checked on the import graph read from the sources (every ``import``, also
those inside functions, since an import hidden in a function is still a dependency):

- ``core`` never imports ``gui``, ``bench``, Qt or pyqtgraph;
- the GUI's Qt-free state modules (``QT_FREE``) import no Qt, directly or through other modules;
- no import cycle between any modules of ``core``, ``gui`` and ``bench``.

``import_graph`` and ``cycles`` are plain functions so a planted violation can be shown to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

QT = ("PySide6", "pyqtgraph", "PyQt5", "PyQt6", "shiboken6")
# the GUI modules that hold state and data only (testable without a display)
QT_FREE = ("gui.state.view_model", "gui.state.view_data", "gui.state.derived", "gui.state.compare_data", "gui.state.live_commands",
           "gui.system_deps")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """``{module: imported names}`` for every module under ``packages`` (absolute names; a
    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``)."""
    files = [p for pkg in packages for p in (root / pkg).rglob("*.py")]
    modules = {module_name(p, root): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    parent = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg else 0)]
                    base = ".".join(parent + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    deps.add(full if full in modules else base)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def forbidden(graph: dict[str, set[str]], layer: str, banned: tuple[str, ...]) -> list[str]:
    """``module -> import`` lines where a module of ``layer`` imports something under ``banned``."""
    return sorted(f"{m} -> {d}" for m, deps in graph.items() if m == layer or m.startswith(layer + ".")
                  for d in deps if any(d == b or d.startswith(b + ".") for b in banned))


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every name imported by ``start``, directly or through the modules of ``graph`` it imports."""
    seen, todo = set(), [start]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_core_imports_no_gui_bench_or_qt():
    graph = import_graph(ROOT, ("core",))
    assert forbidden(graph, "core", ("gui", "bench", *QT)) == []


def test_no_import_cycles():
    assert cycles(import_graph(ROOT, ("core", "gui", "bench"))) == []


def test_qt_free_gui_modules_reach_no_qt():
    graph = import_graph(ROOT, ("core", "gui"))
    for name in QT_FREE:
        assert name in graph, name
        qt = sorted(d for d in reachable(graph, name) if d.split(".")[0] in QT)
        assert qt == [], f"{name} reaches {qt}"


def test_a_planted_violation_is_caught(tmp_path):
    pkg = tmp_path / "core"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from core.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from core import a  # hidden in a function\n    import PySide6\n")
    graph = import_graph(tmp_path, ("core",))
    assert cycles(graph) == [["core.a", "core.sub.b"]]
    assert forbidden(graph, "core", QT) == ["core.sub.b -> PySide6"]
    assert "PySide6" in reachable(graph, "core.a")  # through core.sub.b


def test_one_name_for_each_attention_kind():
    """The attention kinds are named once (core.transformer.kinds); every layer uses those names."""
    from core.analysis import head_stats
    from core.transformer import ablation
    from core.transformer.kinds import KINDS, VIEW_TO_KIND, AttentionKind
    from gui.panels import inside as inside_panel
    from gui.state import compare_data, derived

    assert KINDS == ("enc", "dec", "cross") and AttentionKind.DEC == "dec"
    assert AttentionKind.from_view("cross") is AttentionKind.CROSS and AttentionKind.ENC.view == "encoder"
    assert head_stats.KINDS is KINDS and ablation.KINDS is KINDS
    assert derived.CORE_KIND is compare_data.CORE_KIND is inside_panel.CORE_KIND is VIEW_TO_KIND
    import pytest

    with pytest.raises(ValueError, match="not an attention view"):
        AttentionKind.from_view("masks")
