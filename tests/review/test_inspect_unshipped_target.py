"""A patch target that nothing the image ships lands at is reported, warned about, and fails --strict."""

from __future__ import annotations


def test_a_target_nothing_ships_is_reported(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    script = vendor_copy / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"cp ./paged_attn.py" not in line))
    result = cli("inspect", vendor_copy)
    assert result.exit_code == 0
    assert "  vllm/attention/ops/paged_attn.py: NOT SHIPPED: nothing the image ships lands at" in result.stdout
    assert result.stderr.startswith("warning: vllm/attention/ops/paged_attn.py: nothing the image ships")
    assert cli("inspect", "--strict", vendor_copy).exit_code == 1
