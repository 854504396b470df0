"""The shipped copy of a patch target is found through each form that installs it.

COPY into '.', ENV in RUN and in the script, sh -c, a quoted WORKDIR, default values, nested
loops, a script that cds into its own folder.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures_cli import INSTALLED
from tests.fixtures_vendor import SHIPPED


# Dockerfile and install-script forms that must still find the shipped paged_attn.py:
# (Dockerfile after FROM, patch_ops.sh body, image paths of the target).
ROOT_LIB = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"


FORMS = {
    "copy-into-dot": (
        "WORKDIR /workspace\nCOPY qwen3_6_scripts/patch_ops.sh .\nCOPY qwen3_6_scripts/paged_attn.py ./\n"
        "RUN ./patch_ops.sh\n",
        f"cp ./paged_attn.py {INSTALLED}\n", [INSTALLED]),
    "env-in-run-and-script": (
        f"ENV SCRIPTS=/workspace/qwen3_6_scripts OPS={INSTALLED.rsplit('/', 1)[0]}\n"
        "COPY qwen3_6_scripts $SCRIPTS\nRUN cd ${SCRIPTS} && bash -ex patch_ops.sh\n",
        "cp ./paged_attn.py $OPS/\n", [INSTALLED]),
    "sh-c": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "RUN [\"/bin/bash\", \"-c\", \"cd /workspace/qwen3_6_scripts && ./patch_ops.sh\"]\n",
        f"cp ./paged_attn.py {INSTALLED}\n", [INSTALLED]),
    "quoted-workdir": (
        "WORKDIR \"/workspace\"\nCOPY qwen3_6_scripts qwen3_6_scripts\n"
        "RUN cd qwen3_6_scripts && /workspace/qwen3_6_scripts/patch_ops.sh\n",
        f"cp ./paged_attn.py {INSTALLED}\n", [INSTALLED]),
    "default-value": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n",
        f"OPS=${{OPS:-{INSTALLED.rsplit('/', 1)[0]}}}\ncp ./paged_attn.py $OPS/paged_attn.py\n", [INSTALLED]),
    "nested-loops": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n",
        "for root in /usr/local/corex/lib/python3/dist-packages /usr/lib/python3/dist-packages; do\n"
        "  for name in paged_attn.py; do\n"
        "    while false; do :; done\n"
        "    cp ./$name $root/vllm/attention/ops/\n"
        "  done\n"
        "done\n", [INSTALLED, ROOT_LIB]),
    "own-folder": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN bash /workspace/qwen3_6_scripts/patch_ops.sh\n",
        'cd "$(dirname "$0")"\nHERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\n'
        f"pushd {INSTALLED.rsplit('/', 1)[0]}\n/bin/cp $HERE/paged_attn.py .\npopd\n", [INSTALLED]),
}


@pytest.mark.parametrize("form", FORMS)
def test_the_shipped_copy_is_found_through_these_forms(cli, vendor_copy, form) -> None:  # type: ignore[no-untyped-def]
    dockerfile, script, image_paths = FORMS[form]
    (vendor_copy / "Dockerfile").write_text("FROM registry.example.invalid/base:v1\n" + dockerfile)
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text("#!/bin/sh\nset -e\n" + script)
    result = cli("inspect", "--format", "json", "--strict", vendor_copy)
    assert result.exit_code == 0, result.stderr
    (target,) = json.loads(result.stdout)["targets"]
    assert (target["shipped"], target["image_paths"], target["problem"]) == (SHIPPED, image_paths, None)
