"""What a tree rule is given (``BuildContext``): the shipped files as they will be written, and which of them hold a word."""

from __future__ import annotations

from patcher.checks.base import BuildContext


def test_a_build_context_reads_its_files_as_they_will_be_written() -> None:
    files = {"qwen3_6_scripts/patch_ops.sh": b"\xef\xbb\xbfset -e\r\ncp \xff ./x\n",
             "qwen3_6_scripts/paged_attn.py": b"x = 1\n"}
    build = BuildContext(plan=None, targets=(), python=("qwen3_6_scripts/paged_attn.py", "qwen3_6_scripts/other.py"),
                         reader=files.__getitem__, words={"paged_attention_v2": ["qwen3_6_scripts/paged_attn.py"]})
    assert build.read("qwen3_6_scripts/patch_ops.sh").startswith(b"\xef\xbb\xbf")
    assert build.read("Dockerfile.missing") == b""
    assert build.text("qwen3_6_scripts/patch_ops.sh") == "set -e\r\ncp \ufffd ./x\n"
    assert build.text("missing.sh") == ""
    source = build.source("qwen3_6_scripts/paged_attn.py")
    assert source is not None and (source.path, source.data) == ("qwen3_6_scripts/paged_attn.py", b"x = 1\n")
    assert build.source("qwen3_6_scripts/other.py") is None
    assert build.mentioning("paged_attention_v2") == ["qwen3_6_scripts/paged_attn.py"]
    assert build.mentioning("HAS_TRITON") == ("qwen3_6_scripts/paged_attn.py", "qwen3_6_scripts/other.py")
    assert BuildContext(None, (), (), files.__getitem__).words == {}
