"""Rule install-fails-loudly on copies a Dockerfile ``RUN`` line makes itself, judged as Docker runs them.

A RUN line runs as ``/bin/sh -c LINE`` (no ``set -e``) and fails the build
on the whole line's exit status: a copy of the patched file fails loudly
when its status is the line's, and silently when ``|| true``, a ``;``
chain or a loop lets a later command decide it. The patched file is
qwen3_6_scripts/paged_attn.py, copied in by ``COPY ./qwen3_6_scripts``.
"""

from __future__ import annotations

import pytest

from patcher.checks.install_fails_loudly import InstallFailsLoudly

from tests.fixtures_rules import COREX_OPS as OPS, findings

RULE = InstallFailsLoudly()
SHIPPED = "/workspace/qwen3_6_scripts/paged_attn.py"
COPY = f"the copy of qwen3_6_scripts/paged_attn.py to {OPS}/paged_attn.py"
UNNOTICED = "so a failed copy goes unnoticed and the build succeeds"
VENDOR_SCRIPT = f"cp ./paged_attn.py {OPS}/paged_attn.py\r\npython3 ./patch_qwen.py\r\n"


def dockerfile(*runs: str) -> str:
    return ("FROM registry.example.invalid/bi100-base:v1.2.3\r\nRUN mkdir /workspace\r\nWORKDIR /workspace/\r\n"
            "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\r\n" + "".join(f"{run}\r\n" for run in runs))


def on_run(*runs: str, script: str = "set -e\n") -> list[tuple[str, int, str, str]]:
    return findings(RULE, dockerfile(*runs), path="Dockerfile", files={"qwen3_6_scripts/patch_ops.sh": script})


@pytest.mark.parametrize("run, how", [
    (f"RUN cp {SHIPPED} {OPS}/paged_attn.py || true", "is followed by `|| true`"),
    (f"RUN cp {SHIPPED} {OPS}/paged_attn.py || echo 'copy failed'", "is followed by `|| echo`"),
    (f"RUN cp {SHIPPED} {OPS}/paged_attn.py | tee /tmp/install.log", "is followed by `| ...`"),
    (f"RUN cp {SHIPPED} {OPS}/paged_attn.py; echo done",
     "does not decide its RUN line's exit status (a later command does)"),
    (f"RUN cp {SHIPPED} {OPS}/paged_attn.py && echo copied; echo done",
     "is followed by `&& ...`"),
    (f"RUN set -e; cp {SHIPPED} {OPS}/paged_attn.py || true", "is followed by `|| true`"),
])
def test_a_run_line_that_goes_on_after_a_failed_copy_is_reported_at_its_line(run: str, how: str) -> None:
    assert on_run(run) == [("Dockerfile", 5, "error", f"{COPY} {how}, {UNNOTICED}")]


def test_a_quiet_run_copy_still_fails_the_build_but_says_nothing() -> None:
    assert on_run(f"RUN cp {SHIPPED} {OPS}/paged_attn.py 2>/dev/null") == [("Dockerfile", 5, "error", (
        f"{COPY} is followed by `2>/dev/null`: the RUN line still fails the build if it fails, "
        "but the log will not say why"))]


@pytest.mark.parametrize("run", [
    f"RUN cp {SHIPPED} {OPS}/paged_attn.py",
    f"RUN echo installing; cp {SHIPPED} {OPS}/paged_attn.py",
    f"RUN mkdir -p {OPS} && cp {SHIPPED} {OPS}/paged_attn.py",
    f"RUN cp {SHIPPED} {OPS}/paged_attn.py && echo copied",
    f"RUN cp {SHIPPED} {OPS}/paged_attn.py \\\r\n    && python3 -c 'import vllm'",
    f'RUN ["cp", "{SHIPPED}", "{OPS}/paged_attn.py"]',
])
def test_a_run_line_whose_status_is_the_copys_fails_loudly_without_set_e(run: str) -> None:
    assert on_run(run) == []


def test_the_vendors_own_dockerfile_is_judged_in_its_install_script_not_on_the_run_line() -> None:
    # RUN cd ./qwen3_6_scripts && ./patch_ops.sh: the copy is the script's, which has no set -e.
    assert on_run("RUN cd ./qwen3_6_scripts && ./patch_ops.sh", script=VENDOR_SCRIPT) == [
        ("qwen3_6_scripts/patch_ops.sh", 1, "error",
         f"{COPY} runs without `set -e`, so the script goes on after a failed copy")]


def test_a_hidden_run_copy_of_a_file_no_patch_changes_is_not_reported() -> None:
    assert on_run("RUN cp /workspace/qwen3_6_scripts/other.py /tmp/other.py || true") == []
