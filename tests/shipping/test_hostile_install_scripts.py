"""Following a hostile install script or Dockerfile costs bounded time and memory: refused by name and line, or followed.

Each script below hung a command or exhausted its memory: a variable
doubled line after line, loops that multiply, a line of spaces that a
pattern backtracked over cubically, megabytes of one line or of continued
lines, a JSON array nested 100,000 deep. Each command runs in a child
process, so one that went back to hanging fails at a generous limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_hostile_inputs import (
    BOUNDED_SCRIPTS,
    HOSTILE_DOCKERFILES,
    HOSTILE_SCRIPTS,
    one_error_line,
    run_patcher,
    with_dockerfile,
    with_script,
)

SCRIPT = "qwen3_6_scripts/patch_ops.sh"
REFUSALS = {
    "a variable doubled forty times": f"error: {SCRIPT}: line 18: a word expands past 65536 characters: '$A$A'... "
                                      "(a value this long is not the vendor's: check the input)",
    "six nested loops of thirty values": f"error: {SCRIPT}: line 13: following its loops runs more than 100000 commands"
                                         " (loops this large are not the vendor's: check the input)",
    "spaces after a cd substitution": f"error: {SCRIPT}: line 1 is longer than 65536 characters "
                                      "(continued lines joined) (a line this long is not the vendor's: check the input)",
    "a 5 MB line": f"error: {SCRIPT}: is 5002054 bytes; patcher follows scripts of at most 1048576 "
                   "(a Dockerfile or install script this large is not the vendor's: check the input)",
    "200,000 continued lines": f"error: {SCRIPT}: is 4202037 bytes; patcher follows scripts of at most 1048576 "
                               "(a Dockerfile or install script this large is not the vendor's: check the input)",
    "an 8 MB script": f"error: {SCRIPT}: is 8502034 bytes; patcher follows scripts of at most 1048576 "
                      "(a Dockerfile or install script this large is not the vendor's: check the input)",
    "loops nested 40 deep": f"error: {SCRIPT}: line 34: loops nest more than 32 deep",
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SCRIPTS))
def test_a_hostile_install_script_is_refused_at_its_line(tmp_path: Path, case: str) -> None:
    tree = with_script(tmp_path, HOSTILE_SCRIPTS[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == REFUSALS[case]


@pytest.mark.parametrize("case", sorted(BOUNDED_SCRIPTS))
def test_a_script_just_inside_the_bounds_is_followed(tmp_path: Path, case: str) -> None:
    tree = with_script(tmp_path, BOUNDED_SCRIPTS[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 0, result.stderr
    assert "qwen3_6_scripts/paged_attn.py -> /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/" \
           "paged_attn.py" in result.stdout


@pytest.mark.parametrize("case", sorted(HOSTILE_DOCKERFILES))
def test_a_hostile_dockerfile_is_refused(tmp_path: Path, case: str) -> None:
    tree = with_dockerfile(tmp_path, HOSTILE_DOCKERFILES[case]())
    result = run_patcher("inspect", tree)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert line.startswith("error: Dockerfile")
    assert ("nested too deep" in line) if "COPY" in case else ("patcher follows scripts of at most" in line)


def test_a_run_array_nested_too_deep_is_not_followed_and_crashes_no_rule(tmp_path: Path) -> None:
    dockerfile = HOSTILE_DOCKERFILES["a COPY array nested 100,000 deep"]().replace("COPY ", "RUN ").replace(" /x\n", "\n")
    tree = with_dockerfile(tmp_path, dockerfile)
    for command in ("inspect", "check"):
        result = run_patcher(command, tree)
        assert result.returncode in (0, 1), result.stderr  # Docker runs it as a shell command; nothing to follow
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
