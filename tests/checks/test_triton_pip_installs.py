"""Rule no-triton-kernels on install steps: a ``pip install`` of a Triton build in an install script or a Dockerfile ``RUN``,
with the script's variables set by the Dockerfile's ``ENV``/``ARG`` or by a shell default."""

from __future__ import annotations

import pytest

from patcher.checks.no_triton_kernels import NoTritonKernels
from patcher.checks.triton_installs import is_triton_project

from tests.fixtures_rules import INSTALLS, SCRIPT, build_dockerfile, findings

RULE = NoTritonKernels()


@pytest.mark.parametrize("project, expected", [
    ("triton", True), ("triton-nightly", True), ("pytorch-triton", True), ("pytorch-triton-rocm", True),
    ("tritonclient", False), ("triton-", True), ("my-tritonic", False), ("xtriton", False), ("tritonx-y", False),
])
def test_a_triton_build_is_triton_or_its_packagings_not_a_project_named_alike(project: str, expected: bool) -> None:
    assert is_triton_project(project) is expected


def test_a_wheel_named_by_a_dockerfile_env_and_installed_by_the_script() -> None:
    dockerfile = build_dockerfile("ENV WHEEL=/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl",
                                  "ENV HF_HOME=/models")
    script = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/\n" \
             "pip install --no-deps $WHEEL\n"
    assert findings(RULE, script, path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        (SCRIPT, 3, "error", f"installs Triton (`/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


def test_a_wheel_named_by_the_dockerfile_s_only_env_and_installed_by_the_script() -> None:
    dockerfile = build_dockerfile("ARG WHEEL=/wheels/pytorch_triton-3.0.0-cp310-cp310-linux_x86_64.whl")
    assert findings(RULE, "set -e\npip install $WHEEL\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        (SCRIPT, 2, "error",
         f"installs Triton (`/wheels/pytorch_triton-3.0.0-cp310-cp310-linux_x86_64.whl`) {INSTALLS}"),
    ]


def test_an_env_that_names_triton_for_something_else_installs_nothing() -> None:
    dockerfile = build_dockerfile("ENV TRITON_CACHE_DIR=/tmp/triton", "ENV PKG=transformers==4.57.1")
    assert findings(RULE, "set -e\npip install $PKG\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == []


def test_a_dockerfile_run_that_installs_triton_is_reported_in_the_dockerfile() -> None:
    dockerfile = build_dockerfile("RUN pip3 install --no-cache-dir pytorch-triton==3.0.0 && rm -rf /root/.cache")
    assert findings(RULE, "set -e\n", path=SCRIPT, files={"Dockerfile": dockerfile}) == [
        ("Dockerfile", 2, "error", f"installs Triton (`pytorch-triton==3.0.0`) {INSTALLS}"),
    ]


def test_the_rule_reports_a_default_from_the_install_script_and_a_dockerfile_env_overrides_it() -> None:
    script = ("set -e\r\n"
              "cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py\r\n"
              "pip install \"${TRITON_PKG:-triton==2.1.0}\"\r\n")
    assert findings(RULE, script, path=SCRIPT) == [(SCRIPT, 3, "error", f"installs Triton (`triton==2.1.0`) {INSTALLS}")]
    dockerfile = build_dockerfile("ENV TRITON_PKG=tritonclient==2.41.0")
    assert findings(RULE, script, path=SCRIPT, files={"Dockerfile": dockerfile}) == []


PULLS = ("with its dependencies: from the index, torch's Linux wheels require a Triton build (torch 2.1.0: "
         "triton 2.1.0), whose kernels hang the BI-V100, and whether pip pulls one in depends on the image's own "
         "torch, which the build does not show (add --no-deps)")


@pytest.mark.parametrize("operand", ["torch==2.1.0", "torch", "./wheels/torch-2.1.0-cp310-cp310-linux_x86_64.whl"])
def test_installing_torch_with_its_dependencies_is_a_warning(operand: str) -> None:
    assert findings(RULE, f"set -e\npip install {operand}\n", path=SCRIPT) == [
        (SCRIPT, 2, "warning", f"pip installs `{operand}` {PULLS}")]


def test_a_requirements_file_naming_torch_is_a_warning_at_its_line() -> None:
    found = findings(RULE, "transformers==4.57.1\ntorch>=2.1\n", path="qwen3_6_scripts/requirements.txt",
                     files={SCRIPT: "set -e\npip install -r requirements.txt\n"})
    assert [(path, line, severity) for path, line, severity, _ in found] == [
        ("qwen3_6_scripts/requirements.txt", 2, "warning")]


def test_installing_torch_without_its_dependencies_is_fine() -> None:
    assert findings(RULE, "set -e\npip install --no-deps torch==2.1.0\n", path=SCRIPT) == []
