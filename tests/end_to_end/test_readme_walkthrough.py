"""The README's walkthrough runs as written: apply, re-apply, verify-sync, review, upgrade, a new patch, in that order.

The commands come from the ``sh`` block under ``## Walkthrough`` in
README.md, so the README cannot drift from what the tool does: each line
runs in a scratch checkout (the patch set, its templates and the fixtures
copied into tmp_path), and must exit 0, or the ``exit N`` its comment
names. The ``$EDITOR`` line is done by ``fill_in_length_check``, as
its comment describes. What each step must show is asserted loosely
(statuses, paths, exit codes), not the exact wording other work may change.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.fixtures_patches import fill_in_length_check
from tests.fixtures_vendor import FIXTURES, ROOT, SHIPPED, VENDOR_ZIP

README = ROOT / "README.md"
PATCH_ID = "decode-length-check"


@dataclass(frozen=True)
class Step:
    """One command of the walkthrough: its words, and the exit code its comment promises (0 unless it says)."""

    line: str
    argv: tuple[str, ...]
    exit_code: int

    @property
    def kind(self) -> str:
        """Name the step by its command: 'apply', 'diff', 'python', '$EDITOR'..."""
        return self.argv[1] if self.argv[0] == "patcher" else self.argv[0]


def walkthrough_steps(readme: str) -> list[Step]:
    """Read the commands of the first ``sh`` block under ``## Walkthrough``: one a line, ``#`` lines and comments aside."""
    section = readme.split("\n## Walkthrough\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    steps = []
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, _, comment = line.partition("  # ")
        promised = re.search(r"\bexit (\d+)\b", comment)
        steps.append(Step(line, tuple(shlex.split(command)), int(promised.group(1)) if promised else 0))
    return steps


def shipped_in(context: Path) -> bytes:
    """The shipped paged_attn.py in a zip build context (the vendor's layout, one top folder)."""
    with zipfile.ZipFile(context) as archive:
        return archive.read(next(n for n in archive.namelist() if n.endswith("/" + SHIPPED)))


def series_lines(checkout: Path) -> list[str]:
    return (checkout / "patches" / "series").read_text(encoding="utf-8").splitlines()


# What each step must show, in the walkthrough's order: (its kind, a check of (result, checkout)).
Check = Callable[[Any, Path], None]


def _applied(result: Any, checkout: Path) -> None:
    assert result.stdout.strip() == "build/context.zip"
    assert re.search(r"\b3 applied, 0 already applied, 0 failed\b", result.stderr), result.stderr
    assert (checkout / "build" / "context.zip").is_file()


def _reapplied(result: Any, checkout: Path) -> None:
    for patch in ("three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"):
        assert re.search(rf"already applied\s+{patch}\b", result.stderr), result.stderr
    assert shipped_in(checkout / "build" / "again.zip") == shipped_in(checkout / "build" / "context.zip")


def _in_sync(result: Any, checkout: Path) -> None:
    assert SHIPPED in result.stdout


def _diff(result: Any, checkout: Path) -> None:
    assert f"--- a/{SHIPPED}" in result.stdout and f"+++ b/{SHIPPED}" in result.stdout
    assert "assert actual_max >= 0" not in result.stdout


def _markdown(result: Any, checkout: Path) -> None:
    assert "`three-tier-decode`" in result.stdout and "```diff" in result.stdout


def _pair(result: Any, checkout: Path) -> None:
    assert (checkout / "build" / "pairs" / "v2-gains-argument" / "new").is_dir()


def _upgrade(result: Any, checkout: Path) -> None:
    assert "three-tier-decode" in result.stdout


def _new(result: Any, checkout: Path) -> None:
    assert (checkout / "patches" / f"{PATCH_ID}.toml").is_file()
    assert any(line.startswith(f"# {PATCH_ID}.toml") and "inactive" in line for line in series_lines(checkout))


def _edited(result: Any, checkout: Path) -> None:
    assert "assert actual_max >= 0" in (checkout / "patches" / f"{PATCH_ID}.toml").read_text(encoding="utf-8")


def _tested(result: Any, checkout: Path) -> None:
    assert result.stdout.splitlines()[-1].endswith(" passed, 0 failed")
    assert f"{PATCH_ID}.toml" not in series_lines(checkout)  # testing alone activates nothing


def _activated(result: Any, checkout: Path) -> None:
    assert f"{PATCH_ID}.toml" in series_lines(checkout)


def _diff_with_the_new_patch(result: Any, checkout: Path) -> None:
    assert "+        assert actual_max >= 0, 'negative sequence length'" in result.stdout.replace("\r", "")
    assert PATCH_ID in result.stdout  # the '#' lines name the patches that made each file


EXPECTED: list[tuple[str, Check]] = [
    ("apply", _applied), ("apply", _reapplied), ("verify-sync", _in_sync), ("diff", _diff), ("diff", _markdown),
    ("python", _pair), ("upgrade", _upgrade), ("new", _new), ("$EDITOR", _edited), ("test", _tested),
    ("test", _activated), ("diff", _diff_with_the_new_patch),
]


def scratch_checkout(folder: Path) -> Path:
    """Lay out what the walkthrough reads from the repository root: patches/, templates/, the fixtures it names."""
    shutil.copytree(ROOT / "patches", folder / "patches")
    shutil.copytree(ROOT / "templates", folder / "templates")
    (folder / "fixtures").mkdir()
    shutil.copy2(VENDOR_ZIP, folder / "fixtures" / VENDOR_ZIP.name)
    shutil.copy2(FIXTURES / "make_upgrade_pairs.py", folder / "fixtures" / "make_upgrade_pairs.py")
    shutil.copytree(FIXTURES / "vendor", folder / "fixtures" / "vendor")  # what make_upgrade_pairs.py starts from
    return folder


def test_the_walkthrough_block_holds_the_steps_this_test_checks() -> None:
    steps = walkthrough_steps(README.read_text(encoding="utf-8"))
    assert [step.kind for step in steps] == [kind for kind, _ in EXPECTED]
    assert [step.exit_code for step in steps].count(0) == len(steps) - 1  # upgrade alone promises exit 1


def test_the_readme_walkthrough_runs_as_written(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = scratch_checkout(tmp_path / "checkout")
    monkeypatch.chdir(checkout)
    steps = walkthrough_steps(README.read_text(encoding="utf-8"))
    assert [step.kind for step in steps] == [kind for kind, _ in EXPECTED]
    for step, (_, check) in zip(steps, EXPECTED):
        if step.argv[0] == "patcher":
            result = cli(*step.argv[1:])
            code = result.exit_code
        elif step.argv[0] == "python":
            done = subprocess.run([sys.executable, "-B", *step.argv[1:]], cwd=checkout, capture_output=True,
                                  text=True, check=False)
            result, code = done, done.returncode
        else:
            assert step.argv[0] == "$EDITOR", step.line
            fill_in_length_check(checkout / step.argv[1])
            result, code = None, 0
        said = "" if result is None else f"{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        assert code == step.exit_code, f"{step.line}: exit {code}, README says {step.exit_code}\n{said}"
        if result is not None:
            assert "Traceback" not in result.stderr, step.line
        check(result, checkout)
    # Nothing was written outside the scratch checkout's build/ and patches/.
    assert sorted(p.name for p in checkout.iterdir()) == ["build", "fixtures", "patches", "templates"]


def test_walkthrough_steps_are_read_with_their_promised_exit_codes() -> None:
    readme = ("intro\n## Walkthrough\ntext\n```sh\n# a comment\npatcher apply a.zip -o b.zip\n"
              "patcher upgrade a b  # exit 1: review\n\n$EDITOR p.toml  # e.g. 'x = $_'\n```\n"
              "## Next\n```sh\nno\n```\n")
    steps = walkthrough_steps(readme)
    assert [(s.argv, s.exit_code) for s in steps] == [
        (("patcher", "apply", "a.zip", "-o", "b.zip"), 0), (("patcher", "upgrade", "a", "b"), 1),
        (("$EDITOR", "p.toml"), 0)]
