"""A large target is parsed only where the series can look, and patched exactly as a whole parse patches it.

``patchset/sparse.py`` keeps every statement no search of the series can
match as its source text (an ``Opaque`` node) and lets libcst parse the
rest from a skeleton of the file. These tests build the shapes that could
tell the two apart (comments after a statement at every depth, decorators,
clauses, strings and brackets over several lines that hold ``class`` and
``def`` lines, tabs, CRLF, no final newline, a BOM, another encoding) and
check that the outcome is the whole parse's byte for byte, that the sparse
parse really happened, and that a failure is the whole parse's failure.
"""

from __future__ import annotations

import codecs
from typing import Any, Callable

import libcst as cst
import pytest

from patcher.patchset import runner, sparse
from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchSet
from patcher.patchset.runner import Status, patch_source
from patcher.patchset.sparse import Opaque, logical_lines, parse_sparse
from tests.fixtures_patches import patch_toml, replace_step
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE
from tests.patchset.conftest import HELPERS, MEMBERS, vendor_file_with_helpers

VENDOR = (VENDOR_TREE / SHIPPED).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def series() -> PatchSet:
    return load_patch_set(PATCHES, templates=ROOT / "templates")


@pytest.fixture
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse sparsely whatever the size (the shapes below are small)."""
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)


def _patches(series: PatchSet) -> Any:
    return series.for_target(series.patches[0].target)


# --- the shapes ------------------------------------------------------------------------------

VARIANTS = ["lf", "tabs", "crlf", "no-final-newline"]


def _outcome(source: bytes, patches: Any, *, sparse_from: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(sparse, "SPARSE_FROM", sparse_from)
    result = patch_source("paged_attn.py", source, patches)
    return (result.patched, result.parse_error,
            [(o.patch.id, o.status, o.detail, o.prints, o.diagnostic) for o in result.outcomes])


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_sparse_parse_patches_as_a_whole_parse_does(series: PatchSet, variant: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    source = vendor_file_with_helpers(variant).encode()
    patches = _patches(series)
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    module = parse_sparse(source, patches)
    assert module is not None and module.bytes == source
    opaque = [s for s in module.body if type(s) is Opaque]
    assert sum(len(s.text) for s in opaque) > 1.5 * len(HELPERS)  # the helpers, never parsed
    whole = _outcome(source, patches, sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    assert [status for _, status, *_ in whole[2]] == [Status.APPLIED] * 3
    assert _outcome(source, patches, sparse_from=0, monkeypatch=monkeypatch) == whole


def test_a_sparse_parse_gives_each_patch_the_bytes_a_whole_parse_gives_it(series: PatchSet,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # explain shows each patch's matches in the file as that patch received
    # it: a large target, parsed sparsely, must record the same inputs.
    source = vendor_file_with_helpers("lf").encode()
    patches = _patches(series)
    monkeypatch.setattr(sparse, "SPARSE_FROM", len(source) + 1)
    whole: list[bytes] = []
    whole_result = patch_source("paged_attn.py", source, patches, inputs=whole)
    assert len(whole) == len(patches) == 3 and whole[0] == source and whole[1] != source
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    assert parse_sparse(source, patches) is not None
    received: list[bytes] = []
    result = patch_source("paged_attn.py", source, patches, inputs=received)
    assert received == whole
    assert result.patched == whole_result.patched


@pytest.mark.parametrize("encoding", ["utf-8-sig", "latin-1"])
def test_a_bom_or_another_encoding_is_kept(series: PatchSet, encoding: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = vendor_file_with_helpers("lf").replace("a comment at the module's depth", "a comment: café")
    if encoding == "latin-1":
        text = "# -*- coding: latin-1 -*-\n" + text
    source = text.encode(encoding)
    assert source.startswith(codecs.BOM_UTF8) == (encoding == "utf-8-sig")
    whole = _outcome(source, _patches(series), sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    assert whole[0] != source and whole[1] is None
    assert _outcome(source, _patches(series), sparse_from=0, monkeypatch=monkeypatch) == whole
    # The sparse parse itself reads the file in its own encoding (not UTF-8
    # whatever it declares): it happens, and keeps what the whole parse keeps.
    module = parse_sparse(source, _patches(series))
    assert module is not None and module.bytes == source
    assert module.encoding == cst.parse_module(source).encoding


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_parsed_statement_is_the_one_a_whole_parse_gives(series: PatchSet, variant: str,
                                                               every_size: None) -> None:
    # Comments after an opaque statement are filed as a whole parse files
    # them: a deeper one in its last block, the others above the next
    # statement, where an insert before that statement finds them.
    source = vendor_file_with_helpers(variant).encode()
    module = parse_sparse(source, _patches(series))
    whole = cst.parse_module(source)
    assert module is not None
    assert (module.default_indent, module.default_newline, module.has_trailing_newline, module.encoding) == (
        whole.default_indent, whole.default_newline, whole.has_trailing_newline, whole.encoding)

    def parsed(body: Any, real: Any) -> int:
        """Match each parsed statement with the whole parse's, in order; return how many were compared."""
        at = 0
        compared = 0
        for statement in body:
            if type(statement) is Opaque:
                continue
            while not (type(real[at]) is type(statement) and (statement.deep_equals(real[at]) or (
                    type(statement) is cst.ClassDef and statement.name.value == real[at].name.value))):
                at += 1
            if type(statement) is cst.ClassDef and not statement.deep_equals(real[at]):
                assert len(statement.leading_lines) == len(real[at].leading_lines)
                assert all(a.deep_equals(b) for a, b in zip(statement.leading_lines, real[at].leading_lines))
                compared += parsed(statement.body.body, real[at].body.body)
            compared += 1
            at += 1
        return compared

    assert parsed(module.body, whole.body) >= 6


def test_a_syntax_error_where_no_patch_looks_fails_the_file_as_a_whole_parse_does(
    series: PatchSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = vendor_file_with_helpers("lf").replace("def _one(): return 0", "def _one(): return 0 +").encode()
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    assert parse_sparse(source, _patches(series)) is None
    result = patch_source("paged_attn.py", source, _patches(series))
    assert result.parse_error is not None and "does not parse" in result.parse_error
    assert result.patched == source


def test_a_failing_patch_is_reported_from_the_whole_parse(series: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the forced-V1 line, three-tier-decode's step finds nothing: the
    # closest code is named in the file's lines, as a whole parse names them.
    source = vendor_file_with_helpers("crlf").replace("        use_v1 = True  # BI-V100: the V2 kernel is not available\r\n", "").encode()
    whole = _outcome(source, _patches(series), sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    assert whole[2][0][1] is Status.FAILED and whole[2][0][4] is not None
    assert _outcome(source, _patches(series), sparse_from=0, monkeypatch=monkeypatch) == whole


def test_a_second_definition_of_a_scope_hidden_in_a_clause_is_still_found(series: PatchSet,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # A member under `if` that defines forward_decode again: find_scope counts
    # definitions under if/try too, and so the sparse parse keeps it.
    twice = MEMBERS + "\n    if _LOG_ONCE:\n        def forward_decode(self):\n            return None\n"
    source = vendor_file_with_helpers("lf").replace(MEMBERS, twice).encode()
    whole = _outcome(source, _patches(series), sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    assert "2 definitions of 'forward_decode'" in whole[2][0][2]
    assert _outcome(source, _patches(series), sparse_from=0, monkeypatch=monkeypatch) == whole


def test_a_series_searching_the_whole_module_parses_it_whole(load_patch: Callable[[str], Any], every_size: None) -> None:
    patch = load_patch('''
id = "main"
description = "An edit at module level"
origin = "test"
last-update = "2026-12-01"
target = "x.py"
scope = ""

[[steps]]
op = "replace"
pattern = "total = 1 + 2"
code = "total = 3"
''')
    assert parse_sparse(vendor_file_with_helpers("lf").encode(), [patch]) is None


REUSE_IN_CLASS = '''
[[steps]]
op = "reuse-buffers"
after = "m = $INIT"

[steps.buffers.t]
buffer = "_t"
allocate = "torch.empty_like(m)"
compute = "torch.exp($X)"
into = "torch.exp($X, out=$OUT)"
'''


def test_a_member_that_uses_a_buffers_name_is_parsed(load_patch: Callable[[str], Any],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # reuse-buffers refuses a buffer name already used anywhere in its scope.
    # The method using '_t' names nothing of the anchor, yet the sparse parse
    # must keep it, so that the clash is seen as a whole parse sees it.
    patch = load_patch(patch_toml("reuse", REUSE_IN_CLASS, scope="Softmax"))
    source = ("import torch\n\n\ndef _unrelated():\n    return 1\n\n\nclass Softmax:\n    m = torch.zeros(4)\n"
              "    for x in XS:\n        t = torch.exp(x - m)\n        m.add_(t)\n\n"
              "    def reset(self):\n        self._t = None\n").encode()
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    module = parse_sparse(source, [patch])
    assert module is not None and [type(s) for s in module.body] == [Opaque, cst.ClassDef]
    assert [type(s) for s in module.body[1].body.body][-1] is cst.FunctionDef  # reset, parsed
    whole = _outcome(source, [patch], sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    assert whole[2] == [("reuse", Status.FAILED, "step 1 (reuse-buffers): the buffer name '_t' is already used in "
                         "Softmax", (), None)]
    assert _outcome(source, [patch], sparse_from=0, monkeypatch=monkeypatch) == whole


def test_a_large_target_parses_a_small_part_of_itself(series: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    # The vendor file with 2,400 helpers (about 700 KB, CRLF) around and
    # inside its class: libcst is given the class's searched members, and
    # placeholders for the rest.
    helper = ("def _check_{n}(block_tables, num_blocks):\n"
              "    if block_tables is None or block_tables.numel() == 0:\n"
              "        return\n"
              "    high = int(block_tables.max().item())\n"
              "    if high >= num_blocks:\n"
              '        raise RuntimeError("block %d of %d" % (high, num_blocks))\n\n\n')
    head, sep, tail = VENDOR.partition("\nclass PagedAttention:\n")
    members = "".join("    @staticmethod\n" + "".join("    " + line if line.strip() else line
                                                       for line in helper.format(n=n).splitlines(True))
                      for n in range(800))
    text = head + "".join(helper.format(n=n) for n in range(800, 1600)) + sep + members + tail
    text += "".join(helper.format(n=n) for n in range(1600, 2400))
    source = text.replace("\n", "\r\n").encode()
    assert len(source) > sparse.SPARSE_FROM * 4
    parsed: list[int] = []
    real = cst.parse_module

    def counting(code: Any, *args: Any, **kwargs: Any) -> cst.Module:
        parsed.append(len(code))
        return real(code, *args, **kwargs)

    monkeypatch.setattr(sparse.cst, "parse_module", counting)
    result = patch_source("paged_attn.py", source, _patches(series))
    assert [o.status for o in result.outcomes] == [Status.APPLIED] * 3
    assert parsed and max(parsed) < len(source) // 10  # the skeleton, not the file
    assert result.patched.replace(b"\r\n", b"\n").count(b"def _check_") == 2400
    monkeypatch.setattr(sparse.cst, "parse_module", real)
    monkeypatch.setattr(sparse, "SPARSE_FROM", len(source) + 1)
    assert patch_source("paged_attn.py", source, _patches(series)).patched == result.patched


def test_a_target_without_an_indented_line_is_parsed_sparsely(load_patch: Callable[[str], Any],
                                                              every_size: None) -> None:
    # No line sets the module's indentation: the skeleton keeps libcst's default.
    patch = load_patch(patch_toml("flat", replace_step("x = 1", "x = 2")))
    source = ("".join(f"limit_{n} = {n}\n" for n in range(100)) + "def f(): x = 1\n").encode()
    module = parse_sparse(source, [patch])
    assert module is not None and module.bytes == source
    assert [type(s) for s in module.body] == [Opaque, cst.FunctionDef]


def test_a_one_line_target_without_a_newline_is_parsed_sparsely(load_patch: Callable[[str], Any],
                                                                every_size: None) -> None:
    # No newline anywhere: the skeleton keeps libcst's default newline, as a whole parse does.
    patch = load_patch(patch_toml("flat", replace_step("x = 1", "x = 2")))
    source = b"import torch"
    module = parse_sparse(source, [patch])
    assert module is not None and module.bytes == source
    assert [type(s) for s in module.body] == [Opaque]


def test_opaque_statements_are_compiled_a_few_at_a_time(series: PatchSet, every_size: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # 300 runs of opaque helpers, each between two statements the series
    # keeps: compiled with their neighbours at the same indentation, not one
    # compile() a run.
    helpers = "".join(f"def _check_{n}(x):\n    return x + {n}\n\n\n"
                      f"def _register_{n}():\n    return PagedAttention\n\n\n" for n in range(300))
    source = (VENDOR + helpers).encode()
    compiled: list[str] = []

    def counting(code: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(code)
        return compile(code, *args, **kwargs)

    monkeypatch.setattr(sparse, "compile", counting, raising=False)
    module = parse_sparse(source, _patches(series))
    assert module is not None and module.bytes == source
    assert sum(type(s) is Opaque for s in module.body) >= 300
    assert sum(code.count("def _check_") for code in compiled) == 300
    assert len(compiled) <= 3, len(compiled)


@pytest.mark.parametrize("text", [
    "x = '''\nclass A:\n'''\n",
    'x = (1,\n     2)\ny = 3\n',
    "x = 1 \\\n    + 2\n",
    "s = 'a\\'b' + \"c\\\"d\"  # it's\n",
    "def f():\n    return 1\n  # odd\n",
    "if a:\n    pass\nelse:\n    pass\n",
    "d = {'a': 1}\ne = {\n    'b': 2,\n}\nf = 3\n",
])
def test_logical_lines_follow_pythons_tokenizer(text: str) -> None:
    import io
    import tokenize

    ends = [t.end[0] for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NEWLINE]
    assert [text[: line.end].count("\n") for line in logical_lines(text)] == ends


@pytest.mark.parametrize(("text", "reason"), [
    ("x = a \\ b\n", "a backslash outside a string, not at the end of a line"),
    ("x = 'abc\ny = 1\n", "a string that does not end"),
    ("x = f(1))\n", "a closing bracket without its opening one"),
    ("x = (1,\n     2\n", "the file ends inside a statement"),
])
def test_logical_lines_give_up_where_python_refuses_the_file(text: str, reason: str) -> None:
    # The scanner says why it cannot follow the file (which is then parsed
    # whole, and the whole parse reports the error Python reports).
    with pytest.raises(SyntaxError):
        compile(text, "x.py", "exec", dont_inherit=True)
    with pytest.raises(ValueError) as refused:
        logical_lines(text)
    assert str(refused.value) == reason


@pytest.mark.parametrize("text", [
    "x = 1\ry = 2\n",  # a lone CR: a line break to Python, not to the scanner
    "x = 1\r\ny = 2\rz = 3\r\n",
    "x = 1\n\fy = 2\n",  # a form feed: it resets the tokenizer's column count
    "x = 1\r\n\fy = 2\r\n",
    "x = 1\r\fy = 2\n",
])
def test_logical_lines_give_up_on_a_lone_cr_or_a_form_feed_python_accepts(text: str) -> None:
    # Python compiles these; the scanner does not follow them, so the file is parsed whole.
    compile(text, "x.py", "exec", dont_inherit=True)
    with pytest.raises(ValueError) as refused:
        logical_lines(text)
    assert str(refused.value) == "a lone CR, a form feed or a NUL"


def test_the_runner_uses_the_sparse_parse() -> None:
    assert runner.parse_sparse is sparse.parse_sparse


def _config_patched_sparsely(load_patch: Callable[[str], Any], monkeypatch: pytest.MonkeyPatch, source: bytes,
                             patched_line: bytes) -> Any:
    """Parse SOURCE sparsely for a patch of ``Config.max_len`` and return the module.

    SOURCE ends in ``class Config`` with members ``max_len`` and ``block_size``.
    Checks that max_len is parsed and block_size kept opaque, and that the patch
    applies (PATCHED_LINE in the result) as it does on a whole parse.
    """
    patch = load_patch(patch_toml("limit", replace_step("max_len = $LIMIT", "max_len = 16384"), scope="Config"))
    monkeypatch.setattr(sparse, "SPARSE_FROM", 0)
    module = parse_sparse(source, [patch])
    assert module is not None and module.bytes == source
    assert [type(s) for s in module.body[-1].body.body] == [cst.SimpleStatementLine, Opaque]
    result = _outcome(source, [patch], sparse_from=0, monkeypatch=monkeypatch)
    assert patched_line in result[0] and result[2][0][1] is Status.APPLIED
    assert result == _outcome(source, [patch], sparse_from=len(source) + 1, monkeypatch=monkeypatch)
    return module


def test_a_member_a_pattern_with_metavariables_can_match_is_parsed(load_patch: Callable[[str], Any],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # '$LIMIT' stands for any expression: the member must name 'max_len', never
    # the metavariable, to be kept for the search; the member naming
    # nothing of the pattern is not.
    source = ("import os\n\n\ndef _unrelated():\n    return 1\n\n\nclass Config:\n    max_len = 8192\n"
              "    block_size = 16\n").encode()
    _config_patched_sparsely(load_patch, monkeypatch, source, b"max_len = 16384\n")


def test_the_members_of_a_decorated_class_on_a_scopes_path_are_decided_one_by_one(
        load_patch: Callable[[str], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    # '@dataclass' above 'class Config:': the definition is found below its
    # decorators, so the class is split as an undecorated one is, and its
    # member naming nothing of the pattern stays opaque.
    source = ("import dataclasses\n\n\ndef _unrelated():\n    return 1\n\n\n@dataclasses.dataclass\n"
              "@functools.total_ordering\nclass Config:\n    max_len = 8192\n    block_size = 16\n").encode()
    module = _config_patched_sparsely(load_patch, monkeypatch, source, b"    max_len = 16384\n")
    assert type(module.body[-1]) is cst.ClassDef and len(module.body[-1].decorators) == 2


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_comment_deeper_than_the_first_indented_statement_stays_in_its_block(
        load_patch: Callable[[str], Any], every_size: None, newline: str) -> None:
    # The file's first indented line (which sets the module's indentation) is
    # in an opaque function, and a comment at its body's depth follows it: a
    # whole parse files the comment in that function's body, not above the
    # next statement, and so must the sparse parse.
    patch = load_patch(patch_toml("flat", replace_step("x = 1", "x = 2")))
    text = "def _helper():\n    return 1\n    # the helper's last comment\n\n\ndef f(): x = 1\n"
    source = text.replace("\n", newline).encode()
    module = parse_sparse(source, [patch])
    whole = cst.parse_module(source)
    assert module is not None and module.bytes == source
    assert [type(s) for s in module.body] == [Opaque, cst.FunctionDef]
    assert module.default_indent == whole.default_indent == "    "
    assert module.body[1].deep_equals(whole.body[1])  # no comment in its leading lines
    assert [line.comment.value for line in module.body[0].footer if line.comment] == ["# the helper's last comment"]
