"""Find ``torch.compile`` in Python code: TorchInductor, its default backend, writes Triton kernels.

``torch.compile`` (and ``torch.compiler.compile``, ``torch._dynamo.optimize``)
traces a function and hands the graph to a backend. The default backend,
TorchInductor, generates Triton kernels for a GPU (PyTorch's documentation:
"For NVIDIA, AMD and Intel GPUs, it leverages OpenAI Triton as the key
building block"), so on the BI-V100 a compiled function hangs the card the
first time it runs. Which backends write no Triton, read from
``torch/_dynamo/backends/`` (PyTorch 2.1 to 2.13):

- ``eager``, ``eager_noexcept``, ``eager_debug``, ``pre_dispatch_eager``:
  run the captured graph op by op;
- ``aot_eager``, ``aot_eager_default_partitioner``,
  ``aot_eager_decomp_partition``: AOT Autograd with a compiler that does
  nothing (the last borrows Inductor's decompositions, not its code
  generator);
- ``cudagraphs``: replays the graph's own aten kernels through CUDA graphs
  (it uses Inductor's CUDA-graph trees, no code generation);
- ``onnxrt`` and ``tvm``: hand the graph to ONNX Runtime or Apache TVM,
  which compile with their own code generators.

Not accepted: ``inductor`` and anything built on it; ``openxla``, whose
GPU compiler (XLA) emits Triton for some fusions; ``ts``/``aot_ts``
(TorchScript's GPU fusers generate kernels at run time too); any other name
or a callable, which could be any of these. ``disable=True`` compiles
nothing. ``model.compile()`` is ``nn.Module.compile`` (torch.compile on the
module) when ``model`` is a module, which the syntax cannot tell: a warning. Setting a ``TORCHINDUCTOR_*`` variable or a
``torch._inductor.config`` value (assigned, or through ``config.patch``)
configures Inductor, so it counts as
using it; Dynamo's own settings (``torch._dynamo.config``, ``reset``,
``disable``) trace or stop tracing and compile nothing themselves.
"""

from __future__ import annotations

import ast
from typing import Iterator

from .base import PythonSource
from .syntax_index import SyntaxIndex, dotted
from .triton_python import Finding, Guard, Names, written_module

# Backends that generate no Triton kernel (see the module's docstring for why each).
TRITON_FREE_BACKENDS = frozenset({
    "eager", "eager_noexcept", "eager_debug", "pre_dispatch_eager",
    "aot_eager", "aot_eager_default_partitioner", "aot_eager_decomp_partition",
    "cudagraphs", "onnxrt", "tvm",
})
DEFAULT_BACKEND = "inductor"
INDUCTOR = "TorchInductor"
ENVIRONMENT_PREFIX = "TORCHINDUCTOR_"
# The functions that compile, and where each takes its backend: (position or None, keyword).
COMPILERS = {
    "torch.compile": (None, "backend"),
    "torch.compiler.compile": (None, "backend"),
    "torch._dynamo.optimize": (0, "backend"),
    "torch._dynamo.optimize_assert": (0, "backend"),
}
# Inductor's own entry points, and export's: each generates code with TorchInductor.
INDUCTOR_COMPILERS = frozenset({
    "torch._inductor.compile", "torch._inductor.compile_fx.compile_fx", "torch._inductor.compile_fx.compile_fx_inner",
    "torch._inductor.aot_compile", "torch._inductor.aoti_compile_and_package", "torch._inductor.standalone_compile",
    "torch._export.aot_compile", "torch.export.aot_compile",
})
INDUCTOR_CONFIG = "torch._inductor.config."
PARTIALS = frozenset({"functools.partial", "partial"})
# The config module's own setters (torch/utils/_config_module.py): each sets values as an assignment does.
INDUCTOR_CONFIG_SETTERS = frozenset(INDUCTOR_CONFIG + name for name in ("patch", "load_config"))
# Any of these bytes must be in a file that uses torch.compile (with "torch"), or sets Inductor's environment.
WORDS = ("compile", "_dynamo", "_inductor")
ENVIRONMENT_WORD = ENVIRONMENT_PREFIX
WHY = "TorchInductor generates Triton kernels"
_ENVIRONMENT_SETTERS = frozenset({"setdefault", "putenv", "update", "__setitem__"})


def compile_findings(source: PythonSource) -> Iterator[Finding]:
    """Yield each use of ``torch.compile`` with a backend that may write Triton, and each ``TORCHINDUCTOR_*`` set."""
    if source.mentions(ENVIRONMENT_WORD):
        yield from _environment(source)
    if not (source.mentions("torch") and source.mentions(*WORDS)):
        return
    index = source.index
    names = Names(index, {id(n): written_module(n) for n in index.of(ast.ImportFrom)})
    guard = Guard(source)
    called: set[int] = set()
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*index.of(ast.FunctionDef),
                                                               *index.of(ast.AsyncFunctionDef)]
    own_compile = any(f.name == "compile" for f in functions)
    for call in index.of(ast.Call):
        called.add(id(call.func))
        qualified = names.resolve(call.func)
        if _module_compile(call, names) and not own_compile:
            message = _backend_problem(source, call, "torch.compile")
            if message is not None:
                yield Finding(call, f"calls {source.code(call.func)}(...), which is torch.compile if the object is "
                                    f"a torch.nn.Module (nn.Module.compile): {message.removeprefix('calls ')}"
                                    f"{guard(call)}", certain=False)
        elif qualified in COMPILERS:
            message = _backend_problem(source, call, qualified)
            if message is not None:
                yield Finding(call, f"{message}{guard(call)}")
        elif qualified in INDUCTOR_COMPILERS:
            yield Finding(call, f"calls {qualified}(...), which compiles with {INDUCTOR} ({WHY}){guard(call)}")
        elif qualified in INDUCTOR_CONFIG_SETTERS:  # `with config.patch(max_autotune=True):`, `@config.patch(...)`
            yield Finding(call, f"calls {qualified}(...): it configures {INDUCTOR}, torch.compile's default "
                                f"backend, which generates Triton kernels{guard(call)}")
    decorators = {id(d) for f in functions for d in f.decorator_list}
    for function in functions:
        for decorator in function.decorator_list:
            if not isinstance(decorator, ast.Call) and names.resolve(decorator) in COMPILERS:
                yield Finding(decorator, f"decorates {function.name} with `@{source.code(decorator)}`, whose "
                                         f"default backend, {INDUCTOR}, generates Triton kernels{guard(function)}")
    for call in index.of(ast.Call):  # getattr(torch, "compile"): the same function, looked up by name
        key = call.args[1] if dotted(call.func) == "getattr" and len(call.args) >= 2 else None
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            looked_up = f"{names.resolve(call.args[0])}.{key.value}"
            outer = index.parent(call)
            if looked_up in COMPILERS and isinstance(outer, ast.Call) and outer.func is call \
                    and _backend_problem(source, outer, looked_up) is None:
                continue  # getattr(torch, "compile")(f, backend="eager"): called at once, with a safe backend
            if looked_up in COMPILERS:
                yield Finding(call, f"looks up {looked_up} by name (`{source.code(call)}`), whose default backend, "
                                    f"{INDUCTOR}, generates Triton kernels{guard(call)}")
    for attribute in index.of(ast.Attribute):  # torch._inductor.config.max_autotune = True
        if not isinstance(attribute.ctx, ast.Load) and names.resolve(attribute).startswith(INDUCTOR_CONFIG):
            yield Finding(attribute, f"sets {names.resolve(attribute)}: it configures {INDUCTOR}, torch.compile's "
                                     f"default backend, which generates Triton kernels{guard(attribute)}")
    references: list[ast.Attribute | ast.Name] = [*index.of(ast.Attribute), *index.of(ast.Name)]
    for reference in references:
        if id(reference) in called or id(reference) in decorators or not isinstance(reference.ctx, ast.Load):
            continue
        qualified = names.resolve(reference)
        if qualified in COMPILERS and _outermost(index, reference):
            bound = index.parent(reference)
            # partial(torch.compile, backend="eager") fixes a backend that writes no Triton (a later call
            # could still pass another backend; that call is not read).
            if isinstance(bound, ast.Call) and bound.args and bound.args[0] is reference \
                    and names.resolve(bound.func) in PARTIALS and _backend_problem(source, bound, qualified, 1) is None:
                continue
            yield Finding(reference, f"hands on {qualified} (`{source.code(index.parent(reference) or reference)}`), "
                                     f"whose default backend, {INDUCTOR}, generates Triton kernels"
                                     f"{guard(reference)}")


def _module_compile(call: ast.Call, names: Names) -> bool:
    """Tell whether ``call`` may be ``nn.Module.compile`` (``model.compile()``), which runs torch.compile.

    Its arguments are torch.compile's keywords only; ``re.compile(p)``, a
    template's ``env.compile(source)`` and the like take a positional one,
    and a module (``regex.compile``) is no ``nn.Module``.
    """
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "compile" or call.args:
        return False
    root = dotted(func.value).split(".")[0]
    return not (root and root in names.qualified and not isinstance(func.value, ast.Call))


def _outermost(index: SyntaxIndex, node: ast.AST) -> bool:
    """Tell whether ``node`` is a whole name, not the ``torch`` of ``torch.compile`` (nor its ``.x``)."""
    parent = index.parent(node)
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _backend_problem(source: PythonSource, call: ast.Call, qualified: str, skip: int = 0) -> str | None:
    """Say why a compile call may write Triton kernels, or None when its backend writes none.

    ``skip``: positional arguments of ``call`` before the compiler's own (1 for ``partial(torch.compile, ...)``).
    """
    position, keyword = COMPILERS[qualified]
    position = None if position is None else position + skip
    if any(k.arg == "disable" and isinstance(k.value, ast.Constant) and k.value.value is True
           for k in call.keywords):
        return None  # compiles nothing
    given: ast.expr | None = None
    for item in call.keywords:
        if item.arg == keyword:
            given = item.value
        elif item.arg is None:  # **options: the backend could be in there
            return (f"calls {qualified}(..., **{source.code(item.value)}), whose backend cannot be read "
                    f"(unless it is one that writes no Triton, {WHY})")
    if given is None and position is not None and len(call.args) > position:
        given = call.args[position]
    if any(isinstance(a, ast.Starred) for a in call.args[skip: (position or skip) + 1]) and given is None:
        return f"calls {qualified}(*...), whose backend cannot be read ({WHY}, its default)"
    if given is None:
        return f"calls {qualified}(...) without a backend: its default, {INDUCTOR}, generates Triton kernels"
    value = _literal(source, given, call)
    if value == DEFAULT_BACKEND:
        return f"calls {qualified}(..., backend={value!r}): {WHY}"
    if isinstance(value, str) and value in TRITON_FREE_BACKENDS:
        return None
    shown = repr(value) if isinstance(value, str) else f"`{source.code(given)}`"
    return (f"calls {qualified}(..., backend={shown}), a backend not known to write no Triton kernels "
            f"(those that write none: {', '.join(sorted(TRITON_FREE_BACKENDS))})")


def _literal(source: PythonSource, node: ast.expr, at: ast.AST) -> object:
    """Return the string ``node`` stands for: a literal, a local set to one, or a module flag; else None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        value = source.reachability.value_of(node.id, at)
        if isinstance(value, ast.Constant):
            return value.value
        flag = source.reachability.module_flags.get(node.id)
        if value is None and flag is not None and function_free(source, node.id, at):
            return flag.value
    return None


def function_free(source: PythonSource, name: str, at: ast.AST) -> bool:
    """Tell whether ``name`` at ``at`` reads the module's global (no local, parameter or class name hides it)."""
    flag = source.reachability.module_flags[name]
    return source.reachability.reads_module(name, at, flag)


def _environment(source: PythonSource) -> Iterator[Finding]:
    """Yield each ``TORCHINDUCTOR_*`` variable set in ``os.environ`` (or through ``os.putenv``)."""
    index = source.index
    guard = Guard(source)
    for subscript in index.of(ast.Subscript):
        key = _inductor_key(subscript.slice, source, subscript)
        if key is not None and isinstance(subscript.ctx, ast.Store) and _is_environ(subscript.value):
            yield _set(source, subscript, key, guard)
    for augmented in index.of(ast.AugAssign):  # os.environ |= {"TORCHINDUCTOR_...": "1"}
        if _is_environ(augmented.target) and isinstance(augmented.value, ast.Dict):
            key = next(filter(None, (_inductor_key(k, source, augmented) for k in augmented.value.keys)), None)
            if key is not None:
                yield _set(source, augmented, key, guard)
    for call in index.of(ast.Call):
        func = call.func
        if not isinstance(func, ast.Attribute) and dotted(func).split(".")[-1] != "putenv":
            continue
        method = dotted(func).split(".")[-1]
        if method not in _ENVIRONMENT_SETTERS:
            continue
        if method != "putenv" and not (isinstance(func, ast.Attribute) and _is_environ(func.value)):
            continue
        keys: list[str | None] = [k.arg for k in call.keywords if k.arg]
        keys += [_inductor_key(a, source, call) for a in call.args[:1]]
        for argument in call.args[:1]:
            if isinstance(argument, ast.Dict):
                keys += [_inductor_key(k, source, call) for k in argument.keys]
        for key in keys:
            if key is not None and key.startswith(ENVIRONMENT_PREFIX):
                yield _set(source, call, key, guard)
                break


def _set(source: PythonSource, node: ast.AST, key: str, guard: Guard) -> Finding:
    return Finding(node, f"sets {key} (`{source.code(node)}`): it configures {INDUCTOR}, torch.compile's default "
                         f"backend, which generates Triton kernels{guard(node)}")


def _inductor_key(node: ast.expr | None, source: PythonSource, at: ast.AST) -> str | None:
    """Return the ``TORCHINDUCTOR_*`` name a key stands for: a literal, or a local or module flag set to one."""
    value = _literal(source, node, at) if isinstance(node, (ast.Constant, ast.Name)) else None
    if isinstance(value, str) and value.startswith(ENVIRONMENT_PREFIX):
        return value
    return None


def _is_environ(node: ast.expr) -> bool:
    return dotted(node).split(".")[-1] == "environ"
