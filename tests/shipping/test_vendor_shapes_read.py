"""The vendor's own build keeps its answers: the fixture, the realistic drop, and the shapes seen in real versions.

VENDOR.md: the real Dockerfile (CRLF, FROM, RUN mkdir, WORKDIR /workspace/,
COPY ./qwen3_6_scripts, RUN cd ./qwen3_6_scripts && ./patch_ops.sh) and
patch_ops.sh (plain cp lines, cp -r into an existing folder, python
helpers that edit other files in place, a pip install, sanity checks);
later versions loop over candidate dist-packages roots, use variables and
``2>/dev/null || true``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from patcher.archive import open_source
from patcher.shipping import plan_shipping
from tests.fixtures_vendor import ROOT, VENDOR_TREE
from tests.shipping.conftest import plan_of

COREX = "/usr/local/corex/lib/python3/dist-packages/vllm"
TARGET = "vllm/attention/ops/paged_attn.py"


def test_the_fixture_tree_installs_what_patch_ops_copies() -> None:
    with open_source(VENDOR_TREE) as tree:
        plan = plan_shipping(tree)
    assert [(i.line, i.path, i.image_path, i.stops_on_error) for i in plan.installed] == [
        (8, "qwen3_6_scripts/paged_attn.py", f"{COREX}/attention/ops/paged_attn.py", False),
        (14, "qwen3_6_scripts/qwen3_5.py", f"{COREX}/model_executor/models/qwen3_5.py", False),
        (15, "qwen3_6_scripts/mamba_cache.py", f"{COREX}/model_executor/models/mamba_cache.py", False),
        (19, "qwen3_6_scripts/sequence.py", f"{COREX}/sequence.py", False),
        (23, "qwen3_6_scripts/reasoning/__init__.py", f"{COREX}/reasoning/__init__.py", False),
        (23, "qwen3_6_scripts/reasoning/qwen3_reasoning_parser.py", f"{COREX}/reasoning/qwen3_reasoning_parser.py",
         False),
        (28, "qwen3_6_scripts/chat_template.jinja", "/workspace/templates/qwen3_6.jinja", False),
    ]
    assert plan.shipped_copy(TARGET) == "qwen3_6_scripts/paged_attn.py"
    assert plan.notes == ()  # the helpers, pip install and the sanity checks are all read
    assert plan.caveats("qwen3_6_scripts/paged_attn.py") == ()


def test_the_realistic_drop_installs_every_module_its_table_names(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_realistic_drop", ROOT / "benchmarks" / "make_realistic_drop.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, generator)  # its dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    generator = sys.modules[spec.name]
    with open_source(generator.build(tmp_path / "drop.zip")) as tree:
        plan = plan_shipping(tree)
    installed = {i.path: i.image_path for i in plan.installed}
    for path, destination, _ in generator.SHIPPED:
        if destination:
            assert installed[f"qwen3_6_scripts/{path}"] == f"{generator.DIST}/{destination}"
    assert plan.shipped_copy(TARGET) == "qwen3_6_scripts/paged_attn.py"
    assert plan.notes == ()


def test_candidate_roots_variables_and_hidden_failures() -> None:
    script = (
        "#!/bin/bash\n"
        "for root in /usr/local/corex/lib/python3/dist-packages /usr/lib/python3/dist-packages; do\n"
        "  VLLM=\"$root/vllm\"\n"
        "  [ -d \"$VLLM\" ] || continue\n"
        "  cp ./paged_attn.py \"$VLLM/attention/ops/paged_attn.py\" 2>/dev/null || true\n"
        "done\n"
    )
    plan = plan_of({"Dockerfile": "FROM base\r\nRUN mkdir /workspace\r\nWORKDIR /workspace/\r\n"
                                  "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\r\n"
                                  "RUN cd ./qwen3_6_scripts && ./patch_ops.sh",
                    "qwen3_6_scripts/patch_ops.sh": script, "qwen3_6_scripts/paged_attn.py": ""})
    assert [(i.image_path, i.hides_failure, i.stops_on_error) for i in plan.find(TARGET)] == [
        (f"{COREX}/attention/ops/paged_attn.py", ("2>/dev/null", "|| true"), False),
        ("/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py", ("2>/dev/null", "|| true"), False),
    ]
    assert plan.shipped_copy(TARGET) == "qwen3_6_scripts/paged_attn.py"
