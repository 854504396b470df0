"""Loading a paged_attn.py as a fresh module on stub ops: what it sees while it imports, and what it leaves behind.

During the import ``vllm``, ``vllm._custom_ops`` (the given ops),
``vllm.triton_utils`` (no Triton) and the module itself are in
``sys.modules``; afterwards every entry is as it was, also when the source
raises. The source may be bytes with a BOM and CRLF line ends, or text;
tracebacks show its lines under the file name given.
"""

from __future__ import annotations

import linecache
import sys
import traceback
import types

import pytest

from patcher.numerics.loader import load_paged_attn

# What an upstream-style copy does at import time, recorded so that a test can see it.
PROBE = '''import sys
from vllm import _custom_ops as ops
from vllm.triton_utils import HAS_TRITON
import vllm._custom_ops

SEEN = {name: sys.modules.get(name) for name in ("vllm", "vllm._custom_ops", "vllm.triton_utils", __name__)}
PACKAGE_PATH = sys.modules["vllm"].__path__
SAME_OPS = vllm._custom_ops is ops


def fails(n):
    if n > 2:
        raise ValueError(f"n={n}")
    return n
'''


class Ops:
    """A stand-in for the custom ops: only its identity matters here."""


def test_the_copy_imports_against_the_given_ops_and_no_triton() -> None:
    ops = Ops()
    module = load_paged_attn(PROBE, ops, "probe_paged_attn")
    assert isinstance(module, types.ModuleType) and module.__name__ == "probe_paged_attn"
    assert module.ops is ops and module.SAME_OPS and module.HAS_TRITON is False
    assert module.SEEN["vllm._custom_ops"] is ops and module.SEEN["probe_paged_attn"] is module
    assert module.SEEN["vllm"].triton_utils is module.SEEN["vllm.triton_utils"]
    assert module.SEEN["vllm"]._custom_ops is ops and module.PACKAGE_PATH == []


def test_sys_modules_is_left_as_it_was_entries_it_held_included(monkeypatch: pytest.MonkeyPatch) -> None:
    mine = types.ModuleType("vllm")
    monkeypatch.setitem(sys.modules, "vllm", mine)
    monkeypatch.delitem(sys.modules, "vllm._custom_ops", raising=False)
    before = dict(sys.modules)
    load_paged_attn(PROBE, Ops(), "probe_paged_attn")
    assert sys.modules["vllm"] is mine
    assert dict(sys.modules) == before


def test_sys_modules_is_restored_when_the_copy_raises_at_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    before = dict(sys.modules)
    with pytest.raises(ZeroDivisionError):
        load_paged_attn(PROBE + "\n1 / 0\n", Ops(), "raising_paged_attn")
    assert dict(sys.modules) == before


def test_two_copies_load_side_by_side_each_with_its_ops() -> None:
    first, second = Ops(), Ops()
    a = load_paged_attn(PROBE, first, "copy_a")
    b = load_paged_attn(PROBE, second, "copy_b")
    assert a.ops is first and b.ops is second and a is not b


def test_bytes_with_a_bom_and_crlf_load_and_tracebacks_show_their_lines() -> None:
    source = b"\xef\xbb\xbf" + PROBE.replace("\n", "\r\n").encode()
    module = load_paged_attn(source, Ops(), "crlf_paged_attn", filename="<vendor paged_attn.py>")
    assert module.__file__ == "<vendor paged_attn.py>"
    assert module.fails(2) == 2
    with pytest.raises(ValueError) as raised:
        module.fails(3)
    frame = traceback.extract_tb(raised.tb)[-1]
    assert frame.filename == "<vendor paged_attn.py>" and frame.lineno == 13
    assert frame.line == 'raise ValueError(f"n={n}")'
    lines = linecache.getlines("<vendor paged_attn.py>")
    assert lines == PROBE.splitlines(keepends=True)  # one newline style, no BOM


def test_without_a_file_name_the_module_name_is_shown() -> None:
    module = load_paged_attn(PROBE.encode(), Ops(), "named_paged_attn")
    assert module.__file__ == "<named_paged_attn>"
    with pytest.raises(ValueError) as raised:
        module.fails(5)
    assert traceback.extract_tb(raised.tb)[-1].filename == "<named_paged_attn>"
    assert linecache.getline("<named_paged_attn>", 13).strip() == 'raise ValueError(f"n={n}")'


def test_the_copy_is_compiled_without_the_loaders_future_imports() -> None:
    # loader.py uses `from __future__ import annotations`; the copy must not inherit it.
    module = load_paged_attn("def f(x: int) -> str:\n    return str(x)\n", Ops(), "plain_paged_attn")
    assert module.f.__annotations__ == {"x": int, "return": str}
