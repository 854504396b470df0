"""What ``new --from-edit`` writes for each kind of edit: the steps, markers and requires, to the character.

Each edit is one a hurried engineer makes in the shape of the vendor's
decode and prefix code: a line changed in an ``elif``, ``else``,
``except`` or ``finally`` block, a statement added first, last or after a
compound statement, a header or decorator changed (its blocks carried
through as ``$...BODY``), an import added at module level, the same line
added in two places, a line changed in one of two identical loops (the
enclosing statement taken in, one or two levels up, or the statement
beside it), a line or a header changed with its end-of-line comment
kept (the code leaves the comment to ``replace``, which keeps it beside
the line), a call wrapped over lines around one it holds, and the
fixture's own edits of ``paged_attn.py``. What is pinned is what the
author reads and reviews in the patch file: the pattern or anchor, how
far it is generalised (``$...ARGS`` for argument lists the edit left
alone, but not for a call the edit laid out anew, ``$LIT`` for literals
of untouched lines, ``$...`` and ``$_`` in anchors; nothing ambiguous),
the code, ``expect``, the marker and the ``requires``. ``--scope`` naming
the scope the learner finds on its own learns the same patch.
"""

from __future__ import annotations

import ast
import datetime
from pathlib import Path

import pytest

from patcher.authoring.from_edit import LearnedPatch, learn_patch

from tests.fixtures_edits import VENDOR_TEXT, _function, _lines, edit_pairs

TODAY = datetime.date(2026, 12, 1)

# forward_decode cut down to its dispatch: every kind of block a change can sit in.
DECODE = '''\
import torch


class PagedAttention:

    @staticmethod
    def forward_decode(query, seq_lens, max_seq_len):
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > 32768:
            return query
        elif actual_max > 8192:
            use_v1 = False
        else:
            use_v1 = True
        try:
            output = torch.empty_like(query)
        except RuntimeError:
            output = None
        finally:
            pass
        return output
'''

# The online-softmax maximum in two loops whose bodies read alike: only the loop header tells them apart.
TWO_LOOPS = '''\
import torch


def online_max(ctx_scores, new_scores, m):
    for s in ctx_scores:
        s = s.float()
        if s is not None:
            m_blk = s.amax(dim=-1)
            m.copy_(torch.maximum(m, m_blk))
        del s
    for s in new_scores:
        s = s.float()
        if s is not None:
            m_blk = s.amax(dim=-1)
            m.copy_(torch.maximum(m, m_blk))
        del s
    return m
'''

# Two identical loops: only the statement before each tells them apart.
SIBLINGS = '''\
import torch


def online_max(scores, m):
    m.zero_()
    for s in scores:
        m_blk = s.amax(dim=-1)
        m.copy_(m_blk)
    m.fill_(1.0)
    for s in scores:
        m_blk = s.amax(dim=-1)
        m.copy_(m_blk)
    return m
'''

# Two loops alike, each beside the same statements: only the line next to the edited one (in the loop, and
# not outside it, where the same pair stands) tells them apart.
NEIGHBOURS = '''\
import torch


def online_max(scores, m, m_blk):
    m.add_(1.0)
    m.copy_(m_blk)
    m.zero_()
    for s in scores:
        m.zero_()
        m.copy_(m_blk)
    m.zero_()
    for s in scores:
        m.add_(1.0)
        m.copy_(m_blk)
    m.zero_()
    return m
'''
# The same, the edited line first in its loop.
NEIGHBOURS_AFTER = (NEIGHBOURS.replace("    m.add_(1.0)\n    m.copy_(m_blk)\n", "    m.copy_(m_blk)\n    m.add_(1.0)\n")
                    .replace("        m.zero_()\n        m.copy_(m_blk)\n", "        m.copy_(m_blk)\n        m.zero_()\n")
                    .replace("        m.add_(1.0)\n        m.copy_(m_blk)\n", "        m.copy_(m_blk)\n        m.add_(1.0)\n"))


# The vendor's class layout, a class attribute first (no comment above it).
LAYOUT = '''\
import torch


class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def get_supported_head_sizes():
        return [64, 80, 96, 112, 128, 256]

    @staticmethod
    def forward_decode(query, seq_lens):
        return query
'''

# Scores computed twice; the hurried edit makes the second scaling a copy of the first.
SCALED_TWICE = '''\
import torch


def decode_twice(q, k, scale):
    s = torch.matmul(q, k)
    s.mul_(scale)
    s = torch.matmul(q, k)
    s.div_(scale)
    return s
'''
# The same, the second scaling first in a block.
SCALED_IN_A_BLOCK = SCALED_TWICE.replace("    s = torch.matmul(q, k)\n    s.div_(scale)\n    return s\n",
                                         "    if s.numel() > 0:\n        s.div_(scale)\n        s = s.float()\n"
                                         "    return s\n")

# The dispatch with the end-of-line comments engineers leave: on a line, and on a compound statement's header.
NOTED = (DECODE.replace("use_v1 = True\n", "use_v1 = True  # BI-V100: no V2 kernel\n")
         .replace("if actual_max > 32768:\n", "if actual_max > 32768:  # the PyTorch path\n"))

# The online-softmax maximum in one line: a call inside a call inside a call.
ONE_LINE_MAX = '''\
import torch


def online_max(s, m):
    m.copy_(torch.maximum(m, s.amax(dim=-1)))
    return m
'''


def _without_warning(text: str) -> str:
    """The vendor's prefill with the WARNING print of the block-table guard deleted."""
    guard = next(n for n in ast.walk(_function(ast.parse(text), "_forward_prefix_pytorch")) if isinstance(n, ast.If)
                 and "block_tables.shape[1]" in ast.unparse(n.test))
    lines = _lines(text)
    del lines[guard.body[0].lineno - 1:guard.body[0].end_lineno]
    return "".join(lines)


def _replace(text: str, old: str, new: str, occurrence: int = 1) -> str:
    """TEXT with the OCCURRENCE-th (1-based) OLD replaced by NEW."""
    assert text.count(old) >= occurrence, (old, text.count(old))
    at = -1
    for _ in range(occurrence):
        at = text.index(old, at + 1)
    return text[:at] + new + text[at + len(old):]


def _phase_two(text: str, old: str, new: str, *, insert: bool = False) -> str:
    """Change (or add a line after) the ``corr`` update of phase 2 of the vendor's prefill only."""
    tree = ast.parse(text)
    loop = next(n for n in ast.walk(_function(tree, "_forward_prefix_pytorch")) if isinstance(n, ast.For)
                and getattr(n.target, "id", "") == "kc_start")
    node = next(n for n in ast.walk(loop) if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "corr")
    lines = _lines(text)
    line = lines[node.lineno - 1]
    if insert:
        lines.insert(node.lineno, line[:len(line) - len(line.lstrip())] + new + "\n")
    else:
        assert line.count(old) == 1
        lines[node.lineno - 1] = line.replace(old, new)
    return "".join(lines)


CASES: dict[str, tuple[str, str]] = {
    "elif-body": (DECODE, _replace(DECODE, "use_v1 = False", "use_v1 = actual_max < 16384")),
    "else-body": (DECODE, _replace(DECODE, "use_v1 = True", "use_v1 = max_seq_len <= 8192")),
    "except-body": (DECODE, _replace(DECODE, "output = None", "output = torch.zeros_like(query)")),
    "finally-body": (DECODE, _replace(DECODE, "            pass\n", "            print('decoded')\n")),
    "first-statement": (DECODE, _replace(DECODE, "        actual_max = int", "        assert query.dim() == 3\n"
                                                                            "        actual_max = int")),
    "after-a-try": (DECODE, _replace(DECODE, "        return output\n", "        output.mul_(1.0)\n"
                                                                         "        return output\n")),
    "a-loop-after-a-try": (DECODE, _replace(DECODE, "        return output\n",
                                            "        while output is None:\n"
                                            "            output = torch.empty_like(query)\n"
                                            "        return output\n")),
    "if-header": (DECODE, _replace(DECODE, "if actual_max > 32768:", "if actual_max > 65536:")),
    "decorator": (DECODE, _replace(DECODE, "    @staticmethod\n", "    @staticmethod\n    @torch.no_grad()\n")),
    "module-import": (DECODE, _replace(DECODE, "import torch\n", "import torch\nimport os\n")),
    "same-line-in-two-places": (DECODE, _replace(_replace(DECODE, "use_v1 = False\n",
                                                          "use_v1 = False\n            print(actual_max)\n"),
                                                 "use_v1 = True\n", "use_v1 = True\n            print(actual_max)\n")),
    "a-call-twice-is-left-as-written": (DECODE, _replace(DECODE, "output = torch.empty_like(query)\n",
                                                         "output = torch.empty_like(query) + torch.empty_like(query)\n")),
    "a-call-once-is-carried-through": (DECODE, _replace(DECODE, "output = torch.empty_like(query)\n",
                                                        "output = torch.empty_like(query)\n"
                                                        "            output.add_(torch.empty_like(query))\n")),
    "a-line-keeping-its-comment": (NOTED, _replace(NOTED, "use_v1 = True  #", "use_v1 = max_seq_len <= 8192  #")),
    "a-header-keeping-its-comment": (NOTED, _replace(NOTED, "if actual_max > 32768:  #", "if actual_max > 65536:  #")),
    # The outer call wrapped over lines (kept as written: carried through, it would undo that), the inner one not.
    "a-call-rewrapped-and-one-inside-it-carried-through": (
        ONE_LINE_MAX, _replace(ONE_LINE_MAX, "    m.copy_(torch.maximum(m, s.amax(dim=-1)))\n",
                               "    m.copy_(\n        torch.maximum(m, s.amax(dim=-1))\n    ).nan_to_num_(0.0)\n")),
    "one-of-two-loops-two-levels-up": (TWO_LOOPS, _replace(TWO_LOOPS, "m.copy_(torch.maximum(m, m_blk))",
                                                           "torch.maximum(m, m_blk, out=m)", occurrence=2)),
    "one-of-two-loops-by-its-neighbour": (SIBLINGS, _replace(SIBLINGS, "m.copy_(m_blk)", "m.copy_(m_blk.clamp(min=0))",
                                                             occurrence=2)),
    "a-line-added-in-one-of-two-loops": (SIBLINGS, _replace(SIBLINGS, "        m.copy_(m_blk)\n",
                                                            "        m_blk.clamp_(min=0)\n        m.copy_(m_blk)\n",
                                                            occurrence=2)),
    "a-line-added-first-in-one-of-two-loops": (SIBLINGS, _replace(SIBLINGS, "    for s in scores:\n",
                                                                  "    for s in scores:\n        s = s.float()\n",
                                                                  occurrence=2)),
    "a-line-added-last-in-one-of-two-loops": (SIBLINGS, _replace(SIBLINGS, "        m.copy_(m_blk)\n",
                                                                 "        m.copy_(m_blk)\n        m.nan_to_num_(0.0)\n",
                                                                 occurrence=2)),
    "one-of-two-loops-by-the-line-before-it": (NEIGHBOURS, _replace(NEIGHBOURS, "m.copy_(m_blk)",
                                                                    "m.copy_(m_blk.float())", occurrence=3)),
    "one-of-two-loops-by-the-line-after-it": (NEIGHBOURS_AFTER, _replace(NEIGHBOURS_AFTER, "m.copy_(m_blk)",
                                                                         "m.copy_(m_blk.float())", occurrence=3)),
    # Removals: nothing new to mark but where code now meets, seen from the block (or the scope) around it.
    "a-warning-print-deleted": (VENDOR_TEXT, _without_warning(VENDOR_TEXT)),
    "a-class-attribute-deleted": (LAYOUT, LAYOUT.replace("    _PYTORCH_DECODE_THRESHOLD = 32768\n", "")),
    # Added code the original already holds: marked by the statement it now stands before or after.
    "a-line-moved-down": (SCALED_TWICE, SCALED_TWICE.replace("    s.mul_(scale)\n    s = torch.matmul(q, k)\n",
                                                              "    s = torch.matmul(q, k)\n    s.mul_(scale)\n")),
    "a-line-doubled": (SCALED_TWICE, SCALED_TWICE.replace("    return s\n", "    s.div_(scale)\n    return s\n")),
    "a-line-made-a-copy-of-one-above": (SCALED_TWICE, SCALED_TWICE.replace("s.div_(scale)", "s.mul_(scale)")),
    "a-line-first-in-a-block-made-a-copy": (SCALED_IN_A_BLOCK, SCALED_IN_A_BLOCK.replace("s.div_(scale)",
                                                                                           "s.mul_(scale)")),
    "phase-two-update": (VENDOR_TEXT, _phase_two(VENDOR_TEXT, "torch.exp(m - m_new)",
                                                 "torch.exp(m - m_new).nan_to_num_(0.0)")),
    "phase-two-insert": (VENDOR_TEXT, _phase_two(VENDOR_TEXT, "", "corr.nan_to_num_(0.0)", insert=True)),
    **{f"fixture-{name}": pair for name, pair in edit_pairs().items()
       if name in ("add-guard", "change-constant", "remove-override", "add-helper-method")},
}


def learn(original: str, edited: str, **options: object) -> LearnedPatch:
    """Learn the patch from ORIGINAL to EDITED (as x.py), dated TODAY."""
    return learn_patch("hand-edit", original.encode(), edited.encode(), target="x.py", shipped="x.py",
                       today=TODAY, **options)  # type: ignore[arg-type]


def body_of(text: str) -> str:
    """The part of a learned patch file after its header and before its example."""
    return text[text.index("\n# Code the edit added"):text.index("\n# The scope as the vendor wrote it")].strip("\n")


# What each edit's patch file holds between its header and its example, to the character: a case file an edit,
# named for it, as the author reads it in the patch file.
EXPECTED = Path(__file__).parent / "learned_steps"


@pytest.mark.parametrize("name", sorted(path.stem for path in EXPECTED.glob("*.toml")))
def test_the_learned_steps_markers_and_requires(name: str) -> None:
    original, edited = CASES[name]
    expected = (EXPECTED / f"{name}.toml").read_text(encoding="utf-8")
    assert body_of(learn(original, edited).text) == expected.strip("\n")


# Edits told apart only by the compound statements around them, up to the scope: --scope naming that very scope
# must leave every one of those statements to the learner.
@pytest.mark.parametrize("name", ["one-of-two-loops-two-levels-up", "one-of-two-loops-by-its-neighbour",
                                  "a-line-added-in-one-of-two-loops"])
def test_scope_naming_the_edits_own_scope_learns_the_same_patch(name: str) -> None:
    original, edited = CASES[name]
    learned = learn(original, edited)
    assert learn(original, edited, scope=learned.steps[0].scope).text == learned.text
