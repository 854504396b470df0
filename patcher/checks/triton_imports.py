"""Find imports, in the shipped Python files, of a shipped module that defines a Triton kernel.

A kernel behind an innocent name (``from .kernels import run_decode``) is
found by reading the modules the image ships: each one that defines a
kernel, then each import of it from another shipped file, one level deep.
A module is known by the names it can be imported under: from
``dist-packages``/``site-packages`` where the image installs it, and as a
sibling of the importing script.
"""

from __future__ import annotations

import ast
import posixpath
from typing import Iterator, Mapping, Sequence

from .base import BuildContext, Settings, Violation
from .syntax_index import SyntaxIndex
from .triton_names import TRITON, kernel_module
from .triton_python import Guard, defined_kernels, written_module


def shipped_kernel_imports(build: BuildContext, settings: Settings) -> Iterator[Violation]:
    """Flag each import, in a shipped file, of another shipped file that defines a Triton kernel (one level)."""
    definers: dict[str, str] = {}  # context path -> "the Triton kernel _k" (or "kernels _a, _b")
    for path in build.mentioning(TRITON):
        source = build.source(path)
        if source is None or not source.mentions(TRITON):
            continue
        try:
            found = defined_kernels(source)
        except (SyntaxError, ValueError):
            continue
        if found:
            names = [name for _, name, _ in found]
            definers[path] = (f"the Triton kernel {names[0]}" if len(names) == 1
                              else f"the Triton kernels {', '.join(names)}")
    if not definers:
        return
    modules = {path: _module_names(path, build) for path in definers}
    words = sorted({name.split(".")[-1] for names in modules.values() for name in names})
    for path in build.python:
        source = build.source(path)
        if source is None or not source.mentions(*words):
            continue
        try:
            index = source.index
        except (SyntaxError, ValueError):
            continue
        dead = source.reachability.dead
        for node, module, target in _imports_of(index, path, modules):
            if target == path or kernel_module(module):
                continue  # itself, or a name that says Triton: the file rule flags that import already
            message = f"imports {module} ({target}), which defines {definers[target]}{Guard(source)(node)}"
            why = dead(node)
            if why is None:
                yield settings.violation(path, node.lineno, message)  # type: ignore[attr-defined]
            else:
                yield settings.note(path, node.lineno, f"{message}: cannot run: {why}")  # type: ignore[attr-defined]


def _module_names(path: str, build: BuildContext) -> set[str]:
    """Return the dotted names a shipped file can be imported by: under dist-/site-packages, and as a sibling."""
    names = set()
    images = [build.plan.copied.get(path, "")] + [i.image_path for i in build.plan.installed if i.path == path]
    for image in images:
        for root in ("dist-packages/", "site-packages/"):
            if root in image:
                # The last one is the folder on sys.path: a name further up holding it
                # (``/opt/corex-dist-packages/lib/...``) is not where imports start.
                names.add(_dotted_path(image.rsplit(root, 1)[1]))
    names.add(_dotted_path(posixpath.basename(path) if not path.endswith("/__init__.py")
                           else posixpath.basename(posixpath.dirname(path)) + "/__init__.py"))
    return {n for n in names if n}


def _dotted_path(path: str) -> str:
    path = path[:-3] if path.endswith(".py") else path
    if path.endswith("/__init__"):
        path = path[: -len("/__init__")]
    return path.replace("/", ".")


def _imports_of(index: SyntaxIndex, importer: str,
                modules: Mapping[str, set[str]]) -> Iterator[tuple[ast.AST, str, str]]:
    """Return (node, module as written, context path) for each import in ``importer`` of a file in ``modules``."""
    folder = posixpath.dirname(importer)
    for node in index.of(ast.ImportFrom):
        written = written_module(node)
        candidates: list[str] = []
        if node.level:
            base = folder
            for _ in range(node.level - 1):
                base = posixpath.dirname(base)
            parts = [p for p in (node.module or "").split(".") if p]
            stem = posixpath.join(base, *parts) if parts else base
            candidates_paths = [stem + ".py", stem + "/__init__.py"]
            candidates_paths += [posixpath.join(stem, a.name) + ".py" for a in node.names]
            candidates_paths += [posixpath.join(stem, a.name, "__init__.py") for a in node.names]
            for target in modules:
                if target in candidates_paths:
                    yield node, written, target
            continue
        candidates = [written] + [f"{written}.{a.name}" for a in node.names]
        yield from _match(node, written, candidates, importer, modules)
    for imported in index.of(ast.Import):
        for alias in imported.names:
            yield from _match(imported, alias.name, [alias.name], importer, modules)


def _match(node: ast.AST, written: str, candidates: Sequence[str], importer: str,
           modules: Mapping[str, set[str]]) -> Iterator[tuple[ast.AST, str, str]]:
    folder = posixpath.dirname(importer)
    for target, names in modules.items():
        home = posixpath.dirname(target)
        if target.endswith("/__init__.py"):
            home = posixpath.dirname(home)  # a package is a sibling of the files beside its folder
        sibling = home == folder
        for candidate in candidates:
            full = candidate in names and "." in candidate
            # A bare name is a sibling module (the script's folder is on sys.path).
            if full or (sibling and candidate in names and "." not in candidate):
                yield node, written, target
                break
