"""patcher.toml beside the Dockerfile (or --config FILE) declares more mirror groups.

A bad one is one error line saying where and what.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fixtures_vendor import SHIPPED


CONFIG = """
[verify-sync]
[[verify-sync.mirrors]]
shipped = "qwen3_6_scripts/sequence.py"
copies = ["sequence.py"]

[some-other-command]  # other tables belong to other commands
anything = 1
"""


def test_patcher_toml_beside_the_dockerfile_declares_more_groups(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_text(CONFIG)
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    (vendor_copy / "sequence.py").write_bytes((vendor_copy / "qwen3_6_scripts/sequence.py").read_bytes() + b"# edited\n")
    result = cli("verify-sync", vendor_copy, "--format", "json")
    assert result.exit_code == 1
    groups = {g["shipped"]: g for g in json.loads(result.stdout)["groups"]}
    assert groups[SHIPPED]["in_sync"] is True
    extra = groups["qwen3_6_scripts/sequence.py"]
    assert (extra["origin"], extra["in_sync"]) == ("patcher.toml", False)
    assert extra["image_paths"] == ["/usr/local/corex/lib/python3/dist-packages/vllm/sequence.py"]
    text = cli("verify-sync", vendor_copy).stdout.splitlines()
    assert text[1].startswith("sequence.py (") and " != qwen3_6_scripts/sequence.py (" in text[1]


def test_config_option_names_the_file(cli, vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "groups.toml"
    config.write_text(CONFIG)
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    shutil.copyfile(vendor_copy / "qwen3_6_scripts/sequence.py", vendor_copy / "sequence.py")
    result = cli("verify-sync", vendor_copy, "--config", config)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("sequence.py == qwen3_6_scripts/sequence.py (")
    assert result.stderr == "all 2 mirror groups in sync\n"


@pytest.mark.parametrize(("config", "message"), [
    ('[verify-sync]\nmirror = []\n', "unknown key 'verify-sync.mirror'; did you mean 'verify-sync.mirrors'?"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\ncopies = ["nope.py"]\n',
     "names 'nope.py', which is not a file of"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\n', "'verify-sync.mirrors[1].copies' must be"),
    ("[verify-sync\n", "not valid TOML"),
])
def test_a_bad_config_is_one_error_line(cli, vendor_copy, config, message) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_text(config)
    result = cli("verify-sync", vendor_copy)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: patcher.toml: ") and message in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_a_config_in_the_context_may_be_one_mebibyte_and_no_more(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    from patcher.review.sync import MAX_CONFIG

    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    padded = CONFIG.encode() + b"#" * (MAX_CONFIG - len(CONFIG) - 1) + b"\n"
    (vendor_copy / "patcher.toml").write_bytes(padded)
    shutil.copyfile(vendor_copy / "qwen3_6_scripts/sequence.py", vendor_copy / "sequence.py")
    assert len(padded) == MAX_CONFIG and cli("verify-sync", vendor_copy).exit_code == 0
    (vendor_copy / "patcher.toml").write_bytes(padded + b"\n")
    result = cli("verify-sync", vendor_copy)
    assert (result.exit_code, result.stderr) == (2, f"error: patcher.toml: is {MAX_CONFIG + 1} bytes, more than the "
                                                    f"{MAX_CONFIG} a configuration may be\n")
