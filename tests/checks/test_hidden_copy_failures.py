"""Rule install-fails-loudly: the whole message a user reads for each way an install script hides a failed copy.

Each script is run by the example build context's Dockerfile
(``RUN cd ./qwen3_6_scripts && ./patch_ops.sh``), as ``patcher test`` runs
the rule's own examples; the patched file is qwen3_6_scripts/paged_attn.py.
Copies of files no patch changes may fail quietly.
"""

from __future__ import annotations

import pytest

from patcher.checks.install_fails_loudly import EXAMPLE_SCRIPT, InstallFailsLoudly

from tests.fixtures_rules import COREX_OPS as OPS, findings

RULE = InstallFailsLoudly()
COPY = f"the copy of qwen3_6_scripts/paged_attn.py to {OPS}/paged_attn.py"
UNNOTICED = "so a failed copy goes unnoticed and the build succeeds"


def test_a_vendor_style_script_without_set_e_is_reported_at_the_copy() -> None:
    script = (f"cp ./paged_attn.py {OPS}/paged_attn.py\r\n"
              "cp -r ./reasoning /usr/local/corex/lib/python3/dist-packages/vllm/\r\n"
              "python3 ./patch_qwen.py\r\n")
    assert findings(RULE, script) == [(EXAMPLE_SCRIPT, 1, "error",
                               f"{COPY} runs without `set -e`, so the script goes on after a failed copy")]


def test_two_ways_of_hiding_the_failure_on_one_copy_are_both_named() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py && echo copied || true\n"
    assert findings(RULE, script) == [(EXAMPLE_SCRIPT, 2, "error", f"{COPY} is followed by `&& ...` and `|| true`, {UNNOTICED}")]


def test_a_pipe_hides_the_failure_even_with_a_quiet_redirection() -> None:
    script = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py 2>/dev/null | tee -a install.log\n"
    assert findings(RULE, script) == [(EXAMPLE_SCRIPT, 2, "error", f"{COPY} is followed by `| ...`, {UNNOTICED}")]


@pytest.mark.parametrize("redirect", ["2>/dev/null", ">/dev/null 2>&1"])
def test_a_quiet_copy_under_set_e_still_stops_the_build_but_says_nothing(redirect: str) -> None:
    script = f"#!/bin/bash\nset -euo pipefail\ncp ./paged_attn.py {OPS}/paged_attn.py {redirect}\n"
    assert findings(RULE, script) == [(EXAMPLE_SCRIPT, 3, "error", (
        f"{COPY} is followed by `{redirect}`: `set -e` still stops the build if it fails, "
        "but the log will not say why"))]


def test_a_quiet_copy_without_set_e_is_reported_for_the_missing_set_e() -> None:
    script = f"cp ./paged_attn.py {OPS}/paged_attn.py 2>/dev/null\n"
    assert findings(RULE, script) == [(EXAMPLE_SCRIPT, 1, "error",
                               f"{COPY} runs without `set -e`, so the script goes on after a failed copy")]


def test_a_copy_to_several_candidate_roots_is_one_finding() -> None:
    script = ("set -e\n"
              "for ROOT in /usr/local/corex/lib/python3 /usr/local/lib/python3.10 /usr/lib/python3; do\n"
              "  cp ./paged_attn.py $ROOT/dist-packages/vllm/attention/ops/paged_attn.py || true\n"
              "done\n"
              f"cp ./paged_attn.py {OPS}/paged_attn.py 2>/dev/null\n")
    found = findings(RULE, script)
    assert [(path, line) for path, line, _, _ in found] == [(EXAMPLE_SCRIPT, 3), (EXAMPLE_SCRIPT, 5)]
    assert found[0][3].endswith(f"is followed by `|| true`, {UNNOTICED}")
    assert found[1][3] == (f"{COPY} is followed by `2>/dev/null`: `set -e` still stops the build if it fails, "
                           "but the log will not say why")


def test_each_hidden_copy_of_the_patched_file_is_its_own_finding() -> None:
    script = (f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py || true\n"
              "cp ./paged_attn.py /usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py || true\n")
    assert findings(RULE, script) == [
        (EXAMPLE_SCRIPT, 2, "error", f"{COPY} is followed by `|| true`, {UNNOTICED}"),
        (EXAMPLE_SCRIPT, 3, "error", "the copy of qwen3_6_scripts/paged_attn.py to "
                                     "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py is followed by "
                                     f"`|| true`, {UNNOTICED}"),
    ]


def test_files_no_patch_changes_may_fail_quietly() -> None:
    script = (f"cp ./other.py {OPS}/other.py || true\n"
              "set -e\n"
              f"cp ./paged_attn.py {OPS}/paged_attn.py\n")
    assert findings(RULE, script) == []


def test_a_copy_that_fails_loudly_or_of_another_file_does_not_end_the_reading() -> None:
    script = (f"cp ./other.py {OPS}/other.py || true\n"
              "set -e\n"
              f"cp ./paged_attn.py {OPS}/paged_attn.py\n"
              "cp ./paged_attn.py /usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py || true\n")
    assert findings(RULE, script) == [
        (EXAMPLE_SCRIPT, 4, "error", "the copy of qwen3_6_scripts/paged_attn.py to "
                                     "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py is followed by "
                                     f"`|| true`, {UNNOTICED}"),
    ]


def test_a_copy_that_exits_with_success_on_failure_is_reported_and_one_that_exits_with_failure_is_not() -> None:
    hidden = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py || exit 0\n"
    loud = f"set -e\ncp ./paged_attn.py {OPS}/paged_attn.py || {{ echo 'paged_attn.py not installed' >&2; exit 1; }}\n"
    assert findings(RULE, hidden) == [(EXAMPLE_SCRIPT, 2, "error", f"{COPY} is followed by `|| exit 0`, {UNNOTICED}")]
    assert findings(RULE, loud) == []
