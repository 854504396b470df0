"""What the small transforms do at their edges: counts, nested scopes, spliced statements, comments, del lines.

Each test runs a patch the way `patcher apply` does (or calls one operation
directly where the answer is the operation's own value) and pins the bytes
or the message a patch author would read (issue 13).
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.patchset.runner import Status
from patcher.transforms.base import ConfigError
from patcher.transforms.insert import Insert
from patcher.transforms.pattern import Pattern
from patcher.transforms.replace import Replace
from patcher.transforms.reuse_buffers import Buffer, ReuseBuffers


# --------------------------------------------------------------------------- base: counts


def test_one_match_where_two_are_expected_says_one_time(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "x += 1"
        code = "x += 2"
        expect = 2
    '''
    source = "def f(x):\n    x += 1\n    return x\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.FAILED
    assert outcome.detail == "step 1 (replace): expected 'x += 1' 2 times, found it 1 time in f"
    assert patched == source


# --------------------------------------------------------------------------- scope


def test_a_missing_function_two_levels_down_names_the_whole_path(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "x += 1"
        code = "x += 2"
    '''
    source = ("class PagedAttention:\n    def forward_decode(self, x):\n        def _launch(x):\n"
              "            x += 1\n        return _launch(x)\n")
    _, outcome = run_steps(steps, source, scope="PagedAttention.forward_decode._launch_v2")
    assert outcome.status is Status.FAILED
    assert "no class or function '_launch_v2' in PagedAttention.forward_decode" in outcome.detail
    patched, outcome = run_steps(steps, source, scope="PagedAttention.forward_decode._launch")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert "            x += 2\n" in patched


# --------------------------------------------------------------------------- snippets: what a template splices


def test_a_captured_statement_is_spliced_back_whole(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = """
        $DECODE
        return output
        """
        code = """
        $DECODE
        torch.cuda.synchronize()
        return output
        """
    '''
    source = ("def f(q, use_v1):\n    if use_v1:\n        output = v1(q)\n    else:\n        output = v2(q)\n"
              "    return output\n")
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(q, use_v1):\n    if use_v1:\n        output = v1(q)\n    else:\n        output = v2(q)\n"
                       "    torch.cuda.synchronize()\n    return output\n")


def test_arguments_captured_after_a_fixed_one_fill_another_call(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "ops.paged_attention_v1(output, $...REST)"
        code = "output = _decode_pytorch($...REST)"
    '''
    source = "def f(output, q, k):\n    ops.paged_attention_v1(output, q, k, scale=0.5)  # vendor kernel\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "def f(output, q, k):\n    output = _decode_pytorch(q, k, scale=0.5)  # vendor kernel\n"


# --------------------------------------------------------------------------- splice: comments of replaced code


def test_a_commented_line_replaced_by_a_block(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = "output = v1(q)"
        code = """
        if use_v2:
            output = v2(q)
        else:
            output = v1(q)
        """
    '''
    source = "def f(q, use_v2):\n    output = v1(q)  # the vendor kernel\n    return output\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    # The line's comment goes on a line of its own above the block that took the line's place.
    assert patched == ("def f(q, use_v2):\n    # the vendor kernel\n    if use_v2:\n        output = v2(q)\n"
                       "    else:\n        output = v1(q)\n    return output\n")


def test_a_block_replaced_by_a_commented_line(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "replace"
        pattern = """
        if use_v2:
            output = v2(q)
        else:
            output = v1(q)
        """
        code = "output = v1(q)  # V2 hangs the card"
    '''
    source = ("def f(q, use_v2):\n    # pick the kernel\n    if use_v2:\n        output = v2(q)\n    else:\n"
              "        output = v1(q)\n    return output\n")
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(q, use_v2):\n    # pick the kernel\n    output = v1(q)  # V2 hangs the card\n"
                       "    return output\n")


# --------------------------------------------------------------------------- insert


def test_insert_after_each_of_two_anchors(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "insert"
        after = "$OUT = ops.paged_attention_v1($...)"
        code = "torch.cuda.synchronize()"
        expect = 2
    '''
    source = ("def f(q):\n    a = ops.paged_attention_v1(q)\n    log(a)\n    b = ops.paged_attention_v1(q)\n"
              "    return a, b\n")
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(q):\n    a = ops.paged_attention_v1(q)\n    torch.cuda.synchronize()\n    log(a)\n"
                       "    b = ops.paged_attention_v1(q)\n    torch.cuda.synchronize()\n    return a, b\n")


def test_insert_before_gives_the_blank_line_to_the_code_and_leaves_the_comment_on_the_anchor(run_steps) -> None:  # type: ignore[no-untyped-def]
    steps = '''
        [[steps]]
        op = "insert"
        before = "use_v1 = $COND"
        code = "max_seq_len = min(max_seq_len, _LIMIT)"
    '''
    source = "def f(max_seq_len):\n    x = 1\n\n    # V1 below 8K\n    use_v1 = max_seq_len <= 8192\n"
    patched, outcome = run_steps(steps, source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("def f(max_seq_len):\n    x = 1\n\n    max_seq_len = min(max_seq_len, _LIMIT)\n\n"
                       "    # V1 below 8K\n    use_v1 = max_seq_len <= 8192\n")


# --------------------------------------------------------------------------- the key a code error names


@pytest.mark.parametrize("step", [
    Replace(pattern=Pattern.parse("use_v1 = $COND"), code="use_v1 = $LIMIT"),
    Insert(anchor=Pattern.parse("use_v1 = $COND"), position="after", code="assert $LIMIT"),
    Insert(anchor=Pattern.parse("use_v1 = $COND"), position="before", code="assert $LIMIT"),
], ids=["replace", "insert-after", "insert-before"])
def test_code_using_an_uncaptured_metavariable_names_the_code_key(step) -> None:  # type: ignore[no-untyped-def]
    module = cst.parse_module("use_v1 = max_seq_len <= 8192\n")
    with pytest.raises(ConfigError) as raised:
        step.apply(module, "")
    assert raised.value.key == "code"
    assert str(raised.value).startswith("the code uses $LIMIT, which the ")


# --------------------------------------------------------------------------- reuse-buffers


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


def test_reuse_buffers_at_module_level(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "m = torch.zeros(4)\nfor x in xs:\n    t = torch.exp(x - m)\n    m.add_(t)\n"
    patched, outcome = run_steps(REUSE.format(extra=""), source)
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == ("m = torch.zeros(4)\n_t = torch.empty_like(m)\nfor x in xs:\n"
                       "    torch.exp(x - m, out=_t)\n    m.add_(_t)\n")


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
    # A list is as good a del target as a tuple (found by mutation testing: the
    # list was left whole, and `del [t, m_blk]` then named a temporary that no
    # longer existed, a NameError on the first pass).
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
