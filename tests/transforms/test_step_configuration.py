"""Every way a step's configuration is refused names the file, the step, the key and what to do.

Each message is asserted whole (where the parser's own words may vary
between libcst versions, the start and the shape), so a wrong key, a lost
message or a confused template name fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from patcher.patchset import load_patch_set

from tests.fixtures_patches import patch_toml, refusal, write_patch_set


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
    """Load the one patch made of STEPS, with a template that renders to Python and one that does not."""
    folder = write_patch_set(tmp_path / "set", {"edit.toml": patch_toml("edit", steps, scope="")},
                             templates={"good.j2": "y = 1\n", "bad.j2": "y = = 1\n"})
    return load_patch_set(folder)


def _refusal(tmp_path: Path, steps: str) -> str:
    """Return the refusal of the patch made of STEPS, from the key on (the file's path before it)."""
    message = refusal(_load, tmp_path, steps)
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
