"""The outline of a series: each patch's id and target, read without rendering or building anything."""

from __future__ import annotations

from pathlib import Path

from patcher.patchset.load import load_outline

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD, PREGATHER


def test_the_outline_reads_targets_without_building_anything(tmp_path: Path) -> None:
    broken = GUARD.replace("{{ limit }}", "{% if %}").replace('op = "replace"', 'op = "nope"')
    third = PREGATHER.replace('id = "pregather"', 'id = "pregather-v"').replace("k_cache", "v_cache")
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": broken, "pregather.toml": PREGATHER, "pregather-v.toml": third})
    outline = load_outline(folder)
    assert outline.directory == folder
    assert outline.targets == ("vllm/attention/ops/paged_attn.py", "vllm/attention/ops/prefix_prefill.py")
    assert outline.ids_for("vllm/attention/ops/prefix_prefill.py") == ("pregather", "pregather-v")
    assert outline.ids_for("vllm/attention/ops/paged_attn.py") == ("v1-guard",)
    assert outline.ids_for("vllm/worker/model_runner.py") == ()


def test_the_outline_refuses_what_the_header_gets_wrong(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD.replace('scope = "', 'scop = "')})
    assert refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: unknown key 'scop'; did you mean 'scope'?"
    bad = write_patch_set(tmp_path / "bad" / "team", {"v1-guard.toml": "id = v1-guard\n"})
    assert refusal(load_outline, bad).startswith(f"{bad / 'v1-guard.toml'}: not valid TOML: ")
