"""The patch file ``new --from-edit`` writes reads as a reviewer expects, and TOML and Jinja give back the code as edited.

The whole file for one edit: the header comment, a DEP-3 description that
names both files and each step's lines, the markers, requires, the step,
and an example holding the scope alone (its class with only the members
that matter; the whole file for an edit at module level). Code that a
TOML literal string cannot hold (three single quotes, control
characters, DEL) is written escaped, Jinja's ``{{``, ``{%`` and ``{#``
are escaped for the rendering every code and pattern gets, and a line
break inside a token of a CRLF file is written LF (the operations give
it the file's line ending): in every case the patch turns ORIGINAL into
EDITED byte for byte.
"""

from __future__ import annotations

import datetime
import textwrap
from pathlib import Path

import pytest

from patcher.authoring.from_edit import LearnedPatch, learn_patch
from patcher.patchset.runner import Status, patch_source

from tests.authoring.test_from_edit_learned_steps import CASES, DECODE, _replace
from tests.fixtures_edits import load_learned

TODAY = datetime.date(2026, 12, 1)


def _learn(original: str, edited: str, patch_id: str = "hand-edit", **names: str) -> LearnedPatch:
    return learn_patch(patch_id, original.encode(), edited.encode(), target="x.py", shipped="x.py", today=TODAY,
                       **names)


def _applies(learned: LearnedPatch, original: str, edited: str, tmp_path: Path) -> None:
    """The patch file, loaded as the series loader loads it, turns ORIGINAL into EDITED and recognises it."""
    patch = load_learned(learned.text, learned.patch_id, tmp_path)
    result = patch_source("x.py", original.encode(), [patch])
    assert result.outcomes[0].status is Status.APPLIED, result.outcomes[0].message
    assert result.patched == edited.encode()
    assert patch_source("x.py", edited.encode(), [patch]).outcomes[0].status is Status.ALREADY_APPLIED


def _example(text: str, key: str) -> str:
    """The example's BEFORE or AFTER, as the file writes it (a literal string)."""
    start = text.index(f"\n{key} = '''\n", text.index("[[examples]]")) + len(f"\n{key} = '''\n")
    return text[start:text.index("'''", start)]


WHOLE_FILE = """\
# Patch elif-threshold, learned by 'patcher new --from-edit' on 2026-12-01. Say why in the
# description, run 'patcher test --activate elif-threshold' (it lists the patch in the series
# once its cases pass), then 'patcher diff VENDOR' to see it on a drop.

id = "elif-threshold"
description = '''
Hand edit of PagedAttention.forward_decode, learned by patcher new --from-edit

Learned from paged_attn.orig.py (the vendor's qwen3_6_scripts/paged_attn.py) and paged_attn.py; applied to the \
first, this patch gives the second byte for byte.
- step 1: replace in PagedAttention.forward_decode, at line 12 of paged_attn.orig.py (line 12 of paged_attn.py)

Say here why the vendor code needs this change, and why the patched code behaves the same wherever it must.
'''
origin = "other, a hand edit learned by patcher new --from-edit"
last-update = "2026-12-01"
target = "vllm/attention/ops/paged_attn.py"  # where the image runs it
scope = "PagedAttention.forward_decode"

# Code the edit added, once each: when all of it is there, the patch is already applied.
applied-when = [
    "use_v1 = actual_max < 16384",
]
# Code the added code reads from the vendor's: without it the patch does not apply.
requires = [
    "actual_max = $_",
]

[[steps]]
op = "replace"
pattern = '''
use_v1 = False
'''
code = '''
use_v1 = actual_max < 16384
'''

# The scope as the vendor wrote it, and as the hand edit left it: 'patcher test' runs it.
[[examples]]
name = "the hand edit"
before = '''
{before}'''
after = '''
{after}'''
"""


def test_the_whole_patch_file_for_one_edit() -> None:
    original, edited = CASES["elif-body"]
    learned = learn_patch("elif-threshold", original.encode(), edited.encode(),
                          target="vllm/attention/ops/paged_attn.py", shipped="qwen3_6_scripts/paged_attn.py",
                          original_name="paged_attn.orig.py", edited_name="paged_attn.py", today=TODAY)
    # The example is the class with its one method, less the imports and the blank line under the class line.
    scope = original[original.index("class PagedAttention:"):].replace("class PagedAttention:\n\n",
                                                                        "class PagedAttention:\n")
    assert learned.text == WHOLE_FILE.format(before=scope, after=scope.replace("use_v1 = False",
                                                                               "use_v1 = actual_max < 16384"))
    assert (learned.patch_id, learned.target, learned.shipped) == (
        "elif-threshold", "vllm/attention/ops/paged_attn.py", "qwen3_6_scripts/paged_attn.py")
    assert learned.places == ("at line 12 of paged_attn.orig.py (line 12 of paged_attn.py)",)
    assert [(m.scope, m.pattern) for m in learned.markers] == [
        ("PagedAttention.forward_decode", "use_v1 = actual_max < 16384\n")]
    assert [(m.scope, m.pattern) for m in learned.requires] == [("PagedAttention.forward_decode", "actual_max = $_")]


# The vendor's layout around a method: module constants, a class attribute under a comment, sibling methods,
# a module-level function after the class.
LAYOUT = '''\
import torch

_PARTITION_SIZE = 512


class PagedAttention:
    # V1 fails past this many tokens on the BI-V100 (shared memory).
    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def get_supported_head_sizes():
        return [64, 80, 96, 112, 128, 256]

    @staticmethod
    def forward_decode(query, seq_lens):
        use_v1 = True
        return query


def swap_blocks(src, dst, src_to_dst):
    pass
'''


def test_the_example_is_the_scope_in_its_class_with_the_class_statements_kept(tmp_path: Path) -> None:
    edited = LAYOUT.replace("use_v1 = True", "use_v1 = query.shape[0] > 1")
    learned = _learn(LAYOUT, edited)
    before = '''\
class PagedAttention:
    # V1 fails past this many tokens on the BI-V100 (shared memory).
    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def forward_decode(query, seq_lens):
        use_v1 = True
        return query
'''
    assert _example(learned.text, "before") == before
    assert _example(learned.text, "after") == before.replace("use_v1 = True", "use_v1 = query.shape[0] > 1")
    _applies(learned, LAYOUT, edited, tmp_path)


def test_a_method_the_step_anchors_on_is_kept_in_the_example(tmp_path: Path) -> None:
    # A new method inserted between two others: the method it is inserted before is the anchor.
    edited = LAYOUT.replace("    @staticmethod\n    def forward_decode",
                            "    @staticmethod\n    def max_blocks(seq_len, block_size):\n"
                            "        return (seq_len + block_size - 1) // block_size\n\n"
                            "    @staticmethod\n    def forward_decode")
    learned = _learn(LAYOUT, edited)
    (step,) = learned.steps
    assert (step.op, step.position, step.scope) == ("insert", "before", "PagedAttention")
    before = _example(learned.text, "before")
    assert "def forward_decode(query, seq_lens):" in before and "def get_supported_head_sizes" not in before
    assert "_PYTORCH_DECODE_THRESHOLD = 32768" in before
    assert "def max_blocks(seq_len, block_size):" in _example(learned.text, "after")
    _applies(learned, LAYOUT, edited, tmp_path)


def test_an_edit_at_module_level_has_the_whole_file_as_example(tmp_path: Path) -> None:
    original, edited = CASES["module-import"]
    learned = _learn(original, edited)
    assert _example(learned.text, "before") == original
    assert _example(learned.text, "after") == edited
    assert 'scope = ""\n' in learned.text
    assert "Hand edit of the module, learned by patcher new --from-edit\n" in learned.text
    assert "- step 1: insert after an anchor in the module, after line 1 of ORIGINAL (line 2 of EDITED)\n" \
        in learned.text
    _applies(learned, original, edited, tmp_path)


def test_the_description_names_each_scope_once_and_each_step_with_its_lines() -> None:
    original, edited = CASES["same-line-in-two-places"]
    text = _learn(original, edited).text
    assert "Hand edit of PagedAttention.forward_decode, learned by patcher new --from-edit\n" in text
    assert ("- step 1: insert after an anchor in PagedAttention.forward_decode, after line 12 of ORIGINAL "
            "(line 13 of EDITED)\n- step 2: insert after an anchor in PagedAttention.forward_decode, after line 14 "
            "of ORIGINAL (line 16 of EDITED)\n") in text
    original, edited = CASES["fixture-add-helper-method"]
    text = _learn(original, edited).text
    assert "Hand edit of PagedAttention, PagedAttention.forward_prefix, learned by patcher new --from-edit\n" in text


def test_the_patch_scope_is_the_one_most_steps_use_and_the_innermost_on_a_tie() -> None:
    original, edited = CASES["fixture-add-helper-method"]  # one step in the class, one in forward_prefix
    learned = _learn(original, edited)
    assert 'scope = "PagedAttention.forward_prefix"\n' in learned.text
    assert [s.scope for s in learned.steps] == ["PagedAttention", "PagedAttention.forward_prefix"]
    assert '[[steps]]\nop = "insert"\nscope = "PagedAttention"\n' in learned.text
    assert '[[steps]]\nop = "replace"\npattern = ' in learned.text  # the patch's own scope is not repeated
    # Two steps in the class, one in forward_decode: the class, and the other step names its scope.
    edited = (LAYOUT.replace("_PYTORCH_DECODE_THRESHOLD = 32768", "_PYTORCH_DECODE_THRESHOLD = 16384")
              .replace("        return [64, 80, 96, 112, 128, 256]\n",
                       "        return [64, 80, 96, 112, 128, 256]\n\n    _V2_UNAVAILABLE = False\n")
              .replace("use_v1 = True", "use_v1 = query.shape[0] > 1"))
    learned = _learn(LAYOUT, edited)
    assert [s.scope for s in learned.steps] == ["PagedAttention", "PagedAttention",
                                                "PagedAttention.forward_decode"]
    assert 'scope = "PagedAttention"\n' in learned.text
    assert '[[steps]]\nop = "replace"\nscope = "PagedAttention.forward_decode"\npattern = ' in learned.text


def test_a_step_at_module_level_makes_the_module_the_patch_scope(tmp_path: Path) -> None:
    # A step's empty scope would read as the patch's own: only the patch's scope can name the module.
    for edited in (_replace(CASES["elif-body"][1], "import torch\n", "import torch\nimport os\n"),
                   _replace(CASES["same-line-in-two-places"][1], "import torch\n", "import torch\nimport os\n")):
        learned = _learn(DECODE, edited)
        assert 'scope = ""\n' in learned.text
        assert '[[steps]]\nop = "insert"\nafter = \'\'\'\nimport torch\n' in learned.text
        assert '[[steps]]\nop = "replace"\nscope = "PagedAttention.forward_decode"\n' in learned.text or \
            '[[steps]]\nop = "insert"\nscope = "PagedAttention.forward_decode"\n' in learned.text
        _applies(learned, DECODE, edited, tmp_path / str(len(learned.steps)))


# --------------------------------------------------------------------------- what TOML and Jinja must carry


ESCAPED = {
    # A docstring in single quotes: a literal string cannot hold three of them.
    "three-single-quotes": ("        '''A note.'''\n", "code = \"'''A note.'''\\n\"\n"),
    # An ANSI colour reset typed into a string, and a DEL: control characters a literal string cannot hold.
    "escape-character": ('        print("\x1b[0m")\n', 'code = "print(\\"\\u001b[0m\\")\\n"\n'),
    "delete-character": ('        print("\x7f")\n', 'code = "print(\\"\\u007f\\")\\n"\n'),
    # Jinja syntax in a log format: rendered as it is written.
    "jinja-comment-and-block": ('        print("{# tokens} {%s}" % 3)\n',
                                "code = '''\nprint(\"{{ '{' }}# tokens} {{ '{' }}%s}\" % 3)\n'''\n"),
}


@pytest.mark.parametrize("name", sorted(ESCAPED))
def test_code_toml_or_jinja_would_misread_is_written_so_that_it_comes_back_as_edited(name: str,
                                                                                    tmp_path: Path) -> None:
    added, written = ESCAPED[name]
    edited = _replace(DECODE, "        return output\n", added + "        return output\n")
    learned = _learn(DECODE, edited)
    assert written in learned.text
    _applies(learned, DECODE, edited, tmp_path)


def test_a_file_ending_in_a_quote_without_a_final_newline_keeps_its_example_readable(tmp_path: Path) -> None:
    original = DECODE + "\n\nNAME = 'dec'"
    edited = DECODE + "\n\nNAME = 'decode'"
    learned = _learn(original, edited)
    # Two quotes may end a literal string's text: the example stays a literal string, as the file has it.
    assert "\nafter = '''\n" + DECODE + "\n\nNAME = 'decode''''\n" in learned.text
    _applies(learned, original, edited, tmp_path)


def test_a_multi_line_string_added_to_a_crlf_file_is_learned(tmp_path: Path) -> None:
    # Most vendored files are CRLF; the line breaks inside the new docstring are CRLF too.
    crlf = DECODE.replace("\n", "\r\n")
    docstring = '        """Decode one token per sequence.\r\n\r\n        Returns the attention output."""\r\n'
    edited = _replace(crlf, "        actual_max = int", docstring + "        actual_max = int")
    learned = _learn(crlf, edited)
    (step,) = learned.steps
    assert step.code == '"""Decode one token per sequence.\n\n        Returns the attention output."""\n'
    assert "\r" not in learned.text
    _applies(learned, crlf, edited, tmp_path)
    # A backslash continuation is a line break inside the statement's tokens too.
    continued = _replace(crlf, "        return output\r\n", "        scale = 1.0 + \\\r\n            0.5\r\n"
                                                              "        return output\r\n")
    _applies(_learn(crlf, continued), crlf, continued, tmp_path / "continued")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_each_steps_place_names_its_lines_in_both_files_whatever_their_line_endings(newline: str) -> None:
    original, edited = (text.replace("\n", newline) for text in CASES["a-loop-after-a-try"])
    assert _learn(original, edited).places == ("after line 20 of ORIGINAL (lines 21-22 of EDITED)",)


def test_a_statement_holding_a_multi_line_string_is_matched_in_a_crlf_file(tmp_path: Path) -> None:
    crlf = DECODE.replace("\n", "\r\n")
    original = _replace(crlf, "        return output\r\n", '        """Decode.\r\n\r\n        Fast."""\r\n'
                                                            "        return output\r\n")
    edited = original.replace("Fast.", "Faster.")
    learned = _learn(original, edited)
    assert [s.pattern for s in learned.steps] == ['"""Decode.\n\n        Fast."""\n']
    _applies(learned, original, edited, tmp_path)
    assert textwrap.dedent(learned.steps[0].code) == '"""Decode.\n\n        Faster."""\n'
