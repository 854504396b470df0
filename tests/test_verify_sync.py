"""``patcher verify-sync`` through the CLI: drifted, in sync, line endings only, configuration, pre-commit."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

IMAGE = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
SHIPS = f"the image ships {SHIPPED} -> {IMAGE}"
# The fixture's line counts, read from it rather than written down twice.
N = len((VENDOR_TREE / SHIPPED).read_bytes().splitlines())
ROOT_N = len((VENDOR_TREE / "paged_attn.py").read_bytes().splitlines())


def test_the_demo_zip_has_drifted(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", vendor_zip)
    assert result.exit_code == 1
    assert result.stdout == f"paged_attn.py ({ROOT_N} lines) != {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr.startswith("1 of 1 mirror group drifted: ")


def test_diff_shows_how_to_bring_the_stale_copy_in_line(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", "--diff", vendor_zip)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[1:4] == [f"diff --git a/paged_attn.py b/{SHIPPED}", "--- a/paged_attn.py", f"+++ b/{SHIPPED}"]
    assert lines[4] == f"@@ -1,{ROOT_N} +1,{N} @@"
    assert b"\r\n" in result.stdout_bytes  # the stale copy's CRLF lines, byte for byte


def test_a_tree_in_sync_exits_0(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    result = cli("verify-sync", vendor_copy.parent)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"paged_attn.py == {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr == "the mirror group is in sync\n"


def test_line_endings_only_are_reported_as_such(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shipped = (vendor_copy / SHIPPED).read_bytes()
    assert b"\r\n" not in shipped
    (vendor_copy / "paged_attn.py").write_bytes(shipped.replace(b"\n", b"\r\n"))
    result = cli("verify-sync", "--diff", vendor_copy)
    assert result.exit_code == 1
    assert result.stdout == (f"paged_attn.py ({N} lines, CRLF) != {SHIPPED} ({N} lines, LF) in line endings only; "
                             f"{SHIPS}\n")  # and no whole-file diff that only moves CRs


def test_json_for_machines(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", "--format", "json", "--diff", vendor_zip)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["in_sync"] is False
    (group,) = data["groups"]
    assert (group["shipped"], group["image_paths"], group["origin"]) == (SHIPPED, [IMAGE], "patch set")
    (copy,) = group["copies"]
    assert (copy["path"], copy["lines"], copy["line_endings"], copy["state"]) == ("paged_attn.py", ROOT_N, "CRLF", "drifted")
    assert copy["diff"].startswith(f"diff --git a/paged_attn.py b/{SHIPPED}\n")


def test_a_git_checkout_of_the_tree_is_read_without_its_git_folder(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    git = pytest.importorskip("git")
    checkout = vendor_copy.parent
    repo = git.Repo.init(checkout)
    repo.index.add([str(p.relative_to(checkout)) for p in checkout.rglob("*") if p.is_file() and ".git" not in p.parts])
    repo.index.commit("vendor drop", author=git.Actor("t", "t@localhost"), committer=git.Actor("t", "t@localhost"))
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "paged_attn.py")
    result = cli("verify-sync", checkout)
    # Exit 0 alone is also what "no mirror group found" gives: check the group was read.
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"paged_attn.py == {SHIPPED} ({N} lines); {SHIPS}\n"
    assert result.stderr == "the mirror group is in sync\n"


# -- extra groups from patcher.toml -------------------------------------------


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


# -- interface -----------------------------------------------------------------


def test_a_missing_input_is_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-sync", tmp_path / "nope.zip")
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_help_documents_exit_codes_and_configuration(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("verify-sync", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0 every copy is byte-identical" in text and "1 a copy drifted" in text
    assert "[[verify-sync.mirrors]]" in text and "patcher.toml" in text


def test_pre_commit_hook_runs_verify_sync(cli) -> None:  # type: ignore[no-untyped-def]
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "patcher-verify-sync"
    assert (hook["language"], hook["pass_filenames"]) == ("python", False)
    program, command = hook["entry"].split()
    assert program == "patcher" and command == "verify-sync" and hook["args"] == ["."]
    # pre-commit runs 'patcher verify-sync .' in the vendor repository: here, a scratch folder.
    assert cli(command, *hook["args"]).stderr.startswith("error: .: no Dockerfile")
