"""Execute a ``paged_attn.py`` source as a fresh module against stub ops."""

from __future__ import annotations

import linecache
import sys
import types
from typing import Any

from ..depth import require_parseable


def load_paged_attn(
    source: bytes | str,
    ops: Any,
    name: str,
    *,
    filename: str | None = None,
) -> types.ModuleType:
    """Run ``source`` as a new module called ``name`` whose ``vllm._custom_ops`` is ``ops``.

    ``ops`` is any object with the ``_custom_ops`` functions, usually a
    ``StubOps``. During the import ``sys.modules`` holds a stub ``vllm``
    package (with ``vllm.triton_utils.HAS_TRITON = False``, so an
    upstream-style copy imports too); afterwards every entry it touched is
    restored. The module keeps its own reference to ``ops``, so two copies
    (the vendor's and a patched one) can be loaded side by side, each with
    its own counters. ``filename`` (default ``<name>``) appears in
    tracebacks, which show the source lines.
    """
    text = source.decode("utf-8-sig") if isinstance(source, bytes) else source
    # The tokenizer reads \r\n fine, but linecache and line numbers are
    # clearer with one newline style.
    text = text.replace("\r\n", "\n")
    filename = filename or f"<{name}>"
    require_parseable(text, filename, strings_nest=False)  # compile() recurses per level too
    code = compile(text, filename, "exec", dont_inherit=True)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)

    module = types.ModuleType(name)
    module.__file__ = filename

    vllm = types.ModuleType("vllm")
    vllm.__path__ = []
    triton_utils = types.ModuleType("vllm.triton_utils")
    triton_utils.HAS_TRITON = False  # type: ignore[attr-defined]
    vllm._custom_ops = ops  # type: ignore[attr-defined]
    vllm.triton_utils = triton_utils  # type: ignore[attr-defined]
    stubs: dict[str, Any] = {
        "vllm": vllm,
        "vllm._custom_ops": ops,
        "vllm.triton_utils": triton_utils,
        name: module,
    }

    saved = {key: sys.modules[key] for key in stubs if key in sys.modules}
    sys.modules.update(stubs)
    try:
        exec(code, module.__dict__)
    finally:
        for key in stubs:
            if key in saved:
                sys.modules[key] = saved[key]
            else:
                sys.modules.pop(key, None)
    return module
