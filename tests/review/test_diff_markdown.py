"""``diff --format markdown`` renders templates/diff.md.j2 for a pull request.

A variable the template needs and does not get is an error, never an empty string.
"""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import SHIPPED


def test_markdown_is_ready_for_a_pull_request(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--format", "markdown", vendor_zip)
    text = result.stdout
    assert text.startswith(f"### patcher diff: `{vendor_zip.name}`")
    assert f"| `prefix-pregather` | applied | `{SHIPPED}` (+1 mirror) | +" in text
    assert "| Gather the prefill context K/V in groups of tiles" in text
    assert f"<summary><code>{SHIPPED}</code> (+" in text
    assert text.count("```diff\n") == 2 and "\r" not in text
    assert "CRLF line endings (shown as LF here)" in text  # the stale root copy is CRLF


def test_markdown_template_fails_loudly_on_a_missing_variable(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset.templates import TemplateFailure
    from patcher.review import render
    from patcher.review.changes import DiffReport

    (tmp_path / render.MARKDOWN_TEMPLATE).write_text("{{ no_such_value }}\n")
    monkeypatch.setattr(render, "tool_templates_dir", lambda: tmp_path)
    with pytest.raises(TemplateFailure, match="no_such_value"):
        render.markdown(DiffReport("x.zip", None, ()))
