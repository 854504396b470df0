"""Following a hostile install script or Dockerfile costs bounded time and memory: refused by size, or followed to an end.

Each script below hung a command or exhausted its memory: a variable
doubled line after line, loops that multiply, a line of spaces that a
pattern backtracked over cubically, megabytes of one line or of continued
lines, a JSON array nested 100,000 deep. A file past ``plan.MAX_SCRIPT`` is
refused by name; the shell reader's own bounds (``shell_interpreter.MAX_*``,
``shell_words.MAX_WORD``) end the rest with notes. Each command runs in a
child process, so one that went back to hanging or crashing fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.errors import ShippingError
from tests.fixtures_hostile_inputs import (
    BOUNDED_SCRIPTS,
    HOSTILE_DOCKERFILES,
    HOSTILE_SCRIPTS,
    one_error_line,
    run_patcher,
    with_dockerfile,
    with_script,
)
from tests.shipping.conftest import plan_of, script_context

SCRIPT = "qwen3_6_scripts/patch_ops.sh"
TOO_LARGE = ("is {size} bytes; patcher follows scripts of at most 1048576 "
             "(a Dockerfile or install script this large is not the vendor's: check the input)")
REFUSALS = {
    "a 5 MB line": f"error: {SCRIPT}: " + TOO_LARGE.format(size=5002054),
    "200,000 continued lines": f"error: {SCRIPT}: " + TOO_LARGE.format(size=4202037),
    "an 8 MB script": f"error: {SCRIPT}: " + TOO_LARGE.format(size=8502034),
}
FOLLOWED = sorted(set(HOSTILE_SCRIPTS) - set(REFUSALS))


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_script_past_the_size_bound_is_refused_by_name(tmp_path: Path, case: str) -> None:
    tree = with_script(tmp_path, HOSTILE_SCRIPTS[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == REFUSALS[case]


@pytest.mark.parametrize("case", FOLLOWED)
def test_a_hostile_script_within_the_size_bound_is_followed_to_an_end(tmp_path: Path, case: str) -> None:
    # A doubled variable ends as an unknown value, multiplied loops at the
    # reader's command bound, deep loops at its nesting bound: no crash, no kill.
    tree = with_script(tmp_path, HOSTILE_SCRIPTS[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "error:" not in result.stderr


@pytest.mark.parametrize("case", sorted(BOUNDED_SCRIPTS))
def test_a_script_just_inside_the_bounds_is_followed(tmp_path: Path, case: str) -> None:
    tree = with_script(tmp_path, BOUNDED_SCRIPTS[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error:" not in result.stderr


def test_a_dockerfile_past_the_size_bound_is_refused(tmp_path: Path) -> None:
    tree = with_dockerfile(tmp_path, HOSTILE_DOCKERFILES["200,000 continued lines"]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 2, result.stderr
    assert one_error_line(result).startswith("error: Dockerfile: is ")
    assert "patcher follows scripts of at most 1048576" in one_error_line(result)


@pytest.mark.parametrize("instruction", ["COPY", "RUN"])
def test_an_array_nested_too_deep_is_the_shell_form_and_crashes_no_rule(tmp_path: Path, instruction: str) -> None:
    # Not JSON to a reader that will not recurse 100,000 deep: BuildKit's shell form, as for any non-JSON.
    dockerfile = HOSTILE_DOCKERFILES["a COPY array nested 100,000 deep"]()
    if instruction == "RUN":
        dockerfile = dockerfile.replace("COPY ", "RUN ").replace(" /x\n", "\n")
    tree = with_dockerfile(tmp_path, dockerfile)
    for command in ("inspect", "check"):
        result = run_patcher(command, tree)
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_a_script_past_the_size_bound_is_refused_before_it_is_read_with_what_to_check() -> None:
    # In process, the same line the command prints after 'error: ': where, how large, the bound, and the hint.
    script = "echo x\n" * 150_000  # 1,050,000 bytes: a generated script, not the vendor's
    with pytest.raises(ShippingError) as raised:
        plan_of(script_context(script))
    assert str(raised.value) == "s/i.sh: " + TOO_LARGE.format(size=len(script))
