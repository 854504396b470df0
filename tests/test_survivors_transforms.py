"""Transform behaviours no other test pinned down: counts, anchors, escapes, scopes, overlaps.

Each test here fails with a bug that once survived the whole suite (issue 13).
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from patcher.patchset.runner import Status, patch_source
from patcher.transforms.pattern import Pattern, find_statements


def _patch(steps: str, *, scope: str = "", header: str = "") -> str:
    return textwrap.dedent('''
        id = "edit"
        description = "An edit"
        origin = "test"
        last-update = "2026-11-29"
        target = "x.py"
        scope = "{scope}"
        {header}

        {steps}
    ''').format(scope=scope, header=header, steps=textwrap.dedent(steps))


REPLACE = '''
    [[steps]]
    op = "replace"
    pattern = "x += 1"
    code = "x += 2"
    {expect}
'''


def _run(load_patch, patch_text: str, source: str):  # type: ignore[no-untyped-def]
    result = patch_source("x.py", source.encode(), [load_patch(patch_text)])
    (outcome,) = result.outcomes
    return result, outcome


# 1. A pattern found more often than `expect` says is a failure, not a silent edit of each.
def test_two_matches_where_one_is_expected_fail_and_change_nothing(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\nprint(x)\nx += 1\n"
    result, outcome = _run(load_patch, _patch(REPLACE.format(expect="")), source)
    assert outcome.status is Status.FAILED
    # (At module scope the detail ends "in " with no scope name: runner.py, reported.)
    assert "step 1 (replace): expected 'x += 1' once, found it 2 times" in outcome.detail
    assert result.patched == source.encode()


def test_expect_two_replaces_both(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\nprint(x)\nx += 1\n"
    result, outcome = _run(load_patch, _patch(REPLACE.format(expect="expect = 2")), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched == b"x = 0\nx += 2\nprint(x)\nx += 2\n"


# 2. `insert` with `after` puts the code right after the anchor, at the anchor's indentation.
INSERT_AFTER = '''
    [[steps]]
    op = "insert"
    after = "total = $START"
    code = "count = $START"
'''


def test_insert_after_puts_the_code_after_the_anchor(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "def f(items):\n    total = 0  # running sum\n    for i in items:\n        total += i\n    return total\n"
    header = 'applied-when = ["count = $_"]'
    result, outcome = _run(load_patch, _patch(INSERT_AFTER, scope="f", header=header), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched.decode() == (
        "def f(items):\n    total = 0  # running sum\n    count = 0\n    for i in items:\n"
        "        total += i\n    return total\n"
    )
    again = patch_source("x.py", result.patched, [load_patch(_patch(INSERT_AFTER, scope="f", header=header))])
    assert again.outcomes[0].status is Status.ALREADY_APPLIED and again.patched == result.patched


def test_insert_after_the_last_statement_of_a_nested_block(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "def f(items):\n    for i in items:\n        total = i\n    return 1\n"
    result, outcome = _run(load_patch, _patch(INSERT_AFTER, scope="f"), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched.decode() == (
        "def f(items):\n    for i in items:\n        total = i\n        count = i\n    return 1\n"
    )


def test_insert_after_an_anchor_found_twice_fails(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "total = 0\ntotal = 1\n"
    result, outcome = _run(load_patch, _patch(INSERT_AFTER), source)
    assert outcome.status is Status.FAILED
    assert "expected the anchor 'total = $START' once, found it 2 times" in outcome.detail
    assert result.patched == source.encode()


# 3. reuse-buffers: a temporary that outlives the next write under another name stops the step.
REUSE = '''
    [[steps]]
    op = "reuse-buffers"
    after = "m = $INIT"

    [steps.buffers.t]
    buffer = "_t"
    allocate = "torch.empty_like(m)"
    compute = "torch.exp($X)"
    into = "torch.exp($X, out=$OUT)"
'''

REUSE_SOURCE = """\
def f(xs, out):
    m = torch.zeros(4)
    for x in xs:
        t = torch.exp(x - m)
        m.add_(t)
        {escape}
"""


def test_reuse_buffers_applies_when_nothing_escapes(load_patch) -> None:  # type: ignore[no-untyped-def]
    result, outcome = _run(load_patch, _patch(REUSE, scope="f"), REUSE_SOURCE.format(escape="print(t.sum())"))
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched.decode() == (
        "def f(xs, out):\n    m = torch.zeros(4)\n    _t = torch.empty_like(m)\n    for x in xs:\n"
        "        torch.exp(x - m, out=_t)\n        m.add_(_t)\n        print(_t.sum())\n"
    )


@pytest.mark.parametrize(("escape", "through"), [
    ("return t", "a return"),
    ("yield t", "a yield"),
    ("out.append([t])", "a container"),
    ("out.append((t, 1))", "a container"),
    ("out.update({'t': t})", "a dict"),
    ("kept = t", "an assignment"),
])
def test_reuse_buffers_refuses_a_temporary_that_escapes(load_patch, escape: str, through: str) -> None:  # type: ignore[no-untyped-def]
    source = REUSE_SOURCE.format(escape=escape)
    result, outcome = _run(load_patch, _patch(REUSE, scope="f"), source)
    assert outcome.status is Status.FAILED
    assert f"'t' escapes through {through}; reusing its buffer would change what that name sees" in outcome.detail
    assert result.patched == source.encode()


# 10. A patch must recognise its own result, or it would apply again on the next run.
def test_a_result_that_fails_its_own_applied_when_is_a_bug_in_the_patch(load_patch) -> None:  # type: ignore[no-untyped-def]
    source = "x = 0\nx += 1\n"
    patch = _patch(REPLACE.format(expect=""), header='applied-when = ["x += 3"]')
    result, outcome = _run(load_patch, patch, source)
    assert outcome.status is Status.FAILED
    assert outcome.detail == "the result does not match the patch's own 'applied-when' markers (a bug in the patch)"
    assert result.patched == source.encode()


# 11. A scope's name defined twice is ambiguous: an error, never the first definition.
@pytest.mark.parametrize(("scope", "source", "message"), [
    ("f", "def f():\n    x += 1\n\ndef f():\n    pass\n", "2 definitions of 'f' in the module"),
    ("f", "if A:\n    def f():\n        x += 1\nelse:\n    def f():\n        x += 1\n", "2 definitions of 'f' in the module"),
    ("C.g", "class C:\n    def g(self):\n        x += 1\n    def g(self):\n        pass\n", "2 definitions of 'g' in C"),
])
def test_two_definitions_of_the_scope_name_are_an_error(load_patch, scope: str, source: str, message: str) -> None:  # type: ignore[no-untyped-def]
    result, outcome = _run(load_patch, _patch(REPLACE.format(expect=""), scope=scope), source)
    assert outcome.status is Status.FAILED
    assert message in outcome.detail
    assert result.patched == source.encode()


# 13. Statement matches never overlap: three `x += 1` lines hold one run of two.
def test_statement_runs_do_not_overlap() -> None:
    pattern = Pattern.parse("x += 1\nx += 1")
    three = cst.parse_module("x += 1\nx += 1\nx += 1\n")
    assert [(m.start, m.end) for m in find_statements(pattern, three)] == [(0, 2)]
    four = cst.parse_module("x += 1\nx += 1\nx += 1\nx += 1\n")
    assert [(m.start, m.end) for m in find_statements(pattern, four)] == [(0, 2), (2, 4)]


def test_an_overlapping_run_is_replaced_once(load_patch) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = """
        x += 1
        x += 1
        """
        code = "x += 2"
    '''
    result, outcome = _run(load_patch, _patch(steps), "x += 1\nx += 1\nx += 1\n")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched == b"x += 2\nx += 1\n"


# Found by mutation testing: a step's own scope, and every way reuse-buffers refuses a temporary.
def test_a_step_scope_overrides_the_patch_scope(load_patch) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        scope = "g"
        pattern = "x += 1"
        code = "x += 2"
    '''
    source = "def f(x):\n    x += 1\n\ndef g(x):\n    x += 1\n"
    result, outcome = _run(load_patch, _patch(steps, scope="f"), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert result.patched == b"def f(x):\n    x += 1\n\ndef g(x):\n    x += 2\n"


@pytest.mark.parametrize(("line", "message"), [
    ("t = u = torch.exp(x - m)", "'t' is bound by a chained or multiple assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m); u = 1", "'t' is bound by a chained or multiple assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        for t in xs: pass", "'t' is bound by a for loop, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        t += 1", "'t' is bound by an augmented assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        _t = 0", "the buffer name '_t' is already used"),
    ("t = torch.log(x - m)", "'t' is assigned 'torch.log(x - m)', not 'torch.exp($X)'"),
])
def test_reuse_buffers_refuses_what_it_cannot_rewrite(load_patch, line: str, message: str) -> None:  # type: ignore[no-untyped-def]
    source = REUSE_SOURCE.replace("        t = torch.exp(x - m)\n", f"        {line}\n").format(escape="pass")
    result, outcome = _run(load_patch, _patch(REUSE, scope="f"), source)
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith(f"step 1 (reuse-buffers): {message} in f"), outcome.detail
    assert result.patched == source.encode()
