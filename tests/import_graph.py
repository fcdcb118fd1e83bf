"""The package's import graph, read from the source with `ast` (nothing is imported).

Every `import` and `from ... import` of an `agenteval` module counts, including those inside
functions (a lazy import is still a dependency); imports under `if TYPE_CHECKING:` do not
(they are annotations only). `python -m tests.import_graph` prints the packages and arrows.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "agenteval"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, here: str, is_package: bool) -> Iterator[str]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (name for child in node.orelse for name in _imports(child, here, is_package))
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = here.split(".") if is_package else here.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base]) if base else ".".join(package)
            yield base
            yield from (f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
        yield from _imports(node, here, is_package)


@functools.cache
def module_graph() -> Mapping[str, frozenset[str]]:
    """Module → the agenteval modules it imports. Parsed once a process (every file of the
    package, ~1.5 s of CPU; the tests of `test_architecture` asked for it 29 times a run),
    so it is read-only."""
    files = {module_name(p): p for p in (SRC / ROOT).rglob("*.py")}
    graph: dict[str, frozenset[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = _imports(tree, name, path.name == "__init__.py")
        graph[name] = frozenset(t for t in targets if t in files and t != name)
    return MappingProxyType(graph)


def package_of(module: str) -> str:
    """`agenteval.criteria.judge.base` → `criteria`; a top-level module is its own package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def package_graph(graph: Mapping[str, frozenset[str]] | None = None) -> dict[str, set[str]]:
    """Package → the packages it imports (arrows between distinct packages only)."""
    graph = module_graph() if graph is None else graph
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        src = package_of(module)
        out.setdefault(src, set())
        out[src] |= {package_of(t) for t in targets if package_of(t) != src}
    return out


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
            visit(v)
    return found


def main() -> None:
    modules = module_graph()
    packages = package_graph(modules)
    arrows = sum(len(t) for t in packages.values())
    print(f"{len(modules)} modules, {sum(len(t) for t in modules.values())} module imports; "
          f"{len(packages)} packages, {arrows} package arrows")
    for pkg in sorted(packages):
        print(f"  {pkg} -> {', '.join(sorted(packages[pkg])) or '-'}")
    for kind, graph in (("module", modules), ("package", packages)):
        for component in cycles(graph):
            print(f"  {kind} circle: {' <-> '.join(component)}")


if __name__ == "__main__":
    main()
