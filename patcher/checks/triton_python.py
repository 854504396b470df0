"""Read one Python file for Triton kernels: defined, launched, imported, called by name, or switched on.

``findings`` yields each one with its node; ``Guard`` says which ``if`` or
``try`` it sits under (neither makes it safe: a hang cannot be caught).
``defined_kernels`` is also how the build finds the shipped modules that
define a kernel (``triton_imports``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Mapping

from .base import PythonSource
from .syntax_index import SCOPES, TRY, SyntaxIndex, dotted
from .triton_names import (DECORATORS, HANG, IMPORTERS, KERNEL, KERNEL_MODULES, KERNELS, STAR_EXPORTS, SWITCH, TRITON,
                           excepted, kernel_module, says_triton)


@dataclass(frozen=True)
class Finding:
    """Something this rule flags in one file: the node, and what it is."""

    node: ast.AST
    message: str
    certain: bool = True  # False: it may be Triton, which the syntax alone cannot tell (a warning)


class Names:
    """What the local names of a module stand for: ``tt`` -> ``triton``, ``caf`` -> ``x.context_attention_fwd``."""

    def __init__(self, index: SyntaxIndex, module_of: Mapping[int, str]):
        self.qualified: dict[str, str] = {}
        for imported in index.of(ast.Import):
            for alias in imported.names:
                if alias.asname:
                    self.qualified[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    self.qualified[first] = first
        for node in index.of(ast.ImportFrom):
            module = module_of[id(node)]
            for alias in node.names:
                if alias.name != "*":
                    self.qualified[alias.asname or alias.name] = f"{module}.{alias.name}"
                for name in STAR_EXPORTS.get(module, ()) if alias.name == "*" else ():
                    self.qualified.setdefault(name, f"{module}.{name}")
        # `tt = importlib.import_module("triton")` binds a module as surely as `import triton as tt`.
        for assign in index.of(ast.Assign):
            value: ast.expr = assign.value
            attribute = ""
            if isinstance(assign.value, ast.Attribute):  # jit = importlib.import_module("triton").jit
                value, attribute = assign.value.value, f".{assign.value.attr}"
            module_name = _dynamic_import(value)
            if module_name and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name):
                self.qualified.setdefault(assign.targets[0].id, module_name + attribute)

    def resolve(self, node: ast.AST) -> str:
        """Return the qualified name of a Name/Attribute chain (``tt.jit`` -> ``triton.jit``), else its dotted text."""
        name = dotted(node)
        if not name:
            return ""
        first, _, rest = name.partition(".")
        base = self.qualified.get(first, first)
        return f"{base}.{rest}" if rest else base


def _dynamic_import(value: ast.expr) -> str | None:
    """Return the module ``importlib.import_module("m")`` or ``__import__("m")`` gives, for a literal absolute name."""
    if not isinstance(value, ast.Call) or not value.args or dotted(value.func).split(".")[-1] not in IMPORTERS:
        return None
    name = value.args[0]
    if not isinstance(name, ast.Constant) or not isinstance(name.value, str) or name.value.startswith("."):
        return None
    if dotted(value.func).split(".")[-1] == "__import__" and len(value.args) < 4 and not value.keywords:
        return name.value.split(".")[0]  # without a fromlist, __import__("a.b") returns the package a
    return name.value


def written_module(node: ast.ImportFrom) -> str:
    """Return the module a ``from`` import names, as written (``..ops``: its leading dots kept)."""
    return "." * node.level + (node.module or "")


def kernel_decorator(names: Names, decorator: ast.expr) -> str | None:
    """Return ``triton.jit`` etc. when ``decorator`` is one (``@tt.jit``, ``@autotune(...)``), else None."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    qualified = names.resolve(target)
    parts = qualified.split(".")
    if len(parts) >= 2 and parts[0] == TRITON and parts[-1] in DECORATORS:
        return qualified
    return None


def defined_kernels(source: PythonSource) -> list[tuple[ast.expr, str, str]]:
    """Return each function ``source`` decorates as a Triton kernel: (node, name, the decorator's source)."""
    if not source.mentions(TRITON):
        return []
    index = source.index
    names = Names(index, {id(n): written_module(n) for n in index.of(ast.ImportFrom)})
    found: list[tuple[ast.expr, str, str]] = []
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*index.of(ast.FunctionDef),
                                                               *index.of(ast.AsyncFunctionDef)]
    for function in functions:
        for decorator in function.decorator_list:
            if kernel_decorator(names, decorator):
                found.append((decorator, function.name, source.code(decorator)))
                break
    return sorted(found, key=lambda f: f[0].lineno)


def findings(source: PythonSource) -> Iterator[Finding]:
    index = source.index
    module_of = {id(n): written_module(n) for n in index.of(ast.ImportFrom)}
    names = Names(index, module_of)
    guard = Guard(source)
    kernels: dict[str, str] = {}  # local name -> what it is, for calls: "the Triton kernel context_attention_fwd"
    for decorated, name, decorator in defined_kernels(source):
        kernels[name] = f"the Triton kernel {name}"
        # The guards around the function, not the decorator's (the function is the decorator's scope).
        function = index.parent(decorated) or decorated
        yield Finding(decorated, f"defines the Triton kernel {name} (`@{decorator}`){guard(function)}")
    for node in index.of(ast.ImportFrom):
        module = module_of[id(node)]
        if excepted(module):
            continue
        if any(alias.name == "*" for alias in node.names):
            if kernel_module(module):
                yield Finding(node, f"star-imports {KERNEL if module.endswith('prefix_prefill') else 'the kernels'} "
                                    f"from {module} (`{source.code(node)}`){guard(node)}")
            continue
        from_kernels = kernel_module(module)
        for alias in node.names:
            if excepted(f"{module}.{alias.name}"):
                continue
            if not (from_kernels or alias.name in KERNELS or alias.name in KERNEL_MODULES
                    or (says_triton(alias.name) and module.split(".")[0] != TRITON)):
                continue
            bound = alias.asname or alias.name
            kernels[bound] = (f"the Triton kernel {alias.name}" if alias.name in KERNELS
                              else f"imported from {module}")
            suffix = f" as {alias.asname}" if alias.asname else ""
            yield Finding(node, f"imports {alias.name}{suffix} from {module}{guard(node)}")
    for plain in index.of(ast.Import):
        for alias in plain.names:
            if kernel_module(alias.name) or KERNEL in alias.name.split("."):
                yield Finding(plain, f"imports {alias.name} (`{source.code(plain)}`){guard(plain)}")
    callees = set()
    # A function of this file is judged by its body, not its name (`_log_triton_disabled()`).
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*index.of(ast.FunctionDef),
                                                               *index.of(ast.AsyncFunctionDef)]
    own = {f.name for f in functions}
    # A decorator call (`@triton.autotune(...)`) is part of the kernel it defines: "defines" says it once.
    decorating = {id(d) for f in functions for d in f.decorator_list}
    for call in index.of(ast.Call):
        func = call.func
        callees.add(id(func))
        if id(call) in decorating and kernel_decorator(names, call):
            continue
        message = _call(call, names, kernels, source, own)
        if message:
            yield Finding(call, f"{message}{guard(call)}")
    for attribute in index.of(ast.Attribute):
        # A reference without a call still hands the kernel to someone who will call it.
        if attribute.attr == KERNEL and id(attribute) not in callees:
            yield Finding(attribute, f"refers to {dotted(attribute) or KERNEL}{guard(attribute)}")
    for assign in index.of(ast.Assign):
        if _truthy(assign.value):
            for target in assign.targets:
                yield from _switch(assign, target, guard)
    for annotated in index.of(ast.AnnAssign):
        if annotated.value is not None and _truthy(annotated.value):
            yield from _switch(annotated, annotated.target, guard)


def _call(call: ast.Call, names: Names, kernels: Mapping[str, str], source: PythonSource,
          own: set[str]) -> str | None:
    """Return what a call does that this rule flags, or None."""
    func = call.func
    if isinstance(func, ast.Subscript):  # kernel[grid](...)
        launched = dotted(func.value).split(".")[-1]
        if launched in kernels:
            return f"launches the Triton kernel {launched} (`{source.code(func)}(...)`)"
        return None
    if isinstance(func, ast.Name):
        if func.id in kernels:
            what = kernels[func.id]
            return f"calls {func.id}(...)" + ("" if what == f"the Triton kernel {func.id}" else f", {what}")
        if func.id in KERNELS:
            return f"calls {func.id}(...)"
        qualified = names.resolve(func)
        if excepted(qualified):
            return None
        if kernel_decorator(names, func):
            return f"compiles a Triton kernel (`{source.code(call)}`)"
        if says_triton(func.id) and func.id not in own:
            return f"calls {func.id}(...), whose name says Triton"
    elif isinstance(func, ast.Attribute):
        qualified = names.resolve(func)
        if excepted(qualified.rpartition(".")[0]):
            return None
        if kernel_decorator(names, func):
            return f"compiles a Triton kernel (`{source.code(call)}`)"
        if func.attr == KERNEL or func.attr in KERNELS:
            return f"calls {dotted(func) or func.attr}(...)"
        imported = dotted(func).split(".")[0] in names.qualified  # a module, not a variable named like one
        if imported and kernel_module(qualified.rpartition(".")[0]):
            return f"calls {dotted(func) or func.attr}(...) from {qualified.rpartition('.')[0]}"
        if says_triton(func.attr) and func.attr not in own:
            return f"calls {dotted(func) or func.attr}(...), whose name says Triton"
    text = _string_argument(call)
    name = dotted(func).split(".")[-1]
    if text is not None and name in IMPORTERS and (kernel_module(text) or text.split(".")[-1] == KERNEL):
        return f"imports {text} dynamically (`{source.code(call)}`)"
    if text is not None and name == "getattr" and (text in KERNELS or text in KERNEL_MODULES):
        return f"looks up {text} by name (`{source.code(call)}`)"
    return None


def _switch(node: ast.AST, target: ast.expr, guard: "Guard") -> Iterator[Finding]:
    name = dotted(target)
    if name.split(".")[-1] == SWITCH:
        yield Finding(node, f"sets {name} = True, which turns the Triton prefill path back on{guard(node)}")


class Guard:
    """Where a finding sits, for the message: the guards around it do not make it safe."""

    def __init__(self, source: PythonSource):
        self.source = source

    def __call__(self, node: ast.AST) -> str:
        child = node
        for parent in reversed(self.source.index.ancestors(node)):
            if isinstance(parent, SCOPES) and not isinstance(parent, ast.Lambda):
                return ""
            if isinstance(parent, TRY) and any(s is child for s in parent.body):
                return f", under `try:` ({HANG})"
            if isinstance(parent, ast.If) and child is not parent.test:
                return f", under `if {self.source.code(parent.test)}:`"
            child = parent
        return ""


def _string_argument(call: ast.Call) -> str | None:
    """Return the literal string among the first two arguments, if any (``import_module('x')``, ``getattr(m, 'x')``)."""
    for arg in call.args[:2]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
    return None


def _truthy(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and type(value.value) in (bool, int) and bool(value.value)

