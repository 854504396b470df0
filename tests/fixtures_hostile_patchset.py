"""Builders of hostile patch sets: each writes, under a test's tmp_path, a patch folder an attacker would send.

A patch folder is untrusted input (CI runs patcher on pull requests that
change ``patches/``). Each builder starts from a copy of the repository's
own patch set (``patches/`` with ``templates/`` beside it, which applies to
the fixture zip), makes one hostile change and returns the ``patches``
folder to pass as ``--patches``. Nothing outside ``tmp_path`` is written.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.fixtures_vendor import PATCHES, ROOT

# The template the first step of three-tier-decode renders, and its text.
THRESHOLDS = "three-tier-decode/thresholds.py.j2"
NEW_PATCH_TEMPLATE = "new-patch/patch.toml.j2"


def copy_patch_set(tmp_path: Path, name: str = "set") -> Path:
    """Copy the repository's patch set to ``tmp_path/name/patches`` (templates beside it); return the patches folder."""
    patches = tmp_path / name / "patches"
    shutil.copytree(PATCHES, patches)
    shutil.copytree(ROOT / "templates", patches.parent / "templates")
    return patches


def templates_of(patches: Path) -> Path:
    """The templates folder beside a patch set built here."""
    return patches.parent / "templates"


# --------------------------------------------------------------------------- the sandbox


def escape_payload(marker: Path) -> str:
    """A Jinja expression that, outside a sandbox, runs a shell command creating ``marker``."""
    return "{{ cycler.__init__.__globals__.os.system('touch " + str(marker) + "') }}"


ESCAPE_LINE = 2  # the line of the template the payload sits on


def _payload_in(tmp_path: Path, name: str, marker: Path) -> Path:
    """A set whose template ``name`` carries the escape payload, as a comment, on line ``ESCAPE_LINE``."""
    patches = copy_patch_set(tmp_path)
    template = templates_of(patches) / name
    lines = template.read_text().splitlines(keepends=True)
    lines.insert(ESCAPE_LINE - 1, "# " + escape_payload(marker) + "\n")
    template.write_text("".join(lines))
    return patches


def sandbox_escape(tmp_path: Path, marker: Path) -> Path:
    """A set whose thresholds template runs ``touch MARKER`` (on its line 2) when rendered without a sandbox."""
    return _payload_in(tmp_path, THRESHOLDS, marker)


def sandbox_escape_in_new_template(tmp_path: Path, marker: Path) -> Path:
    """A set whose own new-patch template (what 'patcher new' renders) carries the payload on line 2."""
    return _payload_in(tmp_path, NEW_PATCH_TEMPLATE, marker)


# Templates that never end or fill memory outside a budget, each one line.
RUNAWAY_TEMPLATES = {
    "nested range loops": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "nested loops with a loop filter": (
        "{% for a in range(100000) %}{% for b in range(100000) if b < 0 %}{% endfor %}{% endfor %}"),
    "nested loops over a literal list": "".join("{% for x" + str(i) + " in [1,2,3,4,5,6,7,8,9,10] %}"
                                                for i in range(12)) + "{% endfor %}" * 12,
    "a string times a billion": "{{ 'x' * 10**9 }}",
    "a tower of powers": "{{ 10 ** 10000000 }}",
    "squaring in a namespace": ("{% set ns = namespace(n=10) %}{% for i in range(64) %}{% set ns.n = ns.n * ns.n %}"
                                "{% endfor %}{{ ns.n }}"),
    "doubling a string with ~": ("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
                                 "{% endfor %}"),
    "batch with a huge fill": "{{ range(10)|batch(10**9, 0)|list }}",
    "slice into a billion parts": "{{ range(10)|slice(10**9)|list|length }}",
    "join of huge items": "{{ range(100000)|map('center', 100000)|join }}",
    "wordwrap with a long wrap string": "{{ ('a ' * 100000)|wordwrap(1, wrapstring='x' * 1000) }}",
    "indent with a huge width": "{{ ('a\\n' * 100000)|indent(100000) }}",
    "center in a huge width": "{{ 'x'|center(10**9) }}",
    "format with a huge width": "{{ '%*s'|format(10**9, 'x') }}",
    "str.format with a huge width": "{{ '{:>1000000000}'.format(1) }}",
    "percent with a huge width": "{{ '%0999999999d' % 1 }}",
    "replace that multiplies": "{{ ('x' * 10000)|replace('x', 'y' * 10000) }}",
    "expandtabs": "{{ ('\\t' * 100000).expandtabs(100000) }}",
    "tojson with a huge indent": "{{ range(10000)|list|tojson(indent=100000) }}",
    "shared parts nested": ("{% set a = ['x' * 900000] %}{% set b = [a, a] %}{% set c = [b, b] %}{% set d = [c, c] %}"
                            "{{ d }}"),
    "a namespace of shared parts": ("{% set ns = namespace() %}{% set ns.a = 'x' * 900000 %}{% set ns.b = ns.a %}"
                                    "{% set ns.c = ns.a %}{{ ns }}"),
    "a macro that calls itself": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "a macro that calls itself twice": ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
                                        "{{ f(60) }}"),
    "huge output": "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
    "huge captured block": "{% set x %}{% for i in range(100000) %}" + "x" * 100 + "{% endfor %}{% endset %}",
    "a recursive loop": ("{% for x in range(100000) recursive %}{% if x == 0 %}{{ loop(range(100000)) }}{% endif %}"
                         "{% endfor %}"),
}


def runaway_template(tmp_path: Path, body: str) -> Path:
    """A set whose thresholds template is ``body`` (one of ``RUNAWAY_TEMPLATES``)."""
    patches = copy_patch_set(tmp_path)
    (templates_of(patches) / THRESHOLDS).write_text(body + "\n")
    return patches


def template_raising_at_render(tmp_path: Path) -> Path:
    """A set whose thresholds template divides by zero on its line 3."""
    patches = copy_patch_set(tmp_path)
    (templates_of(patches) / THRESHOLDS).write_text(
        "_PYTORCH_DECODE_THRESHOLD = {{ large_threshold }}\n_v2_unavailable = False\n{{ 1 // 0 }}\n")
    return patches


def self_including_templates(tmp_path: Path, tag: str) -> Path:
    """A set whose thresholds template ``include``s, ``import``s or ``extends`` itself."""
    patches = copy_patch_set(tmp_path)
    statement = {"include": '{% include "X" %}', "import": '{% import "X" as me %}x = 1',
                 "extends": '{% extends "X" %}'}[tag]
    (templates_of(patches) / THRESHOLDS).write_text(statement.replace("X", THRESHOLDS) + "\n")
    return patches


def exponential_includes(tmp_path: Path) -> Path:
    """A set whose thresholds template includes a chain of 30 templates, each including the next 4 times (4**30)."""
    patches = copy_patch_set(tmp_path)
    folder = templates_of(patches) / "fan"
    folder.mkdir()
    for level in range(30):
        (folder / f"{level}.j2").write_text("".join(f'{{% include "fan/{level + 1}.j2" %}}' for _ in range(4)))
    (folder / "30.j2").write_text("")
    (templates_of(patches) / THRESHOLDS).write_text('{% include "fan/0.j2" %}\n')
    return patches


# --------------------------------------------------------------------------- the folder boundary


def secret_outside(tmp_path: Path) -> Path:
    """A file outside every patch folder, whose text must never be read into a build."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("SECRET-TOKEN-1234\n")
    return secret


def template_symlinked_out(tmp_path: Path, target: Path) -> Path:
    """A set whose thresholds template is a symlink to ``target`` outside the folder."""
    patches = copy_patch_set(tmp_path)
    template = templates_of(patches) / THRESHOLDS
    template.unlink()
    template.symlink_to(target)
    return patches


def include_outside(tmp_path: Path, target: Path) -> Path:
    """A set whose thresholds template includes a template that is a symlink to ``target`` outside."""
    patches = copy_patch_set(tmp_path)
    (templates_of(patches) / "leak.j2").symlink_to(target)
    (templates_of(patches) / THRESHOLDS).write_text('# {% include "leak.j2" %}\n_PYTORCH_DECODE_THRESHOLD = 1\n')
    return patches


def templates_folder_symlinked_out(tmp_path: Path) -> Path:
    """A set whose templates folder is a symlink to a working copy of it outside the set."""
    patches = copy_patch_set(tmp_path)
    outside = tmp_path / "outside-templates"
    shutil.move(str(templates_of(patches)), outside)
    templates_of(patches).symlink_to(outside, target_is_directory=True)
    return patches


def series_entry(tmp_path: Path, entry: str) -> Path:
    """A set whose series lists ``entry`` (``../x.toml``, an absolute path...) first; a valid patch lies there."""
    patches = copy_patch_set(tmp_path)
    outside = tmp_path / "set" / "x.toml"  # beside patches/: one '..' away
    outside.write_text((patches / "prefix-buffer-reuse.toml").read_text().replace(
        'id = "prefix-buffer-reuse"', 'id = "x"'))
    series = patches / "series"
    series.write_text(entry.replace("OUTSIDE", str(outside)) + "\n" + series.read_text())
    return patches


def _moved_out_and_symlinked(tmp_path: Path, name: str) -> Path:
    """A set whose ``patches/NAME`` is moved to ``tmp_path/outside/NAME`` and replaced by a symlink to it."""
    patches = copy_patch_set(tmp_path)
    outside = tmp_path / "outside" / name
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(patches / name), outside)
    (patches / name).symlink_to(outside)
    return patches


def patch_file_symlinked_out(tmp_path: Path) -> Path:
    """A set whose three-tier-decode.toml is a symlink to a copy outside the folder."""
    return _moved_out_and_symlinked(tmp_path, "three-tier-decode.toml")


def policy_symlinked_out(tmp_path: Path) -> Path:
    """A set whose policy.toml is a symlink to a copy outside the folder."""
    return _moved_out_and_symlinked(tmp_path, "policy.toml")


def fifo_in_place_of(tmp_path: Path, relative: str) -> Path:
    """A set where ``relative`` (under the set's folder: 'patches/series', 'templates/...') is a FIFO."""
    patches = copy_patch_set(tmp_path)
    path = patches.parent / relative
    path.unlink()
    os.mkfifo(path)
    return patches


def device_in_place_of_template(tmp_path: Path) -> Path:
    """A set whose thresholds template is a symlink to /dev/zero."""
    return template_symlinked_out(tmp_path, Path("/dev/zero"))


def oversized_template(tmp_path: Path, size: int) -> Path:
    """A set whose thresholds template holds ``size`` bytes (a Python comment line, then code)."""
    patches = copy_patch_set(tmp_path)
    (templates_of(patches) / THRESHOLDS).write_text("#" + "x" * (size - 32) + "\n_PYTORCH_DECODE_THRESHOLD = 1\n")
    return patches


def oversized_set(tmp_path: Path, files: int, size: int) -> Path:
    """A set that lists ``files`` more patches of ``size`` bytes each (valid TOML padded with a comment)."""
    patches = copy_patch_set(tmp_path)
    body = (patches / "prefix-buffer-reuse.toml").read_text()
    names = []
    for number in range(files):
        text = body.replace('id = "prefix-buffer-reuse"', f'id = "padded-{number}"')
        (patches / f"padded-{number}.toml").write_text(text + "#" + "x" * (size - len(text) - 2) + "\n")
        names.append(f"padded-{number}.toml")
    (patches / "series").write_text((patches / "series").read_text() + "\n".join(names) + "\n")
    return patches


DEEP = 100_000


def deep_toml(tmp_path: Path, shape: str) -> Path:
    """A set whose three-tier-decode.toml gains, on line 1, a value nested ``DEEP`` levels: arrays, inline tables or a dotted key."""
    patches = copy_patch_set(tmp_path)
    line = {
        "arrays": "origin = " + "[" * DEEP + "]" * DEEP,
        "inline tables": "origin = " + "{a = " * DEEP + "1" + "}" * DEEP,
        "dotted key": "bug" + ".a" * DEEP + " = 1",
    }[shape]
    toml = patches / "three-tier-decode.toml"
    text = toml.read_text().replace('origin = "other, patcher project;', 'source = "other, patcher project;', 1)
    toml.write_text(line + "\n" + text)
    return patches


def deep_policy(tmp_path: Path) -> Path:
    """A set whose policy.toml gains a value of arrays ``DEEP`` levels deep on line 1."""
    patches = copy_patch_set(tmp_path)
    policy = patches / "policy.toml"
    policy.write_text("x = " + "[" * DEEP + "]" * DEEP + "\n" + policy.read_text())
    return patches


def one_patch_set(tmp_path: Path, file_name: str, patch_id: str, extra: str = "") -> Path:
    """A set of one small patch in ``file_name`` with ``id = patch_id`` and ``extra`` TOML appended."""
    patches = tmp_path / "one" / "patches"
    patches.mkdir(parents=True)
    (patches.parent / "templates").mkdir()
    (patches / file_name).write_text(
        f'id = "{patch_id}"\ndescription = "An edit"\norigin = "test"\nlast-update = "2026-12-01"\n'
        f'target = "x.py"\nscope = "f"\n{extra}\n[[steps]]\nop = "replace"\npattern = "x = 1"\ncode = "x = 2"\n')
    (patches / "series").write_text(file_name + "\n")
    return patches


def long_patch_id(tmp_path: Path, length: int = 250) -> Path:
    """A set of one patch whose file name and id are ``length`` characters long."""
    patch_id = ("long-" * length)[:length]
    return one_patch_set(tmp_path, patch_id + ".toml", patch_id)


def series_naming_a_long_file(tmp_path: Path, length: int = 300) -> Path:
    """A set whose series names a file name of ``length`` characters (longer than any file system allows)."""
    patches = copy_patch_set(tmp_path)
    (patches / "series").write_text("a" * length + ".toml\n")
    return patches


def odd_patch_id(tmp_path: Path, patch_id: str) -> Path:
    """A set of one patch whose id (and file name) is ``patch_id``: a pipe, a backtick, an escape sequence..."""
    return one_patch_set(tmp_path, patch_id + ".toml", patch_id.replace("\\", "\\\\").replace('"', '\\"'))


def example_with(tmp_path: Path, example: str) -> Path:
    """A set of one patch whose [[examples]] table is ``example`` (TOML lines)."""
    return one_patch_set(tmp_path, "edit.toml", "edit", "[[examples]]\n" + example + "\n")


