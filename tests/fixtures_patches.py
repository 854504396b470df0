"""Builders shared by the test folders: one-patch TOML, patch set folders, refusals as a user reads them.

``patch_toml`` and ``step`` write a patch the way its author would;
``write_patch_set`` and ``copy_patch_set`` lay a patch set out in a scratch
folder (``patches/`` with its ``series``, ``templates/`` beside it), and
``add_patch`` adds one more patch to such a set, last in its series;
``refusal`` and ``one_error_line`` read a refusal back as the one line a
user sees; ``probe_imports`` runs a command in a fresh interpreter and says
which heavy libraries it loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

from patcher.errors import PatchSetError
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE

TEMPLATES = ROOT / "templates"
# The patched copies of the shipped file that apply must write byte for byte;
# benchmarks/gpu_prefix.py and cpu_prefix_memory.py read them as plain files.
GOLDEN = ROOT / "tests" / "golden"
PATCHED = GOLDEN / "paged_attn.patched.py"
PATCHED_GATHER0 = GOLDEN / "paged_attn.patched-gather0.py"
# The shipped paged_attn.py as the vendor wrote it.
VENDOR_SOURCE = (VENDOR_TREE / SHIPPED).read_bytes()


# --------------------------------------------------------------------------- one patch, as TOML


def patch_toml(patch_id: str = "edit", steps: str = "", *, scope: str = "f", target: str = "x.py",
               header: str = "", description: str = "An edit", last_update: str = "2026-11-29") -> str:
    """Return the TOML of one patch: a test's header, then HEADER (markers, parameters) and STEPS."""
    return textwrap.dedent(f'''
        id = "{patch_id}"
        description = {_toml_value(description)}
        origin = "test"
        last-update = "{last_update}"
        target = "{target}"
        scope = "{scope}"
    ''') + header + "\n" + textwrap.dedent(steps)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    assert isinstance(value, str), value
    if value.startswith("\n"):  # a block written as a triple-quoted string: what TOML's """ would hold
        value = textwrap.dedent(value)[1:]
    # JSON's string escapes are TOML's basic-string escapes; TOML also wants DEL escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def step(op: str, **keys: object) -> str:
    """Return one ``[[steps]]`` table of operation OP with KEYS, in order (``expect=2``, ``scope="g"``...)."""
    lines = ["", "[[steps]]", f'op = "{op}"', *(f"{key} = {_toml_value(value)}" for key, value in keys.items())]
    return "\n".join(lines) + "\n"


def replace_step(pattern: str, code: str, **keys: object) -> str:
    """Return a ``replace`` step: each match of PATTERN becomes CODE."""
    return step("replace", pattern=pattern, code=code, **keys)


def insert_step(where: str, anchor: str, code: str, **keys: object) -> str:
    """Return an ``insert`` step: CODE goes WHERE (``before`` or ``after``) each match of ANCHOR."""
    return step("insert", **{where: anchor}, code=code, **keys)


# --------------------------------------------------------------------------- patch set folders


def write_patch_set(folder: Path, files: dict[str, str | bytes], series: str | None = None,
                    templates: dict[str, str | bytes] | None = None) -> Path:
    """Write FILES into FOLDER/patches with a ``series`` (FILES in order by default), TEMPLATES beside it; return patches/."""
    patches = folder / "patches"
    patches.mkdir(parents=True, exist_ok=True)
    (folder / "templates").mkdir(exist_ok=True)
    for name, text in files.items():
        (patches / name).write_bytes(text.encode() if isinstance(text, str) else text)
    for name, text in (templates or {}).items():
        target = folder / "templates" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode() if isinstance(text, str) else text)
    if series is None:
        series = "".join(f"{name}\n" for name in files)
    (patches / "series").write_bytes(series.encode())
    return patches


def copy_patch_set(folder: Path) -> Path:
    """Copy the shipped patch set to FOLDER/patches and its templates to FOLDER/templates; return patches/."""
    shutil.copytree(PATCHES, folder / "patches")
    shutil.copytree(TEMPLATES, folder / "templates")
    return folder / "patches"


def add_patch(patches: Path, patch_id: str, text: str) -> Path:
    """Write TEXT as PATCHES/PATCH_ID.toml and name it last in the series; return PATCHES."""
    (patches / f"{patch_id}.toml").write_text(text, encoding="utf-8")
    with (patches / "series").open("a", encoding="utf-8") as series:
        series.write(f"{patch_id}.toml\n")
    return patches


def git(repo: Path, *args: str) -> str:
    """Run git in REPO with ARGS; return what it printed."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def commit_all(repo: Path, message: str) -> None:
    """Commit everything in REPO (a git repository) as a test author would, named MESSAGE."""
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)


def fill_in_length_check(path: Path) -> None:
    """Fill in the new patch at PATH as its author would: an insert after ``actual_max = $_``, its marker, an example.

    PATH is what ``patcher new`` wrote; its placeholder step and marker must stand in it once each.
    """
    text = path.read_text(encoding="utf-8")
    placeholder = 'op = "replace"\npattern = "the_code_to_find()"\ncode = "the_code_that_replaces_it()"'
    marker = '# applied-when = ["the_new_code($X)"]'
    assert text.count(placeholder) == 1 and text.count(marker) == 1, text
    text = text.replace(placeholder, 'op = "insert"\nafter = "actual_max = $_"\n'
                                     'code = "assert actual_max >= 0, \'negative sequence length\'"')
    text = text.replace(marker, 'applied-when = ["assert actual_max >= 0, $_"]')
    path.write_text(text + '''
[[examples]]
name = "a negative length stops decode"
before = \'\'\'
class PagedAttention:
    def forward_decode(self):
        actual_max = int(seq_lens.max().item())
\'\'\'
after = \'\'\'
class PagedAttention:
    def forward_decode(self):
        actual_max = int(seq_lens.max().item())
        assert actual_max >= 0, 'negative sequence length'
\'\'\'
''', encoding="utf-8")


def break_first_step(patches: Path) -> None:
    """Make three-tier-decode's first step name an operation that does not exist: its header loads, its steps do not build."""
    broken = patches / "three-tier-decode.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace('op = "', 'op = "no-such-', 1), encoding="utf-8")


def edit_file(path: Path, old: str, new: str, occurs: int = 1) -> None:
    """Replace the first OLD in PATH by NEW, checking OLD occurs OCCURS times (so a test edits what it means to)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == occurs, (old, text.count(old))
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# --------------------------------------------------------------------------- refusals


def refusal(call: Callable[..., object], *args: Any, **kwargs: Any) -> str:
    """Return the message of the PatchSetError that ``CALL(*ARGS, **KWARGS)`` raises: one line."""
    with pytest.raises(PatchSetError) as refused:
        call(*args, **kwargs)
    text = str(refused.value)
    assert "\n" not in text
    return text


def one_error_line(result: Any) -> str:
    """Return the one ``error:`` line a CLI run refused with (exit 2, nothing else on stderr or stdout, no traceback)."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == "", result.stdout  # a refusal reports nothing as done
    return lines[0]


# --------------------------------------------------------------------------- what a command imports


HEAVY = ("libcst", "jinja2", "git")

_PROBE = """
import json, sys
from patcher.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exit:
    code = exit.code
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
writer = "patcher.archive.writer" in sys.modules
print(json.dumps({"exit": code, "heavy": heavy, "writer": writer}), file=sys.__stderr__)
"""


def probe_imports(*args: object, cache: Path | None = None) -> dict[str, object]:
    """Run ``patcher ARGS`` in a fresh interpreter; return its exit code, the HEAVY libraries and whether the archive writer loaded.

    A fresh interpreter, because a module once imported stays in
    ``sys.modules``: an in-process run would see what earlier tests loaded.
    Without CACHE the patch cache is off. ARGS name their paths in full: the
    child runs in the repository root, where a mutation run's child finds
    its settings (it writes nothing there).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    if cache is None:
        env["PATCHER_NO_CACHE"] = "1"
    else:
        env["PATCHER_CACHE_DIR"] = str(cache)
    result = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + _PROBE, *map(str, args)],
                            capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    report: dict[str, object] = json.loads(result.stderr.strip().splitlines()[-1])
    return report
