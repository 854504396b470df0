"""Templates render Python: block tags leave no trace, values are not HTML-escaped, a syntax error gives its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.load import load_patch_set
from patcher.patchset.templates import TemplateFailure, make_environment, render

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD


def test_block_tags_leave_no_blank_lines_or_indentation(tmp_path: Path) -> None:
    (tmp_path / "route.py.j2").write_text(
        "if use_v2:\n"
        "    {% if fallback %}\n"
        "    try:\n"
        "        out = v2(query)\n"
        "    except RuntimeError:\n"
        "        out = v1(query)\n"
        "    {% else %}\n"
        "    out = v2(query)\n"
        "    {% endif %}\n")
    env = make_environment(tmp_path)
    assert render(env, name="route.py.j2", values={"fallback": True}) == (
        "if use_v2:\n    try:\n        out = v2(query)\n    except RuntimeError:\n        out = v1(query)\n")
    assert render(env, name="route.py.j2", values={"fallback": False}) == "if use_v2:\n    out = v2(query)\n"


def test_a_template_extending_another_fills_its_blocks(tmp_path: Path) -> None:
    (tmp_path / "base.py.j2").write_text("def route(query):\n{% block body %}    return v2(query)\n{% endblock %}")
    (tmp_path / "guard.py.j2").write_text(
        '{% extends "base.py.j2" %}\n'
        "{% block body %}\n"
        "    if actual_max > {{ limit }}:\n"
        "        return v1(query)\n"
        "{{ super() }}"
        "{% endblock %}\n")
    env = make_environment(tmp_path)
    assert render(env, name="base.py.j2", values={}) == "def route(query):\n    return v2(query)\n"
    assert render(env, name="guard.py.j2", values={"limit": 8192}) == (
        "def route(query):\n    if actual_max > 8192:\n        return v1(query)\n    return v2(query)\n")


def test_values_are_rendered_as_python_not_html(tmp_path: Path) -> None:
    env = make_environment(tmp_path)
    values = {"condition": "actual_max > 8192 and dtype != 'fp8'"}
    assert render(env, source="if {{ condition }}:\n", values=values) == "if actual_max > 8192 and dtype != 'fp8':\n"
    (tmp_path / "guard.py.j2").write_text("if {{ condition }}:\n    return v1(query)\n")
    assert render(env, name="guard.py.j2", values=values) == (
        "if actual_max > 8192 and dtype != 'fp8':\n    return v1(query)\n")


def test_an_undefined_variable_fails_rather_than_rendering_empty(tmp_path: Path) -> None:
    # A misspelt parameter must not become "" in the code a patch writes.
    env = make_environment(tmp_path)
    with pytest.raises(TemplateFailure) as failed:
        render(env, source="use_v1 = actual_max <= {{ limt }}\n", values={"limit": 8192})
    assert str(failed.value) == "template uses an undefined variable: 'limt' is undefined"


def test_a_missing_template_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(TemplateFailure) as failed:
        render(make_environment(tmp_path, tmp_path / "none"), name="v1-guard/route.py.j2", values={})
    assert str(failed.value) == "no template 'v1-guard/route.py.j2' in the templates folder"


def test_a_template_syntax_error_gives_its_line(tmp_path: Path) -> None:
    (tmp_path / "route.py.j2").write_text("if use_v2:\n    {% if fallback %}\n    out = v2(query)\n")
    with pytest.raises(TemplateFailure) as failed:
        render(make_environment(tmp_path), name="route.py.j2", values={"fallback": True})
    # Jinja's own wording after the line number may vary between its versions.
    assert str(failed.value).startswith("template syntax error at line 3: Unexpected end of template.")
    assert "'endif'" in str(failed.value)


def test_a_template_syntax_error_is_refused_naming_the_patch(tmp_path: Path) -> None:
    text = GUARD.replace('code = "use_v1 = actual_max <= {{ limit }}"', 'template = "v1-guard/route.py.j2"')
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text}, templates={"v1-guard/route.py.j2": "use_v1 = {{ limit }\n"})
    message = refusal(load_patch_set, folder)
    assert message.startswith(f"{folder / 'v1-guard.toml'}: steps[1].template: template syntax error at line 1: ")
    assert message.endswith(" (in 'template')")
