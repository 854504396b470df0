"""The manifest's bytes: what the Jinja2 template ``manifest.json.j2`` wrote, now written by ``json.dumps``.

Readers diff manifests across runs and tool versions, so the layout (one
patch, mirror and changed file a line) and every escape (``tojson``'s:
sorted keys, ASCII only, ``< > & '`` as ``\\u003c``...) stay as they were.
The former template is kept here as the reference: any values rendered
by it and by ``manifest_bytes`` give the same bytes. (It gained one line
since, ``"stage"``: the build stage ``apply --target`` took as the image.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patcher.manifest import manifest_bytes
from patcher.patchset.templates import make_environment, render

FORMER_TEMPLATE = """\
{
  "tool": {"name": "patcher", "version": {{ version | tojson }}},
  "input": {"name": {{ input_name | tojson }}, "sha256": {{ input_sha256 | tojson }}},
  "stage": {{ stage | tojson }},
  "patch_set": {"series": {{ series | tojson }}, "commit": {{ commit | tojson }}, "commit_reason": {{ commit_reason | tojson }}},
  "patches": [
{% for patch in patches %}
    {"id": {{ patch.id | tojson }}, "file": {{ patch.file | tojson }}, "status": {{ patch.status | tojson }}, "params": {{ patch.params | tojson }},
     "steps": {{ patch.steps | tojson }}}{{ "," if not loop.last }}
{% endfor %}
  ],
  "mirrors": [
{% for mirror in mirrors %}
    {"path": {{ mirror.path | tojson }}, "synced_to": {{ mirror.shipped | tojson }}, "differed_before": {{ mirror.differed | tojson }}}{{ "," if not loop.last }}
{% endfor %}
  ],
  "changed_files": {
{% for path, digest in changed.items() %}
    {{ path | tojson }}: {{ digest | tojson }}{{ "," if not loop.last }}
{% endfor %}
  },
  "allowed_rules": {{ allowed | tojson }},
  "origin": {"name": {{ origin_name | tojson }}, "sha256": {{ origin_sha256 | tojson }}}
}
"""

# Text a path, an id or a reason could hold: the characters tojson escapes, quotes, non-ASCII, controls.
TEXT = st.text(alphabet=st.sampled_from(list("ab/._-<>&'\"\\ \n\té€😀\x00")) | st.characters(), max_size=12)
DIGEST = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
PARAM = st.one_of(st.integers(-2**40, 2**40), st.floats(allow_nan=False), st.booleans(), TEXT)
STEP = st.fixed_dictionaries({"step": st.integers(1, 9), "matches": st.lists(st.fixed_dictionaries(
    {"code": DIGEST, "bindings": st.dictionaries(TEXT, DIGEST, max_size=3)}), max_size=3)})
VALUES = st.fixed_dictionaries({
    "version": TEXT,
    "input_name": TEXT,
    "input_sha256": DIGEST,
    "stage": st.none() | TEXT,
    "origin_name": TEXT,
    "origin_sha256": DIGEST,
    "series": st.lists(TEXT, max_size=4),
    "commit": st.none() | TEXT,
    "commit_reason": st.none() | TEXT,
    "patches": st.lists(st.fixed_dictionaries({
        "id": TEXT, "file": TEXT, "status": st.sampled_from(["applied", "already-applied", "failed"]),
        "params": st.dictionaries(TEXT, PARAM, max_size=3), "steps": st.lists(STEP, max_size=3)}), max_size=4),
    "mirrors": st.lists(st.fixed_dictionaries({"path": TEXT, "shipped": TEXT, "differed": st.booleans()}),
                        max_size=3),
    "changed": st.dictionaries(TEXT, DIGEST, max_size=4),
    "allowed": st.lists(st.fixed_dictionaries({"rule": TEXT, "reason": TEXT}), max_size=2),
})


def _former(folder: Path, values: dict[str, Any]) -> bytes:
    (folder / "manifest.json.j2").write_text(FORMER_TEMPLATE, encoding="utf-8")
    return render(make_environment(folder), name="manifest.json.j2", values=values).encode("utf-8")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=VALUES)
def test_the_bytes_are_those_the_former_template_wrote(tmp_path: Path, values: dict[str, Any]) -> None:
    assert manifest_bytes(values) == _former(tmp_path, values)


def test_every_character_tojson_escapes_is_escaped_the_same_way(tmp_path: Path) -> None:
    values = {"version": "0.1.0", "input_name": "<drop> & 'friends' \"quoted\" \u00e9\u20ac.zip",
              "input_sha256": "0" * 64, "stage": None, "origin_name": "drop.zip", "origin_sha256": "1" * 64, "series": ["a<b"], "commit": None, "commit_reason": "not in a git repository",
              "patches": [{"id": "p", "file": "x/y.py", "status": "applied", "params": {"z": 1.5, "a": "it's"},
                           "steps": []}],
              "mirrors": [], "changed": {}, "allowed": []}
    written = manifest_bytes(values)
    assert written == _former(tmp_path, values)
    assert b'"name": "\\u003cdrop\\u003e \\u0026 \\u0027friends\\u0027 \\"quoted\\" \\u00e9\\u20ac.zip"' in written
    assert b'"params": {"a": "it\\u0027s", "z": 1.5}' in written  # keys sorted
    assert b'  "mirrors": [\n  ],\n  "changed_files": {\n  },\n' in written  # empty lists keep their two lines
    assert json.loads(written)["input"]["name"] == values["input_name"]

