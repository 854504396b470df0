"""Hand edits of the shipped paged_attn.py, as engineers make them, and the same file reformatted.

Each edit finds the statement it changes with ``ast`` (never a line
number), so it holds whatever the fixture's comments and layout. ``EDITS``
maps a name to a function from the vendor's text to the edited text:

- the three mission edits are the hand-written patches' own output
  (``mission_stages`` runs the series one patch at a time);
- a hurried engineer changes a constant, adds a guard, adds a helper
  method and calls it, edits inside the ``try`` of
  ``_forward_prefix_pytorch`` (an f-string with ``{{`` and ``{i}`` in it),
  deletes the forced-V1 line, adds a parameter, and edits a CRLF copy;
- ``diagnostic_version`` builds a 2,000-line copy with diagnostics
  (environment flags, per-process logging sets, validation helpers that
  raise, ``os.getpid()``), as the real history has them.

``reformatted`` rewrites a file without changing its syntax: a comment
above every simple statement, a blank line above every compound one, the
arguments of every call split over lines, and (optionally) CRLF line
endings. ``unrelated_change`` edits code far from any mission scope.
"""

from __future__ import annotations

import ast
import functools
import shutil
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import libcst as cst

from tests.fixtures_patches import VENDOR_SOURCE
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

if TYPE_CHECKING:
    from patcher.authoring.from_edit import LearnedPatch
    from patcher.patchset import Patch

VENDOR_TEXT = VENDOR_SOURCE.decode("utf-8")
TARGET = "vllm/attention/ops/paged_attn.py"
SHIPPED_PATH = SHIPPED


# --------------------------------------------------------------------------- finding statements


def _class(tree: ast.Module) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PagedAttention")


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    cls = _class(tree)
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


def _assignment(scope: ast.AST, name: str) -> ast.Assign:
    return next(n for n in ast.walk(scope) if isinstance(n, ast.Assign)
                and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _insert_after(text: str, node: ast.stmt, code: str) -> str:
    """Insert CODE (dedented) after NODE, at NODE's indentation."""
    lines = _lines(text)
    indent = " " * node.col_offset
    newline = _newline(text)
    added = [indent + line + newline if line else newline for line in textwrap.dedent(code).strip("\n").split("\n")]
    assert node.end_lineno is not None
    return "".join(lines[:node.end_lineno] + added + lines[node.end_lineno:])


def _insert_before(text: str, node: ast.stmt, code: str) -> str:
    lines = _lines(text)
    indent = " " * node.col_offset
    newline = _newline(text)
    added = [indent + line + newline if line else newline for line in textwrap.dedent(code).strip("\n").split("\n")]
    return "".join(lines[:node.lineno - 1] + added + lines[node.lineno - 1:])


def _replace_line(text: str, node: ast.stmt, old: str, new: str) -> str:
    lines = _lines(text)
    line = lines[node.lineno - 1]
    assert line.count(old) == 1, (old, line)
    lines[node.lineno - 1] = line.replace(old, new)
    return "".join(lines)


# --------------------------------------------------------------------------- a hurried engineer's edits


def change_constant(text: str) -> str:
    """Raise the prefill tile from 32 to 64 blocks (a local constant inside the try)."""
    tree = ast.parse(text)
    node = _assignment(_function(tree, "_forward_prefix_pytorch"), "_BLOCKS_PER_TILE")
    return _replace_line(text, node, "= 32", "= 64")


def change_class_constant(text: str) -> str:
    """Lower the PyTorch decode threshold, a class attribute, to 16384."""
    tree = ast.parse(text)
    cls = _class(tree)
    node = next(n for n in cls.body if isinstance(n, ast.Assign) and n.targets[0].id == "_PYTORCH_DECODE_THRESHOLD")  # type: ignore[attr-defined]
    return _replace_line(text, node, "32768", "16384")


def add_guard(text: str) -> str:
    """Return early from forward_decode on an empty batch, before anything reads seq_lens."""
    tree = ast.parse(text)
    node = _assignment(_function(tree, "forward_decode"), "actual_max")
    return _insert_before(text, node, """
        # An empty batch (all sequences finished) has nothing to decode.
        if query.shape[0] == 0:
            return torch.empty_like(query)
    """)


def add_helper_method(text: str) -> str:
    """Add a static helper that checks block tables, and call it at the top of forward_prefix."""
    tree = ast.parse(text)
    decode_pytorch = _function(tree, "_forward_decode_pytorch")
    prefix = _function(tree, "forward_prefix")
    text = _insert_before(text, prefix.body[0], """
        PagedAttention._check_block_tables(block_tables, context_lens, value_cache.shape[3])
    """)
    return _insert_after(text, decode_pytorch, """

        @staticmethod
        def _check_block_tables(block_tables: torch.Tensor, context_lens: torch.Tensor, block_size: int) -> None:
            # A stale table after preemption reads another sequence's cache.
            needed = (int(context_lens.max().item()) + block_size - 1) // block_size
            if needed > block_tables.shape[1]:
                raise RuntimeError(f"block_tables has {block_tables.shape[1]} blocks, context needs {needed}")
    """)


def edit_inside_try(text: str) -> str:
    """Log each sequence of a prefill inside the try of _forward_prefix_pytorch (an f-string with {{ }})."""
    tree = ast.parse(text)
    node = _assignment(_function(tree, "_forward_prefix_pytorch"), "q_len")
    return _insert_after(text, node, """
        if _DEBUG_PREFILL:
            print(f"{{paged_attn}} seq {i}: ctx {ctx_len} q {q_len}", file=sys.stderr)
    """)


def remove_override(text: str) -> str:
    """Delete the forced-V1 line: an edit that only removes code."""
    tree = ast.parse(text)
    decode = _function(tree, "forward_decode")
    node = next(n for n in decode.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                and n.value.value is True)
    lines = _lines(text)
    del lines[node.lineno - 1]
    return "".join(lines)


def add_parameter(text: str) -> str:
    """Give forward_decode one more keyword parameter: only the def's header changes."""
    tree = ast.parse(text)
    decode = _function(tree, "forward_decode")
    lines = _lines(text)
    close = next(i for i in range(decode.lineno, decode.body[0].lineno) if lines[i].lstrip().startswith(")"))
    indent = lines[close - 1][:len(lines[close - 1]) - len(lines[close - 1].lstrip())]
    lines.insert(close, f"{indent}force_pytorch: bool = False,{_newline(text)}")
    return "".join(lines)


def crlf(text: str) -> str:
    """The file with CRLF line endings, as most vendored files have them."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def add_guard_crlf(text: str) -> str:
    """``add_guard`` made in a CRLF copy (the vendor text must be CRLF already: see ``crlf``)."""
    return add_guard(text)


# --------------------------------------------------------------------------- the 2,000-line diagnostic version


def diagnostic_version(text: str) -> str:
    """The vendor file with diagnostics, about 2,000 lines: flags from the environment, logging sets, checks."""
    newline = _newline(text)
    header = [
        "import os",
        "import logging",
        "",
        "logger = logging.getLogger(__name__)",
        "_PID = os.getpid()",
    ]
    flags = [f"_DIAG_{n} = os.environ.get('PAGED_ATTN_DIAG_{n}', '0') == '1'" for n in range(40)]
    helpers: list[str] = []
    for n in range(110):
        helpers += [
            "",
            "",
            f"_logged_{n} = set()",
            "",
            "",
            f"def _check_{n}(block_tables, context_lens, block_size):",
            f'    """Validate the inputs of call site {n}; raise RuntimeError on a bad block table."""',
            f"    if not _DIAG_{n % 40}:",
            "        return",
            "    needed = (int(context_lens.max().item()) + block_size - 1) // block_size",
            "    if needed > block_tables.shape[1]:",
            f"        raise RuntimeError(f'[{{_PID}}] site {n}: block_tables has {{block_tables.shape[1]}} blocks, '",
            "                           f'context needs {needed}')",
            "    key = (tuple(block_tables.shape), int(context_lens.sum().item()))",
            f"    if key not in _logged_{n}:",
            f"        _logged_{n}.add(key)",
            f"        logger.info('[%d] site {n}: %s', os.getpid(), key)",
        ]
    lines = text.split(newline)
    top = next(i for i, line in enumerate(lines) if line.startswith("import torch"))
    body = lines[:top] + header + flags + [""] + lines[top:] + helpers
    result = newline.join(body)
    return result if result.endswith(newline) else result + newline


# --------------------------------------------------------------------------- reformatting


class _Reformat(cst.CSTTransformer):
    """Same syntax, other text: comments, blank lines, calls split over lines."""

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        note = cst.EmptyLine(comment=cst.Comment("# (reformatted)"))
        return updated.with_changes(leading_lines=[*updated.leading_lines, note])

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If:
        return updated.with_changes(leading_lines=[cst.EmptyLine(), *updated.leading_lines])

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        return updated.with_changes(leading_lines=[cst.EmptyLine(), *updated.leading_lines])

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if len(updated.args) < 2:
            return updated
        first = updated.args[0]
        broken = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), indent=True,
                                             last_line=cst.SimpleWhitespace("        "))
        comma = first.comma if isinstance(first.comma, cst.Comma) else cst.Comma()
        return updated.with_changes(args=[first.with_changes(comma=comma.with_changes(whitespace_after=broken)),
                                          *updated.args[1:]])


def reformatted(text: str, *, crlf_endings: bool = True) -> str:
    """TEXT with the same syntax (``ast.dump`` equal) but other comments, blank lines, line breaks and endings."""
    module = cst.parse_module(text.replace("\r\n", "\n"))
    code = module.visit(_Reformat()).code
    assert ast.dump(ast.parse(code)) == ast.dump(ast.parse(text))
    return crlf(code) if crlf_endings else code


def unrelated_change(text: str) -> str:
    """Change code far from every mission scope: swap_blocks gets a log line, copy_blocks a guard."""
    tree = ast.parse(text)
    swap = _function(tree, "swap_blocks")
    text = _insert_before(text, swap.body[0], "print('swap_blocks', src_to_dst.shape)")
    tree = ast.parse(text)
    copy = _function(tree, "copy_blocks")
    return _insert_before(text, copy.body[0], """
        if not kv_caches:
            return
    """)


# --------------------------------------------------------------------------- the mission edits


def mission_stages() -> list[bytes]:
    """The shipped file before the series and after each of its three patches, as apply writes them."""
    from patcher.patchset import load_patch_set
    from patcher.patchset.runner import patch_source
    from tests.fixtures_vendor import PATCHES, SHIPPED

    patches = load_patch_set(PATCHES).patches
    stages = [VENDOR_SOURCE]
    for count in range(1, len(patches) + 1):
        result = patch_source(SHIPPED, VENDOR_SOURCE, patches[:count])
        assert not result.failed, result.outcomes
        stages.append(result.patched)
    return stages


EDITS: dict[str, Callable[[str], str]] = {
    "change-constant": change_constant,
    "change-class-constant": change_class_constant,
    "add-guard": add_guard,
    "add-helper-method": add_helper_method,
    "edit-inside-try": edit_inside_try,
    "remove-override": remove_override,
    "add-parameter": add_parameter,
}


def write(path: Path, text: str | bytes) -> Path:
    """Write TEXT to PATH as bytes (no newline translation); return PATH."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def edited_copy(tmp_path: Path) -> Path:
    """A copy of the vendor tree under TMP_PATH/edited, for a test to edit by hand and learn patches from."""
    tree = tmp_path / "edited" / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, tree)
    return tree


# --------------------------------------------------------------------------- learning them


def edit_pairs() -> dict[str, tuple[str, str]]:
    """Every (original, edited) text pair the learner is checked on, by name."""
    pairs = {name: (VENDOR_TEXT, edit(VENDOR_TEXT)) for name, edit in EDITS.items()}
    windows = crlf(VENDOR_TEXT)
    pairs["add-guard-crlf"] = (windows, add_guard_crlf(windows))
    diagnostic = diagnostic_version(VENDOR_TEXT)
    pairs["diagnostic-change-constant"] = (diagnostic, change_constant(diagnostic))
    pairs["diagnostic-add-guard"] = (diagnostic, add_guard(diagnostic))
    return pairs


@functools.lru_cache(maxsize=None)
def learned(name: str) -> tuple[str, str, "LearnedPatch"]:
    """Learn the patch for edit NAME (cached: learning is a pure function of the two texts)."""
    from patcher.authoring.from_edit import learn_patch

    original, edited = edit_pairs()[name]
    patch = learn_patch(name, original.encode(), edited.encode(), target=TARGET, shipped=SHIPPED_PATH)
    return original, edited, patch


def load_learned(text: str, patch_id: str, folder: Path) -> "Patch":
    """Load a learned patch's TOML as the only (active) patch of a scratch patch set in FOLDER."""
    from patcher.patchset import load_patch_set
    from tests.fixtures_patches import write_patch_set

    (patch,) = load_patch_set(write_patch_set(folder, {f"{patch_id}.toml": text})).patches
    return patch


MISSION_IDS = ("decode-relearned", "pregather-relearned", "buffers-relearned")


@functools.lru_cache(maxsize=None)
def learned_mission() -> tuple[tuple[bytes, bytes, str], ...]:
    """(before, after, TOML) of each mission patch, learned back from consecutive stages of the series (cached)."""
    from patcher.authoring.from_edit import learn_patch

    stages = mission_stages()
    return tuple((before, after, learn_patch(patch_id, before, after, target=TARGET, shipped=SHIPPED_PATH).text)
                 for patch_id, before, after in zip(MISSION_IDS, stages, stages[1:]))


# --------------------------------------------------------------------------- edits no step can say


def comment_only_edit(text: str) -> str:
    """Reword the comment above the forced-V1 line: no code changes."""
    old = "# device enough parallel work."
    assert text.count(old) == 1
    return text.replace(old, "# device enough parallel work (measured on the BI-V100).")


def header_comment_edit(text: str) -> str:
    """Change the file's opening comment block, outside every statement, along with the guard."""
    assert text.startswith("# PagedAttention ops for the BI-V100")
    return add_guard(text.replace("# PagedAttention ops for the BI-V100", "# PagedAttention ops for the BI-V100 (patched)", 1))


def dollar_edit(text: str) -> str:
    """Log a line holding '$', which a template would read as a metavariable."""
    tree = ast.parse(text)
    node = _assignment(_function(tree, "forward_decode"), "actual_max")
    return _insert_after(text, node, 'print("decode budget: $5 per 1K tokens")')


UNROLLED_BLOCK = """\
m_blk = s.amax(dim=-1)
m_new = torch.maximum(m, m_blk)
exp_s = s - m_new.unsqueeze(-1)
exp_s.exp_()
corr = torch.exp(m - m_new)
m.copy_(m_new)
l.mul_(corr).add_(exp_s.sum(dim=-1))
o.mul_(corr.unsqueeze(-1)).add_(torch.matmul(exp_s, v))
"""


def with_unrolled_updates(text: str, copies: int = 3) -> str:
    """The vendor file with a helper that repeats the same online-softmax update COPIES times, line for line."""
    body = "\n".join(textwrap.indent(UNROLLED_BLOCK, "    ") for _ in range(copies))
    return text + f"\n\ndef _online_softmax_unrolled(s, m, l, o, v):\n{body}    return m, l, o\n"


def edit_every_copy(text: str) -> str:
    """Make the middle copy's change in every copy: what the refusal of ``edit_middle_copy`` suggests."""
    return text.replace("corr = torch.exp(m - m_new)\n", "corr = torch.exp(m - m_new).clamp_(max=1.0)\n")


def edit_middle_copy(text: str) -> str:
    """Change one line of the middle copy only (the corr update), leaving the others as they were."""
    tree = ast.parse(text)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_online_softmax_unrolled")
    corr = [n for n in helper.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "corr"]
    return _replace_line(text, corr[len(corr) // 2], "torch.exp(m - m_new)", "torch.exp(m - m_new).clamp_(max=1.0)")


def insert_in_middle_copy(text: str) -> str:
    """Add a line after the middle copy's ``m.copy_(m_new)`` only: an insert whose place no anchor tells apart."""
    tree = ast.parse(text)
    helper = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_online_softmax_unrolled")
    copies = [n for n in helper.body if isinstance(n, ast.Expr) and ast.unparse(n) == "m.copy_(m_new)"]
    return _insert_after(text, copies[len(copies) // 2], "m.nan_to_num_(0.0)")
