"""``inspect`` lists the lines the reader did not read (text and JSON); ``verify-sync`` says when its answer depends on one.

The vendor's own drop has none: its output is what it was before the
reader learnt to say so.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures_vendor import SHIPPED

IMAGE = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
SCRIPT = "qwen3_6_scripts/patch_ops.sh"


def with_line(tree: Path, before: str, line: str) -> int:
    """Insert ``line`` into patch_ops.sh before the line holding ``before``; return its line number."""
    script = tree / SCRIPT
    lines = script.read_text().splitlines()
    index = next(i for i, text in enumerate(lines) if before in text)
    lines.insert(index, line)
    script.write_text("\n".join(lines) + "\n")
    return index + 1


def test_verify_sync_names_the_unread_line_its_answer_depends_on(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    number = with_line(vendor_copy, "cp ./paged_attn.py", 'eval "$CMD"')
    result = cli("verify-sync", vendor_copy)
    assert result.exit_code == 1
    assert result.stdout.endswith(
        f"; the image ships {SHIPPED} -> {IMAGE}, but line {number} of {SCRIPT} (`eval \"$CMD\"`) was not read: "
        "it could change that\n")
    assert result.stderr.endswith("; which file the image holds for 1 group depends on lines the reader did not "
                                  "read (see 'patcher inspect')\n")
    (group,) = json.loads(cli("verify-sync", "--format", "json", vendor_copy).stdout)["groups"]
    assert group["unread"] == [{"file": SCRIPT, "line": number, "text": 'eval "$CMD"', "kind": "unread",
                                "reason": "evaluates $CMD, which the reader cannot work out"}]


def test_verify_sync_lists_several_lines_of_one_script_together(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    first = with_line(vendor_copy, "cp ./paged_attn.py", 'eval "$CMD"')
    second = with_line(vendor_copy, "rm -rf", f"sed -i 's/a/b/' {IMAGE}")
    result = cli("verify-sync", vendor_copy)
    assert (f"but lines {first} and {second} of {SCRIPT} (`eval \"$CMD\"`, `sed -i 's/a/b/' {IMAGE}`) were not read: "
            "they could change that\n") in result.stdout


def test_only_lines_that_could_change_the_shipped_copy_are_caveats(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    elsewhere = with_line(vendor_copy, "cp ./paged_attn.py", "sed -i 's/a/b/' /etc/hosts")
    result = cli("verify-sync", vendor_copy)
    assert ", but " not in result.stdout  # sed -i names /etc/hosts only
    make = with_line(vendor_copy, "python3 ./patch_scheduler.py", "make -C /opt/tools install")
    result = cli("verify-sync", vendor_copy)
    assert f", but line {make} of {SCRIPT} (`make -C /opt/tools install`) was not read" in result.stdout
    listed = cli("inspect", vendor_copy).stdout
    assert f"  {SCRIPT}:{elsewhere}  sed -i 's/a/b/' /etc/hosts" in listed
    assert "runs make, which the reader does not follow: it could change any file" in listed


def test_inspect_lists_unread_lines_with_their_numbers(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    number = with_line(vendor_copy, "cp ./paged_attn.py", 'eval "$CMD"')
    result = cli("inspect", vendor_copy)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    start = lines.index("Not read (1)")
    assert lines[start + 1:start + 3] == [f"  {SCRIPT}:{number}  eval \"$CMD\"",
                                          "        evaluates $CMD, which the reader cannot work out"]
    assert (f"        could be changed by what was not read: line {number} of {SCRIPT} (`eval \"$CMD\"`)"
            in lines)
    assert (f"warning: vllm/attention/ops/paged_attn.py: the image ships {SHIPPED}, but line {number} of {SCRIPT} "
            f"(`eval \"$CMD\"`) was not read: it could change that\n") in result.stderr
    assert cli("inspect", "--strict", vendor_copy).exit_code == 1


def test_inspect_json_lists_unread_lines(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    number = with_line(vendor_copy, "cp ./paged_attn.py", 'eval "$CMD"')
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    note = {"file": SCRIPT, "line": number, "text": 'eval "$CMD"', "kind": "unread",
            "reason": "evaluates $CMD, which the reader cannot work out", "stage": "stage 0", "could_change": None}
    assert data["unread"] == [note]
    (target,) = data["targets"]
    assert target["unread"] == [note]


def test_inspect_json_lists_failures_and_assumptions(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    with_line(vendor_copy, "cp ./paged_attn.py", "cp ./reasoning /tmp/")
    with_line(vendor_copy, "cp ./paged_attn.py", "cp -r ./reasoning /opt/parsers")
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    assert [n["text"] for n in data["fails"]] == ["cp ./reasoning /tmp/"]
    assert [n["text"] for n in data["assumed"]] == ["cp -r ./reasoning /opt/parsers"]
    assert data["unread"] == []


def test_inspect_shows_the_stages_of_a_multi_stage_build(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text(
        "FROM registry.example.invalid/base:1 AS scripts\nCOPY qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "FROM registry.example.invalid/tools:1 AS unused\nCOPY vllm /vllm\n"
        "FROM registry.example.invalid/base:1\nCOPY --from=scripts /workspace /workspace\n"
        "RUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n")
    result = cli("inspect", vendor_copy)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    for expected in ("     1  FROM registry.example.invalid/base:1 AS scripts (stage 0: used by the image)",
                     "     3  FROM registry.example.invalid/tools:1 AS unused (stage 1: not in the image)",
                     "     5  FROM registry.example.invalid/base:1 (stage 2: the image)",
                     "     6  COPY --from=scripts /workspace -> /workspace (10 files)",
                     f"  vllm/attention/ops/paged_attn.py <- {SHIPPED}"):
        assert expected in lines, expected
    stages = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)["stages"]
    assert [(s["name"], s["is_image"], s["in_image"], s["uses"]) for s in stages] == [
        ("scripts", False, True, []), ("unused", False, False, []), (None, True, True, [0])]
    assert not any(line.startswith("  vllm/__init__.py") for line in lines[lines.index("Shipped files (10)"):
                                                                          lines.index("Never shipped (16 files)")])


def test_target_picks_the_stage_for_inspect_and_verify_sync(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text(
        "FROM base AS runtime\nCOPY qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "RUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\nFROM base AS docs\nCOPY README* /docs/\n")
    assert "NOT SHIPPED" in cli("inspect", vendor_copy).stdout
    result = cli("inspect", "--target", "runtime", vendor_copy)
    assert f"  vllm/attention/ops/paged_attn.py <- {SHIPPED}" in result.stdout.splitlines()
    synced = cli("verify-sync", "--target", "runtime", vendor_copy)
    assert synced.exit_code == 1 and f"the image ships {SHIPPED} -> {IMAGE}\n" in synced.stdout
    refused = cli("inspect", "--target", "nope", vendor_copy)
    assert refused.exit_code == 2
    assert refused.stderr == ("error: Dockerfile: no build stage named 'nope' (named stages: runtime, docs) "
                              "(give --target one of the names after AS in the FROM lines)\n")


def test_the_vendor_drop_has_no_unread_lines(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("inspect", "--format", "json", vendor_zip).stdout)
    assert (data["unread"], data["fails"], data["assumed"]) == ([], [], [])
    text = cli("inspect", vendor_zip).stdout
    assert "Not read" not in text and "     1  FROM" not in text  # one stage: no FROM lines, as before
