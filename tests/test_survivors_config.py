"""Every way a step's configuration is refused names the step, the key and what to do.

Written against the mutants of patcher/transforms that survived the fast
tests (benchmarks/mutation.sh): each message is asserted whole, so a wrong
key, a lost message or a confused template name fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import pytest

from patcher.errors import PatchSetError
from patcher.patchset import load_patch_set
from patcher.patchset.runner import Status, patch_source
from patcher.transforms.pattern import Pattern, find_statements

HEAD = '''id = "edit"
description = "An edit"
origin = "test"
last-update = "2026-11-29"
target = "x.py"
scope = ""

'''
BUFFER = '''[steps.buffers.t]
buffer = "_t"
allocate = "e(m)"
compute = "f($X)"
into = "f($X, out=$OUT)"
'''
REUSE = '[[steps]]\nop = "reuse-buffers"\nafter = "m = $X"\n'
NOT_PYTHON = r"is not valid Python at line \d+, column \d+: \S"

CASES = {
    "insert with both anchors": ('[[steps]]\nop = "insert"\nbefore = "x = 1"\nafter = "x = 1"\ncode = "y = 1"\n',
                                 "steps[1].before: operation 'insert' needs exactly one of 'before' or 'after' (the anchor pattern)"),
    "insert with no anchor": ('[[steps]]\nop = "insert"\ncode = "y = 1"\n',
                              "steps[1].before: operation 'insert' needs exactly one of 'before' or 'after' (the anchor pattern)"),
    "template and code": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\ntemplate = "good.j2"\n',
                          "steps[1].template: give either 'template' or 'code', not both"),
    "no code": ('[[steps]]\nop = "replace"\npattern = "x = 1"\n',
                "steps[1].code: the step needs 'template' (a file in templates/) or 'code'"),
    "code undefined": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = {{ nope }}"\n',
                       "steps[1].code: template uses an undefined variable: 'nope' is undefined (in 'code')"),
    "pattern undefined": ('[[steps]]\nop = "replace"\npattern = "x = {{ nope }}"\ncode = "y = 1"\n',
                          "steps[1].pattern: template uses an undefined variable: 'nope' is undefined (in 'pattern')"),
    "anchor undefined": ('[[steps]]\nop = "insert"\nbefore = "x = {{ nope }}"\ncode = "y = 1"\n',
                         "steps[1].before: template uses an undefined variable: 'nope' is undefined (in 'before')"),
    "missing template": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ntemplate = "missing.j2"\n',
                         "steps[1].template: no template 'missing.j2' in the templates folder (in 'template')"),
    "unknown key, close": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\nexpct = 2\n',
                           "steps[1].expct: unknown key 'expct' for operation 'replace'; did you mean 'expect'?"),
    "unknown key, far": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\nzzzz = 2\n',
                         "steps[1].zzzz: unknown key 'zzzz' for operation 'replace'"),
    "expect 0": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\nexpect = 0\n',
                 "steps[1].expect: 'expect' must be a whole number of matches >= 1, not 0"),
    "expect true": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\nexpect = true\n',
                    "steps[1].expect: 'expect' must be a whole number of matches >= 1, not True"),
    "expect text": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = 1"\nexpect = "2"\n',
                    "steps[1].expect: 'expect' must be a whole number of matches >= 1, not '2'"),
    "replace without pattern": ('[[steps]]\nop = "replace"\ncode = "y = 1"\n',
                                "steps[1].pattern: operation 'replace' needs the key 'pattern'"),
    "reuse without buffers": (REUSE, "steps[1].buffers: operation 'reuse-buffers' needs the key 'buffers'"),
    "reuse without after": ('[[steps]]\nop = "reuse-buffers"\n' + BUFFER,
                            "steps[1].after: operation 'reuse-buffers' needs the key 'after'"),
    "buffers not a table": (REUSE + "buffers = 3\n", "steps[1].buffers: 'buffers' must map each temporary to its buffer"),
    "buffers empty": (REUSE + "buffers = {}\n", "steps[1].buffers: 'buffers' must map each temporary to its buffer"),
    "buffer spec not a table": (REUSE + "[steps.buffers]\nt = 3\n", "steps[1].buffers.t: 'buffers.t' must be a table"),
    "buffer unknown keys": (REUSE + BUFFER + "zeta = 1\nalpha = 2\n",
                            "steps[1].buffers.t: unknown key 'alpha' in 'buffers.t' (known: allocate, buffer, compute, into)"),
    "buffer not a name": (REUSE + BUFFER.replace('"_t"', '"_t x"'),
                          "steps[1].buffers.t.buffer: 'buffers.t.buffer' must be a name, not '_t x'"),
    "reuse after undefined": (REUSE.replace("$X", "{{ nope }}") + BUFFER,
                              "steps[1].after: template uses an undefined variable: 'nope' is undefined (in 'after')"),
    "buffer field undefined": (REUSE + BUFFER.replace("e(m)", "e({{ nope }})"),
                               "steps[1].buffers.t.allocate: template uses an undefined variable: 'nope' is undefined "
                               "(in 'buffers.t.allocate')"),
    "comment undefined": (REUSE + 'comment = "{{ nope }}"\n' + BUFFER,
                          "steps[1].comment: template uses an undefined variable: 'nope' is undefined (in 'comment')"),
}

# The parser's own words differ between libcst versions: only where and the key are pinned.
NOT_PYTHON_CASES = {
    "code": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "y = = 1"\n', "steps[1].code: code from 'code' "),
    "template": ('[[steps]]\nop = "replace"\npattern = "x = 1"\ntemplate = "bad.j2"\n',
                 "steps[1].template: code from 'template' "),
    "pattern": ('[[steps]]\nop = "replace"\npattern = "x = = 1"\ncode = "y = 1"\n',
                "steps[1].pattern: pattern in 'pattern' "),
    "insert anchor": ('[[steps]]\nop = "insert"\nafter = "x = = 1"\ncode = "y = 1"\n', "steps[1].after: pattern in 'after' "),
    "reuse anchor": (REUSE.replace("$X", "= 1") + BUFFER, "steps[1].after: pattern in 'after' "),
    "compute": (REUSE + BUFFER.replace("f($X)\"", "f((\"", 1),
                "steps[1].buffers.t.compute: pattern in 'buffers.t.compute' "),
    "allocate": (REUSE + BUFFER.replace("e(m)", "e(("), "steps[1].buffers.t.allocate: pattern in 'buffers.t.allocate' "),
    "into": (REUSE + BUFFER.replace("f($X, out=$OUT)", "f(("), "steps[1].buffers.t.into: pattern in 'buffers.t.into' "),
}


def _load(tmp_path: Path, steps: str) -> object:
    folder = tmp_path / "set" / "patches"
    templates = tmp_path / "set" / "templates"
    folder.mkdir(parents=True)
    templates.mkdir()
    (templates / "good.j2").write_text("y = 1\n")
    (templates / "bad.j2").write_text("y = = 1\n")
    (folder / "edit.toml").write_text(HEAD + steps)
    (folder / "series").write_text("edit.toml\n")
    return load_patch_set(folder)


def _refusal(tmp_path: Path, steps: str) -> str:
    with pytest.raises(PatchSetError) as refused:
        _load(tmp_path, steps)
    message = str(refused.value)
    assert "edit.toml: " in message
    return message.split("edit.toml: ", 1)[1]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_step_is_refused_with_its_key(tmp_path: Path, name: str) -> None:
    steps, message = CASES[name]
    assert _refusal(tmp_path, steps) == message


@pytest.mark.parametrize("name", sorted(NOT_PYTHON_CASES))
def test_code_that_is_not_python_is_refused_with_where(tmp_path: Path, name: str) -> None:
    steps, start = NOT_PYTHON_CASES[name]
    message = _refusal(tmp_path, steps)
    assert message.startswith(start), message
    assert re.match(NOT_PYTHON, message[len(start):]), message


def test_a_buffer_without_into_says_which_key(tmp_path: Path) -> None:
    steps = REUSE + BUFFER.replace('into = "f($X, out=$OUT)"\n', "")
    assert "operation 'reuse-buffers' needs the key 'into'" in _refusal(tmp_path, steps)


def test_a_good_step_loads_with_its_values(tmp_path: Path) -> None:
    patch_set = _load(tmp_path, '[[steps]]\nop = "replace"\npattern = "x = 1"\ntemplate = "good.j2"\nexpect = 2\n')
    (step,) = patch_set.patches[0].steps  # type: ignore[attr-defined]
    assert (str(step.pattern), step.code, step.expect) == ("x = 1", "y = 1\n", 2)


def _apply(tmp_path: Path, steps: str, source: str):  # type: ignore[no-untyped-def]
    (patch,) = _load(tmp_path, steps).patches  # type: ignore[attr-defined]
    result = patch_source("x.py", source.encode(), [patch])
    return result, result.outcomes[0]


@pytest.mark.parametrize(("op", "what"), [("replace", "pattern"), ("insert", "anchor")])
def test_code_using_a_metavariable_not_captured_fails_the_step(tmp_path: Path, op: str, what: str) -> None:
    key = "pattern" if op == "replace" else "before"
    steps = f'[[steps]]\nop = "{op}"\n{key} = "x = $A"\ncode = "y = $B"\n'
    result, outcome = _apply(tmp_path, steps, "x = 1\n")
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith(f"step 1 ({op}): the code uses $B, which the {what} does not capture")
    assert result.patched == b"x = 1\n"


def test_insert_before_keeps_blank_lines_above_the_new_code_and_comments_on_the_anchor(tmp_path: Path) -> None:
    steps = '[[steps]]\nop = "insert"\nbefore = "x = $A"\ncode = "y = $A"\n'
    source = "a = 0\n\n\n# about x\nx = 1\n"
    result, outcome = _apply(tmp_path, steps, source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched == b"a = 0\n\n\ny = 1\n\n# about x\nx = 1\n"


def test_insert_before_an_anchor_with_no_blank_line_above(tmp_path: Path) -> None:
    steps = '[[steps]]\nop = "insert"\nbefore = "x = $A"\ncode = "y = $A"\n'
    result, outcome = _apply(tmp_path, steps, "a = 0\n# about x\nx = 1\nz = 2\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched == b"a = 0\ny = 1\n# about x\nx = 1\nz = 2\n"


# A run metavariable used twice must match the same run: same length, same items, same order.
@pytest.mark.parametrize(("code", "matches"), [
    ("f(1, 2)\ng(1, 2)\n", True),
    ("f()\ng()\n", True),
    ("f(1, 2)\ng(1, 3)\n", False),
    ("f(1, 2)\ng(2, 1)\n", False),
    ("f(1, 2)\ng(1)\n", False),
    ("f(1)\ng(1, 2)\n", False),
])
def test_a_run_metavariable_used_twice_must_repeat_exactly(code: str, matches: bool) -> None:
    pattern = Pattern.parse("f($...A)\ng($...A)")
    assert bool(find_statements(pattern, cst.parse_module(code))) is matches


def test_a_pattern_error_says_line_and_column() -> None:
    with pytest.raises(ValueError, match=r"not valid Python at line 2, column \d+: \S"):
        Pattern.parse("x = 1\ny = = 2")
