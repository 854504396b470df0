"""A ``pip install`` whose package name the reader cannot know could be Triton: a warning naming the line.

A shell glob (``triton*.whl``, ``./wheels/*.whl``) is matched against the
files the build copies: a Triton wheel among them is an error naming it,
other wheels are judged as what they are. A glob that matches no copied
file, or a variable set nowhere the build shows (``$WHEEL``), is a warning
when it could stand for a Triton build's name; a name whose project part is
known (``$DIR/transformers-4.57.1-py3-none-any.whl``) is judged by it.
"""

from __future__ import annotations

import pytest

from patcher.checks import RULES

from tests.fixtures_rules import INSTALLS, SCRIPT, build_dockerfile, findings

RULE = RULES["no-triton-kernels"]
WHEELS = "qwen3_6_scripts/wheels"
TRITON_WHEEL = "triton-2.1.0-cp310-cp310-linux_x86_64.whl"
OTHER_WHEEL = "transformers-4.57.1-py3-none-any.whl"


def check(script: str, wheels: tuple[str, ...] = (), dockerfile: str | None = None) -> list[tuple[str, int, str, str]]:
    """Run the rule with ``script`` as the install script and ``wheels`` copied into qwen3_6_scripts/wheels/."""
    files = {f"{WHEELS}/{name}": "wheel bytes\n" for name in wheels}
    if dockerfile is not None:
        files["Dockerfile"] = dockerfile
    return findings(RULE, script, path=SCRIPT, files=files)


@pytest.mark.parametrize("operand", [
    "triton*.whl", "./wheels/*.whl", "/opt/wheels/*.whl", "tri?on-2.1.0-cp310-cp310-linux_x86_64.whl",
    "./wheels/[tp]*.whl", "/opt/*", "pytorch_*.whl", "$WHEEL", "${WHEEL}", "$WHEEL_DIR/$WHEEL_NAME",
    "./wheels/${NAME}-2.1.0-cp310-cp310-linux_x86_64.whl", "$(ls ./wheels/*.whl)",
])
def test_a_name_that_could_be_triton_is_a_warning_naming_the_line(operand: str) -> None:
    found = check(f"set -e\necho installing wheels\npip install --no-deps {operand} || true\n")
    assert [(path, line, severity) for path, line, severity, _ in found] == [(SCRIPT, 3, "warning")], found
    assert found[0][3].startswith("pip installs `") and "it could be a Triton build" in found[0][3]


@pytest.mark.parametrize("operand", [
    "transformers-*.whl", "./wheels/xformers-*.whl", "$WHEEL_DIR/transformers-4.57.1-py3-none-any.whl",
    "${VERSION:+transformers==$VERSION}", "numpy==${NUMPY_VERSION}", "*.tar.bz2", "requests[$EXTRAS]",
])
def test_a_name_whose_project_is_known_or_cannot_be_triton_is_fine(operand: str) -> None:
    assert check(f"set -e\npip install {operand}\n") == []


def test_a_glob_that_matches_a_copied_triton_wheel_is_an_error_naming_the_wheel() -> None:
    found = check("set -e\npip install ./wheels/*.whl\n", wheels=(OTHER_WHEEL, TRITON_WHEEL))
    assert found == [(SCRIPT, 2, "error",
                      f"installs Triton (`/workspace/qwen3_6_scripts/wheels/{TRITON_WHEEL}`, {WHEELS}/{TRITON_WHEEL} "
                      f"in the context, matched by `./wheels/*.whl`) {INSTALLS}")]


def test_a_glob_that_matches_only_other_copied_wheels_is_fine() -> None:
    assert check("set -e\npip install ./wheels/*.whl\n", wheels=(OTHER_WHEEL,)) == []
    # The glob is matched in the folder the command runs in.
    assert check("set -e\ncd wheels\npip install *.whl\n", wheels=(OTHER_WHEEL,)) == []
    found = check("set -e\ncd wheels\npip install *.whl\n", wheels=(TRITON_WHEEL,))
    assert [(line, severity) for _, line, severity, _ in found] == [(3, "error")]


def test_a_variable_the_dockerfile_sets_is_read_not_warned_about() -> None:
    dockerfile = build_dockerfile(f"ENV WHEEL=/wheels/{OTHER_WHEEL}")
    assert check("set -e\npip install $WHEEL\n", dockerfile=dockerfile) == []
    dockerfile = build_dockerfile(f"ENV WHEEL=/wheels/{TRITON_WHEEL}")
    found = check("set -e\npip install $WHEEL\n", dockerfile=dockerfile)
    assert [(line, severity) for _, line, severity, _ in found] == [(2, "error")]


def test_a_dockerfile_run_reads_its_stage_s_env_and_arg_values() -> None:
    dockerfile = build_dockerfile("ARG WHEEL_DIR=/wheels", f"ENV WHEEL=${{WHEEL_DIR}}/{OTHER_WHEEL}",
                                  "RUN pip install $WHEEL")
    assert check("set -e\n", dockerfile=dockerfile) == []
    dockerfile = build_dockerfile(f"ENV WHEEL=/wheels/{TRITON_WHEEL}", "RUN pip install --no-deps $WHEEL")
    found = check("set -e\n", dockerfile=dockerfile)
    assert [(path, line, severity) for path, line, severity, _ in found] == [("Dockerfile", 3, "error")]
    # A new stage starts with nothing set.
    dockerfile = build_dockerfile(f"ENV WHEEL=/wheels/{OTHER_WHEEL}", "FROM base AS final", "RUN pip install $WHEEL")
    found = check("set -e\n", dockerfile=dockerfile)
    assert [(path, line, severity) for path, line, severity, _ in found] == [("Dockerfile", 4, "warning")]


def test_the_vendor_s_own_pip_line_draws_nothing() -> None:
    assert check("# tokenizer needs a newer transformers than the base image has\r\n"
                 "pip install transformers==4.57.1 --no-deps\r\n") == []



@pytest.mark.parametrize("operand", ["${" * 100_000, "${" * 100_000 + "${X}"], ids=["unclosed", "closed-at-the-end"])
def test_a_long_run_of_unclosed_braces_is_read_at_once_and_names_nothing(operand: str) -> None:
    # 100,000 '${' in one operand (200 KB, inside the script bound): sh finds it a bad substitution, so pip never
    # runs. Each '${' starts a short match; one that read on to a '}' at the end took the whole operand for one
    # variable (a warning), and without that '}' began again at each '${' (quadratic: an hour at 1 MB).
    assert check(f"pip install {operand}\n") == []
