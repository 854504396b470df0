"""The checks sit below what runs them: no import cycle inside patcher.checks, nothing above it imported.

Read from the sources with ``ast``, not by importing them: an import inside
a function or under ``TYPE_CHECKING`` is a dependency all the same (a lazy
import that breaks a cycle hides the cycle, it does not remove it).
What importing the checks loads at once is the module-level imports only.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Mapping

from tests.fixtures_vendor import ROOT

CHECKS = "patcher.checks"
# What runs the checks, or builds on what does: the checks must not reach back up to them.
ABOVE = ("patcher.pipeline", "patcher.cli", "patcher.review", "patcher.authoring", "patcher.manifest")


def modules(root: Path, package: str) -> dict[str, Path]:
    """Return every module of ``package`` under ``root`` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_on_import(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Yield the statements of a module body that run when it is imported (not under ``if TYPE_CHECKING:``)."""
    for statement in body:
        if isinstance(statement, ast.If):
            if not _is_type_checking(statement.test):
                yield from _run_on_import(statement.body)
            yield from _run_on_import(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, *(h.body for h in statement.handlers), statement.orelse,
                          statement.finalbody):
                yield from _run_on_import(block)
        elif isinstance(statement, ast.With):
            yield from _run_on_import(statement.body)
        else:
            yield statement


def imports(name: str, path: Path, known: Mapping[str, Path], *, on_import_only: bool = False,
            packages: bool = False) -> set[str]:
    """Return what ``name`` imports: the modules of ``known`` it names, and outside ones by their top name.

    Every import statement counts, wherever it sits, unless
    ``on_import_only``: then only those that run when the module is
    imported. With ``packages``, the packages above each module it names
    count too (importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``).
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    statements = _run_on_import(tree.body) if on_import_only else ast.walk(tree)
    ours = {known_name.split(".")[0] for known_name in known}
    found: set[str] = set()
    for node in statements:
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            written = node.module or ""
            full = (f"{base}.{written}" if written else base) if node.level else written
            # `from . import x` imports the module x when there is one (its package is only its parent).
            modules_named = [f"{full}.{alias.name}" for alias in node.names if f"{full}.{alias.name}" in known]
            targets = modules_named if len(modules_named) == len(node.names) else [full, *modules_named]
        else:
            continue
        for target in targets:
            if target.split(".")[0] not in ours:
                found.add(target.split(".")[0])
            elif target in known:
                found.add(target)
                while packages and "." in target:
                    target = target.rpartition(".")[0]
                    found.add(target)
    found.discard(name)
    return found


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """Return one import cycle of ``graph`` (its first module repeated at the end), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        path.append(node)
        for imported in sorted(graph.get(node, ())):
            if imported in path:
                return path[path.index(imported):] + [imported]
            if imported not in done:
                cycle = visit(imported, path)
                if cycle:
                    return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start, [])
            if cycle:
                return cycle
    return None


def reached(graph: Mapping[str, set[str]], starts: list[str]) -> set[str]:
    """Return everything ``starts`` import, directly or through each other."""
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        for imported in graph.get(todo.pop(), ()):
            if imported not in seen:
                seen.add(imported)
                todo.append(imported)
    return seen


def _graph(root: Path, package: str, *, on_import_only: bool = False, packages: bool = False) -> dict[str, set[str]]:
    known = modules(root, package)
    return {name: imports(name, path, known, on_import_only=on_import_only, packages=packages)
            for name, path in known.items()}


def _under(name: str, *packages: str) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def _in_checks(name: str) -> bool:
    return _under(name, CHECKS)


def test_the_checks_import_each_other_without_a_cycle() -> None:
    graph = _graph(ROOT, "patcher")
    checks = {name: {m for m in imported if _in_checks(m)} for name, imported in graph.items() if _in_checks(name)}
    assert len(checks) > 10  # the walk found the package's modules
    assert checks["patcher.checks.base"] >= {"patcher.checks.reachability", "patcher.checks.syntax_index"}
    assert find_cycle(checks) is None


def test_nothing_the_checks_import_imports_them_back() -> None:
    graph = _graph(ROOT, "patcher", packages=True)
    checks = [name for name in graph if _in_checks(name)]
    for name in checks:
        assert not {m for m in graph[name] if _under(m, *ABOVE)}, name
    # Through any chain of modules, lazy imports included, nothing outside leads back into the checks.
    outside = {name for name in reached(graph, checks) if name in graph and not _in_checks(name)}
    assert "patcher.shipping.plan" in outside  # the walk follows imports out of the package
    assert not {m for m in outside if _under(m, *ABOVE)}
    assert not {name for name in outside if set(checks) & reached(graph, [name])}


def test_importing_the_checks_loads_no_libcst() -> None:
    # Rules read the stdlib ast; libcst is for the files a patch rewrites.
    graph = _graph(ROOT, "patcher", on_import_only=True, packages=True)
    loaded = reached(graph, [name for name in graph if _in_checks(name)])
    assert "patcher.shipping.plan" in loaded and "ast" in loaded
    assert "libcst" not in loaded
    assert not {m for m in loaded if _under(m, *ABOVE)}


# -- the walk itself, on a package built to hold what the tests above look for --------


def build_lazy_cycle_package(root: Path) -> None:
    """Write ``pkg``, where ``a`` imports ``b`` in a function and under TYPE_CHECKING, and ``b`` imports ``a``.

    The shape the rules' base and reachability had: a cycle that only the
    lazy import keeps from failing; and libcst, imported in a function of
    ``a`` and at module level (guarded) in ``c``, which the package loads.
    """
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .c import C\n")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from .b import B\n\n"
        "def reach():\n"
        "    from .b import B\n"
        "    import libcst\n"
        "    return B\n")
    (package / "b.py").write_text("from .a import reach\nB = 1\n")
    (package / "c.py").write_text("from . import a\ntry:\n    import libcst\nexcept ImportError:\n    pass\nC = 1\n")


def test_the_walk_finds_a_cycle_that_a_lazy_import_hides(tmp_path: Path) -> None:
    build_lazy_cycle_package(tmp_path)
    graph = _graph(tmp_path, "pkg")
    assert graph == {"pkg": {"pkg.c"}, "pkg.a": {"pkg.b", "typing", "libcst"}, "pkg.b": {"pkg.a"},
                     "pkg.c": {"pkg.a", "libcst"}}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert find_cycle({name: imported - {"pkg.b"} for name, imported in graph.items()}) is None


def test_the_walk_tells_imports_that_run_on_import_from_lazy_ones(tmp_path: Path) -> None:
    build_lazy_cycle_package(tmp_path)
    graph = _graph(tmp_path, "pkg", on_import_only=True, packages=True)
    assert graph["pkg.a"] == {"typing"}
    assert graph["pkg.c"] == {"pkg", "pkg.a", "libcst"}  # a guarded import at module level still loads
    assert "libcst" in reached(graph, ["pkg.b"])  # b -> a, whose package runs c -> libcst
    assert "libcst" not in reached(graph, ["pkg.a"])
