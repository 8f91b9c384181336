"""The layering rules, checked on the import graph read from the sources (every ``import``, also
those inside functions, since an import hidden in a function is still a dependency):

- ``core`` never imports ``gui``, ``bench``, Qt or pyqtgraph;
- the GUI's Qt-free state modules (``gui.state``, ``gui.system_deps``) import no Qt, directly or
  through other modules;
- the GUI's layers (``GUI_LAYERS``): state < workers, widgets < export, panels < window; a layer
  never imports one above it (widgets know nothing of panels or the window, panels nothing of the
  window);
- no import cycle between any modules of ``core``, ``gui`` and ``bench``;
- only ``gui.window`` receives the window: no function elsewhere in ``gui`` takes a ``win`` /
  ``window`` parameter or reads ``.win``;
- no module in ``gui`` reads or writes another object's private members (``obj._name``, where obj
  is not ``self``, ``cls`` or ``super()``), except third-party ones listed in ``THIRD_PARTY_PRIVATE``.

``import_graph`` and ``cycles`` are plain functions so a planted violation can be shown to fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import ROOT

QT = ("PySide6", "pyqtgraph", "PyQt5", "PyQt6", "shiboken6")
# the GUI modules that hold state and data only (testable without a display): gui.state.* and these
QT_FREE_EXTRA = ("gui.system_deps",)
# gui package -> the gui packages it may not import (everything above it)
ABOVE_STATE = ("gui.workers", "gui.widgets", "gui.export", "gui.panels", "gui.window", "gui.app")
GUI_LAYERS = {
    "gui.state": ABOVE_STATE,
    "gui.workers": ("gui.widgets", "gui.export", "gui.panels", "gui.window", "gui.app"),
    "gui.widgets": ("gui.workers", "gui.export", "gui.panels", "gui.window", "gui.app"),
    "gui.export": ("gui.workers", "gui.panels", "gui.window", "gui.app"),
    "gui.panels": ("gui.window", "gui.app"),
}
WINDOW_NAMES = ("win", "window", "main_window")
# private members of pyqtgraph objects that have no public accessor (name -> why)
THIRD_PARTY_PRIVATE = {
    "_font": "pyqtgraph AxisItem keeps its tick font only there",
    "_sizeHint": "pyqtgraph LabelItem's size-hint cache, overridden to drop its minimum width",
}


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


def package_graph(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The module graph folded to packages of ``depth`` name parts (``core.decoding.beam`` ->
    ``core.decoding``); an import inside one package is dropped, so a cycle here is a loop between
    folders even when no two modules import each other."""

    def fold(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for module, deps in graph.items():
        here = fold(module)
        out.setdefault(here, set()).update(fold(d) for d in deps if fold(d) != here)
    return out


def forbidden(graph: dict[str, set[str]], layer: str, banned: tuple[str, ...]) -> list[str]:
    """``module -> import`` lines where a module of ``layer`` imports something under ``banned``."""
    return sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        if m == layer or m.startswith(layer + ".")
        for d in deps
        if any(d == b or d.startswith(b + ".") for b in banned)
    )


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every name imported by ``start``, directly or through the modules of ``graph`` it imports."""
    seen, todo = set(), [start]
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def window_receivers(root: Path, package: str = "gui", allowed: str = "gui.window") -> list[str]:
    """``module:line name`` for every function outside ``allowed`` with a window parameter, and
    every ``.win`` read (what a module receiving the window would do)."""
    out = []
    for path in sorted((root / package).rglob("*.py")):
        name = module_name(path, root)
        if name == allowed or name.startswith(allowed + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                out += [f"{name}:{node.lineno} {a.arg}" for a in args if a.arg in WINDOW_NAMES]
            elif isinstance(node, ast.Attribute) and node.attr == "win":
                out.append(f"{name}:{node.lineno} .win")
    return out


def private_reads(root: Path, package: str = "gui") -> list[str]:
    """``module:line expression`` for every ``obj._member`` where obj is not self, cls or super()
    (dunders and :data:`THIRD_PARTY_PRIVATE` excepted)."""
    out = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            v = node.value
            own = (isinstance(v, ast.Name) and v.id in ("self", "cls")) or (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super"
            )
            if not own and node.attr not in THIRD_PARTY_PRIVATE:
                out.append(f"{module_name(path, root)}:{node.lineno} {ast.unparse(node)}")
    return out


def test_core_imports_no_gui_bench_or_qt():
    graph = import_graph(ROOT, ("core",))
    assert forbidden(graph, "core", ("gui", "bench", *QT)) == []


def test_no_import_cycles():
    assert cycles(import_graph(ROOT, ("core", "gui", "bench"))) == []


def test_no_loop_between_core_packages():
    """Each folder of ``core`` imports only folders below it: no two of them import each other,
    directly or around a longer loop (a module-level cycle check misses such loops)."""
    assert cycles(package_graph(import_graph(ROOT, ("core",)))) == []


def test_qt_free_gui_modules_reach_no_qt():
    graph = import_graph(ROOT, ("core", "gui"))
    qt_free = [m for m in graph if m.startswith("gui.state.")] + list(QT_FREE_EXTRA)
    assert "gui.state.view_model" in qt_free and "gui.state.view_spec" in qt_free
    for name in qt_free:
        assert name in graph, name
        qt = sorted(d for d in reachable(graph, name) if d.split(".")[0] in QT)
        assert qt == [], f"{name} reaches {qt}"


def test_gui_layers_import_only_downwards():
    graph = import_graph(ROOT, ("gui",))
    for layer, above in GUI_LAYERS.items():
        assert forbidden(graph, layer, above) == [], layer


RENDERER = ("pyqtgraph",)  # the heatmap renderer: behind gui.widgets and gui.export only
RENDERER_HOME = ("gui.widgets", "gui.export")


def renderer_imports(graph: dict[str, set[str]]) -> list[str]:
    """``module -> import`` lines where a gui module outside :data:`RENDERER_HOME` imports the renderer."""
    outside = {m: d for m, d in graph.items() if not any(m == h or m.startswith(h + ".") for h in RENDERER_HOME)}
    return forbidden(outside, "gui", RENDERER)


def test_the_renderer_is_imported_only_by_widgets_and_export():
    """Panels, the window, workers and state draw through gui.widgets (and its Colormap type):
    swapping the renderer touches those two packages only."""
    assert renderer_imports(import_graph(ROOT, ("gui",))) == []


def window_reaches(root: Path, paths: list[Path]) -> list[str]:
    """``file:line chain`` for every attribute chain on a window variable (``win``, ``window``,
    ``main_window``) longer than one attribute (``win.inputs.text``), and every private attribute
    of the window (``win._on_translated``): what a script does when it reaches past the facade.
    Each chain is reported once, whole (``win.inputs.text.setText``)."""
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or id(node) in inner:
                continue  # only the outermost attribute of a chain
            chain, v = [node.attr], node.value
            while isinstance(v, ast.Attribute):
                chain.append(v.attr)
                v = v.value
            if isinstance(v, ast.Name) and v.id in WINDOW_NAMES and (len(chain) > 1 or chain[0].startswith("_")):
                out.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}")
    return out


def _script_files(root: Path) -> list[Path]:
    gui = [p for p in (root / "gui").rglob("*.py") if "window" not in p.relative_to(root / "gui").parts[:1]]
    return sorted([*gui, *(root / "bench").rglob("*.py"), root / "main.py"])


def test_scripts_drive_the_window_through_its_facade():
    """Outside gui/window (the app's start-up, bench, main.py), the window is used one attribute
    deep and never by a private name: gui.window.facade.WindowFacade has a method for each use."""
    assert window_reaches(ROOT, _script_files(ROOT)) == []


def test_only_the_window_package_receives_the_window():
    assert window_receivers(ROOT) == []


def test_threads_are_made_only_in_gui_workers():
    """QThread is named (created, subclassed) only in gui.workers."""
    out = []
    for path in sorted((ROOT / "gui").rglob("*.py")):
        name = module_name(path, ROOT)
        if not name.startswith("gui.workers"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            out += [f"{name}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "QThread"]
    assert out == []


def test_no_gui_module_touches_another_objects_private_members():
    assert private_reads(ROOT) == []


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
    # two folders importing each other through different modules: no module cycle, a folder loop
    (pkg / "a.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from core import d\n")
    (pkg / "d.py").write_text("from core.sub import b\n")
    graph = import_graph(tmp_path, ("core",))
    assert cycles(graph) == []
    assert cycles(package_graph(graph)) == [["core.d", "core.sub"]]
    gui = tmp_path / "gui"
    for sub in ("widgets", "panels"):
        (gui / sub).mkdir(parents=True)
        (gui / sub / "__init__.py").write_text("")
    (gui / "__init__.py").write_text("")
    (gui / "widgets" / "w.py").write_text("import pyqtgraph as pg\n")
    (gui / "panels" / "p.py").write_text("from pyqtgraph import ColorMap\n")
    assert renderer_imports(import_graph(tmp_path, ("gui",))) == ["gui.panels.p -> pyqtgraph"]
    script = tmp_path / "s.py"
    script.write_text("win.show()\nwin.inputs.text.setText('x')\nwin._on_translated(1)\nwin.go_to_step(2)\n")
    found = window_reaches(tmp_path, [script])
    assert any("win.inputs.text" in f for f in found) and any("win._on_translated" in f for f in found)
    assert not any("go_to_step" in f or "win.show" in f for f in found)


def test_planted_gui_violations_are_caught(tmp_path):
    """Each GUI rule fails on a planted violation: a widget importing a panel, a panel taking
    the window, a panel reading another object's private member."""
    for pkg in ("gui", "gui/widgets", "gui/panels", "gui/window"):
        (tmp_path / pkg).mkdir(parents=True, exist_ok=True)
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "gui/widgets/w.py").write_text("from gui.panels import p\n")
    (tmp_path / "gui/panels/p.py").write_text(
        "class P:\n    def __init__(self, win):\n        self.n = win.heatmap._args\n"
        "        self.f = lambda window: 0\n        self.own = self._own\n        super()._x()\n"
    )
    (tmp_path / "gui/window/main.py").write_text("def build(win):\n    return win._left\n")
    graph = import_graph(tmp_path, ("gui",))
    assert forbidden(graph, "gui.widgets", GUI_LAYERS["gui.widgets"]) == ["gui.widgets.w -> gui.panels.p"]
    assert window_receivers(tmp_path) == ["gui.panels.p:2 win", "gui.panels.p:4 window"]
    assert private_reads(tmp_path) == ["gui.panels.p:3 win.heatmap._args", "gui.window.main:2 win._left"]


def test_one_name_for_each_attention_kind():
    """The attention kinds are named once (core.transformer.kinds); every layer uses those names,
    and the app's views map to them in one registry (gui.state.view_kinds), not in core."""
    from core.analysis import head_stats
    from core.transformer import ablation, kinds
    from core.transformer.kinds import KINDS, AttentionKind
    from gui.state import view_kinds

    assert KINDS == ("enc", "dec", "cross") and AttentionKind.DEC == "dec"
    assert head_stats.KINDS is KINDS and ablation.KINDS is KINDS
    assert not hasattr(kinds, "VIEW_TO_KIND") and not hasattr(AttentionKind, "from_view")
    assert {v.name: v.core_kind for v in view_kinds.all_kinds()} == {
        "encoder": "enc",
        "decoder": "dec",
        "cross": "cross",
        "masks": None,
    }
    assert view_kinds.for_attention(AttentionKind.CROSS).name == "cross"
    import pytest

    with pytest.raises(ValueError, match="the masks view has its own cells"):
        view_kinds.view_at(None, 0, "masks")
