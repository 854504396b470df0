"""The one Jinja2 environment: patch templates first, then the tool's own templates."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

import jinja2


# What could make inline text more than literal text: a Jinja delimiter
# ({{ }}, {% %}, {# #}) or a carriage return (Jinja normalises line endings).
_MAY_BE_JINJA = re.compile(r"\{[{%#]|\r")


class TemplateFailure(Exception):
    """A template is missing, malformed, or uses a variable nobody defined."""


def make_environment(*folders: Path) -> jinja2.Environment:
    """Build the environment: strict about undefined names, faithful to newlines."""
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(f)) for f in folders if f.is_dir()]),
        undefined=jinja2.StrictUndefined,  # a missing variable is an error, never ""
        keep_trailing_newline=True,
        autoescape=False,  # the output is Python and JSON, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(env: jinja2.Environment, *, name: str | None = None, source: str | None = None,
           values: Mapping[str, Any]) -> str:
    """Render a template file (``name``) or inline text (``source``) with ``values``."""
    if name is None and source is not None and not _MAY_BE_JINJA.search(source):
        # No delimiter, so nothing to render: Jinja would return the text
        # unchanged (newlines kept, see make_environment) after compiling it
        # to Python, which costs more than every other step of loading a patch.
        return source
    try:
        template = env.get_template(name) if name is not None else env.from_string(source or "")
        return template.render(**values)
    except jinja2.TemplateNotFound as error:
        raise TemplateFailure(f"no template '{error.name}' in the templates folder") from None
    except jinja2.UndefinedError as error:
        raise TemplateFailure(f"template uses an undefined variable: {error.message}") from None
    except jinja2.TemplateSyntaxError as error:
        raise TemplateFailure(f"template syntax error at line {error.lineno}: {error.message}") from None
