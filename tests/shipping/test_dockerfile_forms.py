"""What a Dockerfile copies is read through the forms real ones use: ARG/ENV, JSON form, --chown, line
continuations, relative WORKDIR, globs, RUN in exec form, .dockerignore, and install-script loops.
"""

from __future__ import annotations

import json

from tests.fixtures_cli import COREX, INSTALLED
from tests.fixtures_vendor import SHIPPED


def test_dockerfile_forms_variables_and_loops_are_resolved(cli, modern) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", "--format", "json", modern)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    docker = data["dockerfile"]
    assert docker["workdirs"] == [{"line": 4, "path": "/workspace"}, {"line": 10, "path": "/workspace/qwen3_6_scripts"}]
    assert docker["copies"] == [
        {"line": 5, "instruction": "COPY", "flags": ["--chown=1000:1000"], "sources": ["qwen3_6_scripts"],
         "destination": "/workspace/qwen3_6_scripts"},
        {"line": 6, "instruction": "COPY", "flags": [], "sources": ["launch_service", "computility-run.yaml"],
         "destination": "/workspace/bin/"},
        {"line": 9, "instruction": "ADD", "flags": [], "sources": ["*.json"], "destination": "/workspace/data/"},
    ]
    assert docker["runs"] == [{"line": 11, "script": "/workspace/qwen3_6_scripts/patch_ops.sh",
                               "cwd": "/workspace/qwen3_6_scripts"}]
    shipped = {item["path"]: item["image_paths"] for item in data["shipped"]}
    assert shipped["launch_service"] == ["/workspace/bin/launch_service"]
    assert shipped["chat_dataset_v0.json"] == ["/workspace/data/chat_dataset_v0.json"]
    assert shipped[SHIPPED] == [f"/workspace/{SHIPPED}", INSTALLED,
                                "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"]
    assert shipped["qwen3_6_scripts/sequence.py"][1:] == [f"{COREX}/sequence.py",
                                                         "/usr/lib/python3/dist-packages/vllm/sequence.py"]
    # After the loop $VLLM keeps its last value, as in the shell.
    assert shipped["qwen3_6_scripts/reasoning/__init__.py"][1:] == ["/usr/lib/python3/dist-packages/vllm/reasoning/__init__.py"]
    assert data["scripts"] == [{"path": "qwen3_6_scripts/patch_ops.sh", "image_path": "/workspace/qwen3_6_scripts/patch_ops.sh",
                                "run_line": 11, "stops_on_error": True, "unresolved_variables": []}]
    assert all(p.startswith("vllm/") for p in data["dockerignored"]) and data["dockerignored"]
    assert "paged_attn.py" in data["never_shipped"] and "Dockerfile" in data["never_shipped"]
    (target,) = data["targets"]
    assert (target["shipped"], target["mirrors"], target["problem"]) == (SHIPPED, ["paged_attn.py"], None)


def test_a_copy_glob_matching_several_files_fills_a_folder(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    # Docker wants a trailing '/' here; without it each file must not land on the same path.
    (vendor_copy / "Dockerfile").write_text("FROM base\nCOPY *.py /workspace/stale\n")
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    shipped = {item["path"]: item["image_paths"] for item in data["shipped"]}
    assert shipped["paged_attn.py"] == ["/workspace/stale/paged_attn.py"]
    assert shipped["attention.py"] == ["/workspace/stale/attention.py"]
