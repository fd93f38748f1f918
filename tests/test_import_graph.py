"""No import circle in harness/, and harness/ never imports the development tools.

The graph comes from the source (ast), not from importing it: every ``import`` and
``from … import`` of a harness module, absolute or relative, at any depth (a function's
lazy import counts: it runs too). Imports under ``if TYPE_CHECKING:`` count as well,
since a circle a type checker must break is still a circle of the design; they are
kept apart only to say which kind an edge is in the failure message.
"""

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "harness"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement, with whether it sits under ``if TYPE_CHECKING:``."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, typing_only))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, typing_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, typing_only)

    visit(tree, False)
    return found


def import_graph(root: Path) -> dict[str, dict[str, str]]:
    """module → {imported module: "runtime" | "TYPE_CHECKING"} within the package at root."""
    top = root.name
    files = {module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, dict[str, str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, str] = {}
        for node, typing_only in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from pkg import sub` imports the submodule when there is one.
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in files else module
                           for a in node.names]
            for target in targets:
                while target and target not in files and target.startswith(top):
                    target = target.rpartition(".")[0]  # `import a.b.c` of a name in a.b
                if target in files and target != name:
                    kind = "TYPE_CHECKING" if typing_only else "runtime"
                    if edges.get(target) != "runtime":
                        edges[target] = kind
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def describe(graph: dict[str, dict[str, str]], component: list[str]) -> str:
    return "; ".join(f"{a} -> {b} ({graph[a][b]})" for a in component for b in graph[a]
                     if b in component)


def test_harness_has_no_import_circle():
    graph = import_graph(HARNESS)
    assert "harness.session" in graph and "harness.tools.base" in graph["harness.agent"]
    assert [describe(graph, c) for c in cycles(graph)] == []


def test_harness_never_imports_the_tooling_or_the_sandbox_runner():
    for path in HARNESS.rglob("*.py"):
        for node, _ in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if node.level == 0 else [])
            assert not any(n.split(".")[0] in {"tooling", "pyexec"} for n in names), path


def test_a_circle_is_found_relative_absolute_and_under_type_checking(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    import pkg.c\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (pkg / "d.py").write_text("from pkg.sub.b import f\n")  # imports into the circle only
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b": "runtime"}
    assert graph["pkg.c"] == {"pkg.a": "TYPE_CHECKING"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (pkg / "c.py").write_text("")
    assert cycles(import_graph(pkg)) == []
