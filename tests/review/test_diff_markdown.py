"""``diff --format markdown`` renders templates/diff.md.j2 for a pull request.

A variable the template needs and does not get is an error, never an empty string.
"""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import SHIPPED

GATHER = "Gather the prefill context K/V in groups of tiles, one gather per group"


def test_markdown_is_ready_for_a_pull_request(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--format", "markdown", vendor_zip)
    text = result.stdout
    assert text.startswith(f"### patcher diff: `{vendor_zip.name}`")
    assert f"| `prefix-pregather` | applied | `{SHIPPED}` (+1 mirror) | +" in text
    assert "| Gather the prefill context K/V in groups of tiles" in text
    assert f"<summary><code>{SHIPPED}</code> (+" in text
    assert text.count("```diff\n") == 2 and "\r" not in text
    assert "CRLF line endings (shown as LF here)" in text  # the stale root copy is CRLF
    assert text.endswith("</details>\n") and not text.endswith("\n\n")  # one newline ends it, no blank line


def test_markdown_template_fails_loudly_on_a_missing_variable(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset.templates import TemplateFailure
    from patcher.review import render
    from patcher.review.changes import DiffReport

    (tmp_path / render.MARKDOWN_TEMPLATE).write_text("{{ no_such_value }}\n")
    monkeypatch.setattr(render, "tool_templates_dir", lambda: tmp_path)
    with pytest.raises(TemplateFailure, match="no_such_value"):
        render.markdown(DiffReport("x.zip", None, ()))


# -- the comment's parts, from report values -----------------------------------------------------


def _docstring_with_a_fence(extra: str) -> bytes:
    """A vendor helper whose docstring shows usage in a Markdown fence, as real vLLM docstrings do."""
    return (f'def swap_blocks(src, dst, mapping):\n    """Swap KV blocks.\n\n'
            f'```\nswap_blocks(k, v, {{0: 1}})\n```\n    """\n    return ops.swap_blocks(src, dst, mapping){extra}\n'
            ).encode()


def test_a_diff_holding_a_fence_of_its_own_gets_a_longer_fence() -> None:
    from patcher.review import render
    from patcher.review.changes import DiffReport, FileDiff, Section
    from patcher.review.textdiff import FileChange

    # The docstring's "```" is a context line " ```": indented one space, it would close a ``` fence.
    change = FileChange(SHIPPED, _docstring_with_a_fence(""), _docstring_with_a_fence("  # patched"))
    text = render.markdown(DiffReport("drop.zip", None, (Section((FileDiff(change, ()),)),)))
    assert "\n````diff\n" in text and text.count("\n````\n") == 1
    assert render.fence(" ```\n") == "````" and render.fence("   `````x\n") == "``````"
    assert render.fence("    ```\n+```\n-````\n") == "```"  # four spaces is code, +/- lines open no fence
    assert render.fence("") == "```" and render.fence("``\n") == "```"


def test_the_comment_gives_rows_failures_rule_errors_stat_and_each_file(bundled) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from patcher.checks.base import Severity, Violation
    from patcher.checks.policy import load_policy
    from patcher.checks.runner import CheckResult
    from patcher.records import Diagnostic
    from patcher.report import Failure
    from patcher.review import render
    from patcher.review.changes import DiffReport, FileDiff, Section
    from patcher.review.textdiff import FileChange
    from tests.fixtures_vendor import PATCHES

    decode, gather, reuse = bundled.patches
    piped = replace(decode, description="Route | by length\n\nbody")  # a pipe would end the table cell
    shipped = FileDiff(FileChange(SHIPPED, b"a\nb\n", b"a\nB\n"), (piped, gather))
    mirror = FileDiff(FileChange("paged_attn.py", b"a\r\nb\r\n", b"a\nB\n"), (piped,), mirror_of=SHIPPED)
    report = DiffReport("drop.zip", "0123456789abcdef0123-dirty", (Section((shipped, mirror)),))
    rows = (render.SummaryRow(piped, "applied", (SHIPPED,), 1, 1, 1), render.SummaryRow(gather, "failed", (), 0, 0, 0),
            render.SummaryRow(reuse, "applied", (SHIPPED,), 2, 3, 4))
    failures = [Failure(SHIPPED, "prefix-pregather", "step 1 (replace): expected 'x' once, found it 0 times",
                        Diagnostic("scope", "PagedAttention.gone", scopes=("PagedAttention.forward_decode",))),
                Failure("other.py", None, "line 3: invalid syntax")]
    rules = CheckResult(load_policy(PATCHES / "policy.toml"),
                        (Violation("no-triton-kernels", Severity.ERROR, SHIPPED, 12, "imports context_attention_fwd"),),
                        (SHIPPED,))
    text = render.markdown(report, rows=rows, failures=failures, rules=rules)
    assert text.startswith("### patcher diff: `drop.zip`\n\nWhat `patcher apply` changes in the vendor tree "
                           "(patch set `0123456789ab-dirty`).\n\n| Patch | Status | Files | Lines | Summary |\n")
    assert (f"| `three-tier-decode` | applied | `{SHIPPED}` (+1 mirror) | +1 -1 | Route \\| by length |\n"
            f"| `prefix-pregather` | **failed** | - | - | {GATHER} |\n"
            f"| `prefix-buffer-reuse` | applied | `{SHIPPED}` (+2 mirrors) | +3 -4 | Reuse preallocated buffers "
            "in the prefill online-softmax update |\n") in text
    assert ("#### Patches that do not apply\n\n"
            f"- `{SHIPPED}`: **prefix-pregather**: step 1 (replace): expected 'x' once, found it 0 times\n"
            "  scopes with close names: PagedAttention.forward_decode\n"
            "- `other.py`: **does not parse**: line 3: invalid syntax\n\n"
            "#### Safety rule errors in the input\n\n"
            f"- `{SHIPPED}:12` no-triton-kernels: imports context_attention_fwd\n\n"
            "**2 files changed, 3 insertions(+), 3 deletions(-)**\n") in text
    assert (f"<summary><code>paged_attn.py</code> (+2 -2), mirror of <code>{SHIPPED}</code></summary>\n\n"
            "- `three-tier-decode`: Route | by length\n- CRLF line endings (shown as LF here)\n\n"
            "```diff\ndiff --git a/paged_attn.py b/paged_attn.py\n--- a/paged_attn.py\n+++ b/paged_attn.py\n"
            "@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+B\n```\n") in text
    assert f"<summary><code>{SHIPPED}</code> (+1 -1)</summary>\n\n- `three-tier-decode`: Route | by length\n" \
           f"- `prefix-pregather`: {GATHER}\n\n```diff\n" in text
    assert "CRLF" not in text.split("<summary><code>paged_attn.py")[0]  # the LF shipped copy has no such note
    summary_only = render.markdown(report, diffs=False)
    assert "```" not in summary_only and "| Patch | Summary |\n| --- | --- |\n| `three-tier-decode` | Route \\| by length |\n" \
        f"| `prefix-pregather` | {GATHER} |\n\n**2 files" in summary_only


def test_an_empty_comment_says_no_change_and_a_base_comment_names_the_revision() -> None:
    from patcher.review import render
    from patcher.review.changes import BaseRef, DiffReport

    text = render.markdown(DiffReport("d.zip", None, (), base=BaseRef("v1", "abcdef0123456789")))
    assert text == ("### patcher diff: `d.zip`\n\nHow the patch set in the working tree changes what ships, against "
                    "`v1` (`abcdef012345`).\n\n**0 files changed, 0 insertions(+), 0 deletions(-)**\n\nNo change.\n")
    assert render.markdown(DiffReport("d.zip", "0123456789abcdef", ())).startswith(
        "### patcher diff: `d.zip`\n\nWhat `patcher apply` changes in the vendor tree (patch set `0123456789ab`).\n")
