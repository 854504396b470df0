"""``reuse-buffers`` writes each temporary into one buffer allocated after the anchor, or refuses and changes nothing.

It refuses a temporary that escapes (returned, yielded, stored, assigned
on), one it cannot rewrite (bound twice, by a loop, augmented), a buffer
name already used, an anchor or a temporary found more than once. A ``del``
of the temporary loses that name only.
"""

from __future__ import annotations

import pytest

from patcher.patchset.runner import Status
from patcher.transforms.pattern import Pattern
from patcher.transforms.reuse_buffers import Buffer, ReuseBuffers


REUSE = '''
    [[steps]]
    op = "reuse-buffers"
    after = "m = $INIT"
    {extra}

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


def test_reuse_buffers_applies_when_nothing_escapes(run_steps) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(REUSE.format(extra=""), REUSE_SOURCE.format(escape="print(t.sum())"), scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == (
        "def f(xs, out):\n    m = torch.zeros(4)\n    _t = torch.empty_like(m)\n    for x in xs:\n"
        "        torch.exp(x - m, out=_t)\n        m.add_(_t)\n        print(_t.sum())\n"
    )


def test_reuse_buffers_at_module_level(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "m = torch.zeros(4)\nfor x in xs:\n    t = torch.exp(x - m)\n    m.add_(t)\n"
    patched, outcome = run_steps(REUSE.format(extra=""), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("m = torch.zeros(4)\n_t = torch.empty_like(m)\nfor x in xs:\n"
                       "    torch.exp(x - m, out=_t)\n    m.add_(_t)\n")


@pytest.mark.parametrize(("escape", "through"), [
    ("return t", "a return"),
    ("yield t", "a yield"),
    ("out.append([t])", "a container"),
    ("out.append((t, 1))", "a container"),
    ("out.update({'t': t})", "a dict"),
    ("kept = t", "an assignment"),
])
def test_reuse_buffers_refuses_a_temporary_that_escapes(run_steps, escape: str, through: str) -> None:  # type: ignore[no-untyped-def]
    source = REUSE_SOURCE.format(escape=escape)
    patched, outcome = run_steps(REUSE.format(extra=""), source, scope="f")
    assert outcome.status is Status.FAILED
    assert f"'t' escapes through {through}; reusing its buffer would change what that name sees" in outcome.detail
    assert patched == source


@pytest.mark.parametrize(("line", "message"), [
    ("t = u = torch.exp(x - m)", "'t' is bound by a chained or multiple assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m); u = 1", "'t' is bound by a chained or multiple assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        for t in xs: pass", "'t' is bound by a for loop, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        t += 1", "'t' is bound by an augmented assignment, which the step cannot rewrite"),
    ("t = torch.exp(x - m)\n        _t = 0", "the buffer name '_t' is already used"),
    ("t = torch.log(x - m)", "'t' is assigned 'torch.log(x - m)', not 'torch.exp($X)'"),
])
def test_reuse_buffers_refuses_what_it_cannot_rewrite(run_steps, line: str, message: str) -> None:  # type: ignore[no-untyped-def]
    source = REUSE_SOURCE.replace("        t = torch.exp(x - m)\n", f"        {line}\n").format(escape="pass")
    patched, outcome = run_steps(REUSE.format(extra=""), source, scope="f")
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith(f"step 1 (reuse-buffers): {message} in f"), outcome.detail
    assert patched == source


def test_reuse_buffers_with_its_anchor_twice_says_so(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def f(xs):\n    m = torch.zeros(4)\n    m = m * 2\n    for x in xs:\n        t = torch.exp(x - m)\n"
    patched, outcome = run_steps(REUSE.format(extra=""), source, scope="f")
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith("step 1 (reuse-buffers): expected the anchor 'm = $INIT' once, found it 2 times in f")
    assert patched == source


def test_reuse_buffers_with_the_temporary_assigned_twice_says_so(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = ("def f(xs):\n    m = torch.zeros(4)\n    for x in xs:\n        t = torch.exp(x - m)\n"
              "        m.add_(t)\n        t = torch.exp(m)\n")
    patched, outcome = run_steps(REUSE.format(extra=""), source, scope="f")
    assert outcome.status is Status.FAILED
    assert outcome.detail.startswith("step 1 (reuse-buffers): expected 't = torch.exp($X)' once, found it 2 times in f")
    assert patched == source


def test_reuse_buffers_comment_keeps_its_paragraphs_without_trailing_spaces(run_steps) -> None:  # type: ignore[no-untyped-def]
    extra = 'comment = """\nOne buffer for every block.\n\nSee the decode notes."""'
    source = "def f(xs):\n    m = torch.zeros(4)\n    for x in xs:\n        t = torch.exp(x - m)\n        m.add_(t)\n"
    patched, outcome = run_steps(REUSE.format(extra=extra), source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert ("    m = torch.zeros(4)\n    # One buffer for every block.\n    #\n    # See the decode notes.\n"
            "    _t = torch.empty_like(m)\n") in patched


@pytest.mark.parametrize(("line", "left"), [
    ("del t, m_blk, l_blk, scale", "        del m_blk, l_blk, scale\n"),
    ("del (t, m_blk, l_blk)", "        del (m_blk, l_blk)\n"),
    # A list is as good a del target as a tuple: left whole, `del [t, m_blk]`
    # would name a temporary that no longer exists, a NameError on the first pass.
    ("del [t, m_blk, l_blk]", "        del [m_blk, l_blk]\n"),
    ("del [t, m_blk]", "        del m_blk\n"),
    ("del [t]", ""),
    ("del t", ""),
])
def test_reuse_buffers_drops_the_temporary_from_a_del(run_steps, line: str, left: str) -> None:  # type: ignore[no-untyped-def]
    source = ("def f(xs):\n    m = torch.zeros(4)\n    for x in xs:\n        t = torch.exp(x - m)\n"
              f"        m.add_(t)\n        {line}\n")
    patched, outcome = run_steps(REUSE.format(extra=""), source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched.endswith("        m.add_(_t)\n" + left)


def test_reuse_buffers_describes_each_temporary() -> None:
    compute = Pattern.parse("torch.exp($X)").expression
    step = ReuseBuffers(anchor=Pattern.parse("m = $INIT"), buffers=(
        Buffer("t", "_t", "torch.empty_like(m)", compute, "torch.exp($X, out=$OUT)"),
        Buffer("m_blk", "_m_blk", "torch.empty_like(m)", compute, "torch.exp($X, out=$OUT)"),
    ))
    assert step.describe() == "'t = ...', 'm_blk = ...'"
