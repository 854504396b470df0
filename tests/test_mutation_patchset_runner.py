"""Running a series on one file: who wrote which line, the code each version gets, failures word for word.

Written against the mutants of patcher/patchset/runner.py that survived the
fast tests (issue 13): the lines each applied patch owns as later patches
insert, rewrite and delete code around them (the "rewrites code that patch
X wrote" message names the patch and the line), files whose code libcst
generates from a header or footer, and how much of a module is generated
again after a patch.
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any, Callable

import libcst as cst
import pytest

from patcher.patchset.model import PatchCode
from patcher.patchset.runner import Status, _Codegen, patch_source, run_patch
from patcher.transforms.base import Operation, StepFailed

CLASH = "rewrites code that patch {} wrote (line {}); two patches must not rewrite the same code: " \
        "merge them or reorder the series"

SOURCE = b"def f():\n    x = 1\n    y = 2\n    return x + y\n"


def _text(patch_id: str, steps: str, *, scope: str = "f", target: str = "x.py") -> str:
    return textwrap.dedent(f'''
        id = "{patch_id}"
        description = "An edit"
        origin = "test"
        last-update = "2026-11-29"
        target = "{target}"
        scope = "{scope}"
    ''') + textwrap.dedent(steps)


def _replace(pattern: str, code: str) -> str:
    return f'\n[[steps]]\nop = "replace"\npattern = "{pattern}"\ncode = "{code}"\n'


def _insert(where: str, anchor: str, code: str) -> str:
    return f'\n[[steps]]\nop = "insert"\n{where} = "{anchor}"\ncode = "{code}"\n'


def _run(load_patch: Callable[[str], Any], source: bytes, *patches: tuple[str, str]) -> list[tuple[str, Status, str]]:
    result = patch_source("x.py", source, [load_patch(_text(pid, steps)) for pid, steps in patches])
    return [(o.patch.id, o.status, o.detail) for o in result.outcomes]


# --- whose lines: followed through later inserts, rewrites and deletions ---------------


def test_lines_inserted_right_above_a_patchs_line_belong_to_the_inserter(load_patch: Any) -> None:
    # 'tune' writes 'y = 3'; 'guard' inserts 'w = 0' right above it; 'again'
    # rewrites 'w = 0': the code it rewrites is guard's, not tune's.
    outcomes = _run(load_patch, SOURCE, ("tune", _replace("y = 2", "y = 3")),
                    ("guard", _insert("before", "y = 3", "w = 0")), ("again", _replace("w = 0", "w = 5")))
    assert outcomes == [("tune", Status.APPLIED, ""), ("guard", Status.APPLIED, ""),
                        ("again", Status.FAILED, CLASH.format("guard", 3))]


def test_lines_inserted_right_below_a_patchs_line_belong_to_the_inserter(load_patch: Any) -> None:
    outcomes = _run(load_patch, SOURCE, ("tune", _replace("y = 2", "y = 3")),
                    ("guard", _insert("after", "y = 3", "w = 0")), ("again", _replace("w = 0", "w = 5")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("guard", 4))


def test_a_patchs_line_moved_down_by_a_rewrite_above_it_stays_its_own(load_patch: Any) -> None:
    # 'split' turns 'x = 1' into two lines just above tune's 'y = 3'.
    outcomes = _run(load_patch, SOURCE, ("tune", _replace("y = 2", "y = 3")),
                    ("split", _replace("x = 1", "a = 0\\nx = a + 1")), ("again", _replace("y = 3", "y = 4")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("tune", 4))


def test_the_line_a_rewrite_above_a_patchs_line_wrote_is_the_rewriters(load_patch: Any) -> None:
    outcomes = _run(load_patch, SOURCE, ("tune", _replace("y = 2", "y = 3")),
                    ("split", _replace("x = 1", "a = 0\\nx = a + 1")), ("again", _replace("x = a + 1", "x = a + 2")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("split", 3))


def test_lines_around_a_patchs_moved_line_are_free_to_rewrite(load_patch: Any) -> None:
    # 'lead' moves tune's line down by one; the lines just above and below
    # it then are no patch's, and a third patch may rewrite them.
    lead = ("lead", _insert("before", "x = 1", "w = 0"))
    tune = ("tune", _replace("y = 2", "y = 3"))
    above = _run(load_patch, SOURCE, tune, lead, ("above", _replace("x = 1", "x = 7")))
    below = _run(load_patch, SOURCE, tune, lead, ("below", _replace("return x + y", "return x - y")))
    assert above[2] == ("above", Status.APPLIED, "") and below[2] == ("below", Status.APPLIED, "")


def test_code_inserted_between_two_lines_of_one_patch_is_the_inserters(load_patch: Any) -> None:
    # 'pair' rewrites two lines; 'guard' inserts between them. Rewriting the
    # inserted line names guard; rewriting the second line still names pair,
    # at its new line; a rewrite spanning both names the first line it rewrites.
    pair = ("pair", _replace("x = 1\\ny = 2", "x = 5\\ny = 6"))
    guard = ("guard", _insert("after", "x = 5", "w = 0"))
    inserted = _run(load_patch, SOURCE, pair, guard, ("again", _replace("w = 0", "w = 1")))
    second = _run(load_patch, SOURCE, pair, guard, ("again", _replace("y = 6", "y = 7")))
    both = _run(load_patch, SOURCE, pair, guard, ("again", _replace("w = 0\\ny = 6", "w = 1\\ny = 7")))
    assert inserted[2] == ("again", Status.FAILED, CLASH.format("guard", 3))
    assert second[2] == ("again", Status.FAILED, CLASH.format("pair", 4))
    assert both[2] == ("again", Status.FAILED, CLASH.format("guard", 3))


def test_a_patch_deleting_lines_another_patch_wrote_fails(load_patch: Any) -> None:
    # 'debug' adds a line; 'tidy' takes it out again (the rest of its match is
    # kept word for word, so the change is a pure deletion).
    outcomes = _run(load_patch, SOURCE, ("debug", _insert("before", "y = 2", "print(x)")),
                    ("tidy", _replace("print(x)\\ny = 2", "y = 2")))
    assert outcomes == [("debug", Status.APPLIED, ""), ("tidy", Status.FAILED, CLASH.format("debug", 3))]


def test_a_patch_deleting_lines_no_patch_wrote_applies_and_moves_the_owned_ones_up(load_patch: Any) -> None:
    # 'tidy' deletes 'x = 1' above tune's line (keeping that line as it is).
    tune, tidy = ("tune", _replace("y = 2", "y = 3")), ("tidy", _replace("x = 1\\ny = 3", "y = 3"))
    result = patch_source("x.py", SOURCE, [load_patch(_text(pid, steps)) for pid, steps in (tune, tidy)])
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.APPLIED]
    assert result.patched == b"def f():\n    y = 3\n    return x + y\n"
    outcomes = _run(load_patch, SOURCE, tune, tidy, ("again", _replace("y = 3", "y = 4")))
    assert outcomes[2] == ("again", Status.FAILED, CLASH.format("tune", 2))


def test_the_line_named_is_the_editors_line_in_a_file_with_form_feeds(load_patch: Any) -> None:
    # GNU-style sources separate sections with a form feed (^L) line; it is
    # one line in an editor, and so is a docstring holding U+2028.
    source = ('"""Ops.\u2028Second paragraph."""\nimport os\n\x0c\n# Section two\n' + SOURCE.decode()).encode()
    outcomes = _run(load_patch, source, ("tune", _replace("y = 2", "y = 3")), ("again", _replace("y = 3", "y = 4")))
    assert source.split(b"\n").index(b"    y = 2") + 1 == 7
    assert outcomes[1] == ("again", Status.FAILED, CLASH.format("tune", 7))


def _kernel_module(steps: int) -> bytes:
    """A vendor-style file of many small launch wrappers, each ending in the same synchronize call."""
    head = '"""Launch wrappers for the fused kernels (generated, do not edit)."""\n\nimport torch\n\n'
    wrappers = "".join(
        f"\n\ndef launch_{n}(x, scale):\n"
        f"    # stage {n}\n"
        f"    out = torch.ops.vendor.stage_{n}(x, scale)\n"
        f"    torch.cuda.synchronize()\n"
        f"    return out\n"
        for n in range(steps)
    )
    return (head + wrappers).encode()


def test_a_line_repeated_all_over_a_long_file_between_two_edits_is_not_the_editors(load_patch: Any) -> None:
    # In a file of 200 lines or more, difflib's "autojunk" would treat a line
    # repeated in every function (the synchronize call) as junk, fold it into
    # the edits around it, and blame the next patch that rewrites it.
    source = _kernel_module(40)
    assert len(source.splitlines()) > 250 and source.count(b"torch.cuda.synchronize()") == 40
    scale = load_patch(_text("scale", _replace("out = torch.ops.vendor.stage_7(x, scale)\\ntorch.cuda.synchronize()"
                                               "\\nreturn out", "out = torch.ops.vendor.stage_7(x, 2 * scale)\\n"
                                               "torch.cuda.synchronize()\\nreturn out.float()"), scope="launch_7"))
    stream = load_patch(_text("stream", _replace("torch.cuda.synchronize()", "torch.cuda.current_stream().synchronize()"),
                              scope="launch_7"))
    result = patch_source("kernels.py", source, [scale, stream])
    assert [(o.patch.id, o.status, o.detail) for o in result.outcomes] == [
        ("scale", Status.APPLIED, ""), ("stream", Status.APPLIED, "")]
    assert result.patched == source.replace(
        b"stage_7(x, scale)\n    torch.cuda.synchronize()\n    return out\n",
        b"stage_7(x, 2 * scale)\n    torch.cuda.current_stream().synchronize()\n    return out.float()\n")


# --- the code of each version, byte for byte ----------------------------------------------


def test_a_comment_after_the_last_statement_is_kept(load_patch: Any) -> None:
    source = SOURCE + b"\n\n# end of paged_attn.py\n# vim: set ts=4 sw=4 et:\n"
    result = patch_source("x.py", source, [load_patch(_text("tune", _replace("y = 2", "y = 3")))])
    assert result.outcomes[0].status is Status.APPLIED
    assert result.patched == source.replace(b"y = 2", b"y = 3")


def test_a_patch_that_empties_a_module_leaves_its_newline(load_patch: Any) -> None:
    # The vendor __init__.py re-exports a module the patched build drops.
    source = b"from .fused_moe import *\n"
    result = patch_source("__init__.py", source, [load_patch(_text("drop", _replace("from .fused_moe import *", ""),
                                                                   scope=""))])
    assert result.outcomes[0].status is Status.APPLIED
    assert result.patched == b"\n"


def test_one_line_definitions_are_generated_as_written(load_patch: Any) -> None:
    source = (b"class KernelError(RuntimeError): pass\n"
              b"def ident(x): return x\n"
              b"class Ops:\n"
              b"    def scale(self, x): return x * 2\n"
              b"    def shift(self, x):\n"
              b"        return x + 1\n")
    result = patch_source("x.py", source, [load_patch(_text("shift", _replace("return x + 1", "return x + 2"),
                                                            scope="Ops.shift"))])
    assert result.outcomes[0].status is Status.APPLIED
    assert result.patched == source.replace(b"x + 1", b"x + 2")


def test_a_function_holding_a_match_statement_is_generated_again(load_patch: Any) -> None:
    source = (b"def dispatch(kind, x):\n"
              b"    scale = 1\n"
              b"    match kind:\n"
              b"        case \"fp16\":\n"
              b"            return x.half() * scale\n"
              b"        case _:\n"
              b"            return x * scale\n")
    result = patch_source("x.py", source, [load_patch(_text("scale", _replace("scale = 1", "scale = 2"), scope="dispatch"))])
    assert result.outcomes[0].status is Status.APPLIED
    assert result.patched == source.replace(b"scale = 1", b"scale = 2")


CLASS = '''\
# Copyright (c) vendor.
"""Paged attention, the vendor's way."""
import torch


class PagedAttention:
    """Decode with a paged KV cache."""

    def forward_prefix(self, q, k, v):
        scale = q.shape[-1] ** -0.5
        out = torch.empty_like(q)
        return out * scale

    def forward_decode(self, q, k, v):
        scale = q.shape[-1] ** -0.5
        tile = 64
        for start in range(0, k.shape[0], tile):
            out = q @ k[start:start + tile].T
        return out * scale


if __name__ == "__main__":
    print(PagedAttention())
'''


def _count_statement_codegen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the code of every simple statement libcst generates from its node."""
    generated: list[str] = []
    original = cst.SimpleStatementLine._codegen_impl

    def counting(self: cst.SimpleStatementLine, state: Any, *args: Any, **kwargs: Any) -> None:
        generated.append(cst.Module([]).code_for_node(self.body[0]))
        original(self, state, *args, **kwargs)

    monkeypatch.setattr(cst.SimpleStatementLine, "_codegen_impl", counting)
    return generated


def test_a_patch_to_one_method_generates_only_that_statement_again(
    load_patch: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = cst.parse_module(CLASS)
    patch = load_patch(_text("tile", _replace("tile = 64", "tile = 128"), scope="PagedAttention.forward_decode"))
    patch.steps  # build the patch now: building generates code of its own
    codegen = _Codegen()
    generated = _count_statement_codegen(monkeypatch)
    assert codegen.code(module) == CLASS
    assert len(generated) == 11  # every simple statement once
    generated.clear()
    assert codegen.code(module) == CLASS
    assert generated == []  # nothing changed: every statement replayed
    patched, outcome = run_patch(patch, module)
    assert outcome.status is Status.APPLIED
    generated.clear()
    code = codegen.code(patched)
    assert generated == ["tile = 128"]  # not the class, nor the rest of its method
    assert code == CLASS.replace("tile = 64", "tile = 128") == patched.code


def test_every_version_of_a_module_is_generated_as_libcst_generates_it(load_patch: Any) -> None:
    source = CLASS.replace("\n", "\r\n").replace("    ", "\t").encode()
    patches = [
        load_patch(_text("tile", _replace("tile = 64", "tile = 128"), scope="PagedAttention.forward_decode")),
        load_patch(_text("pre", _insert("after", "out = torch.empty_like(q)", "out.zero_()"),
                         scope="PagedAttention.forward_prefix")),
        load_patch(_text("main", _replace("print(PagedAttention())", "print(PagedAttention(), flush=True)"), scope="")),
    ]
    result = patch_source("x.py", source, patches)
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3
    assert result.patched == (source.replace(b"tile = 64", b"tile = 128")
                              .replace(b"out = torch.empty_like(q)\r\n", b"out = torch.empty_like(q)\r\n\t\tout.zero_()\r\n")
                              .replace(b"PagedAttention())", b"PagedAttention(), flush=True)"))


# --- failures ------------------------------------------------------------------------------


def test_a_patch_whose_result_misses_its_own_markers_fails_and_changes_nothing(load_patch: Any) -> None:
    text = _text("edit", _replace("y = 2", "y = 3")).replace('scope = "f"', 'scope = "f"\napplied-when = ["y = 4"]')
    patch = load_patch(text)
    result = patch_source("x.py", SOURCE, [patch])
    (outcome,) = result.outcomes
    assert outcome.patch is patch and outcome.status is Status.FAILED
    assert outcome.message == "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
    assert result.patched == SOURCE


@dataclasses.dataclass(frozen=True)
class _Refuses(Operation):
    """A step that looks for no pattern and always fails."""

    name = "refuses"

    @classmethod
    def _convert(cls, config: Any, render: Any) -> dict[str, Any]:
        return {}

    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        raise StepFailed("refused")

    def describe(self) -> str:
        return "nothing"


def test_a_failing_step_without_a_pattern_has_no_closest_code(load_patch: Any) -> None:
    patch = load_patch(_text("edit", _replace("y = 2", "y = 3")))
    patch = dataclasses.replace(patch, code=PatchCode("digest", lambda: ((_Refuses(),), (), ())))
    (outcome,) = patch_source("x.py", SOURCE, [patch]).outcomes
    assert (outcome.status, outcome.detail, outcome.diagnostic) == (Status.FAILED, "step 1 (refuses): refused in f", None)

