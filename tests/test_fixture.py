"""The demo vendor fixture: the zip matches its tree, the tree has the vendor's
quirks, and the shipped paged_attn.py computes correct attention."""

from __future__ import annotations

import importlib.util
import io
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TREE = FIXTURES / "vendor" / "enginex-vllm-bi100-qwen36-main"
ZIP = FIXTURES / "enginex-vllm-bi100-qwen36-main.zip"
TOP = "enginex-vllm-bi100-qwen36-main/"
SHIPPED = TREE / "qwen3_6_scripts" / "paged_attn.py"


def _builder() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("build_demo_zip", FIXTURES / "build_demo_zip.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def archive() -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(ZIP.read_bytes()))


# -- the zip ------------------------------------------------------------


def test_committed_zip_is_a_fresh_build(tmp_path: Path) -> None:
    out = tmp_path / "fresh.zip"
    _builder().build_zip(TREE, out)
    assert out.read_bytes() == ZIP.read_bytes(), (
        "fixtures/enginex-vllm-bi100-qwen36-main.zip is stale: "
        "run 'python fixtures/build_demo_zip.py' and commit the zip")


def test_build_is_reproducible(tmp_path: Path) -> None:
    builder = _builder()
    builder.build_zip(TREE, tmp_path / "a.zip")
    builder.build_zip(TREE, tmp_path / "b.zip")
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()


def test_zip_holds_the_tree_byte_for_byte(archive: zipfile.ZipFile) -> None:
    files = {TOP + p.relative_to(TREE).as_posix(): p.read_bytes()
             for p in TREE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    members = {i.filename: archive.read(i) for i in archive.infolist() if not i.is_dir()}
    assert members == files
    assert all(name.startswith(TOP) for name in archive.namelist())


def test_zip_entries_are_normalised(archive: zipfile.ZipFile) -> None:
    infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {i.create_system for i in infos} == {3}
    dirs = {i.filename for i in infos if i.is_dir()}
    assert {TOP, TOP + "qwen3_6_scripts/", TOP + "vllm/attention/ops/"} <= dirs
    for info in infos:
        mode = info.external_attr >> 16
        if info.is_dir():
            assert mode == 0o40755, info.filename
        else:
            assert mode in (0o100644, 0o100755), info.filename
            assert info.compress_type == zipfile.ZIP_DEFLATED


# -- the vendor quirks --------------------------------------------------


def test_dockerfile_is_crlf_without_final_newline(archive: zipfile.ZipFile) -> None:
    data = archive.read(TOP + "Dockerfile")
    assert not data.endswith(b"\n")
    lines = data.split(b"\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert [line.split(b" ", 1)[0] for line in lines] == [b"FROM", b"RUN", b"WORKDIR", b"COPY", b"RUN"]
    assert b"py3.10" in lines[0]
    assert lines[3] == b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts"
    assert lines[4] == b"RUN cd ./qwen3_6_scripts && ./patch_ops.sh"


def test_patch_ops_is_executable_without_shebang(archive: zipfile.ZipFile) -> None:
    info = archive.getinfo(TOP + "qwen3_6_scripts/patch_ops.sh")
    assert (info.external_attr >> 16) == 0o100755
    assert (archive.getinfo(TOP + "launch_service").external_attr >> 16) == 0o100755
    assert (archive.getinfo(TOP + "qwen3_6_scripts/paged_attn.py").external_attr >> 16) == 0o100644
    text = archive.read(info).decode()
    assert not text.startswith("#!")
    assert "\r" not in text
    assert "set -e" not in text
    assert ("cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/"
            "vllm/attention/ops/paged_attn.py") in text.splitlines()


def test_root_paged_attn_is_a_stale_crlf_copy(archive: zipfile.ZipFile) -> None:
    root = archive.read(TOP + "paged_attn.py")
    shipped = archive.read(TOP + "qwen3_6_scripts/paged_attn.py")
    assert root != shipped
    assert root.count(b"\n") == root.count(b"\r\n") > 150
    assert b"\r" not in shipped
    assert b"if HAS_TRITON:\r\n    from vllm.attention.ops.prefix_prefill import context_attention_fwd" in root
    assert b"        context_attention_fwd(\r\n" in root
    assert b"\n        context_attention_fwd(" not in shipped.replace(b"# from", b"")


def test_text_oddities_survive(archive: zipfile.ZipFile) -> None:
    assert archive.read(TOP + "qwen3_6_scripts/chat_template.jinja").startswith(b"\xef\xbb\xbf")
    assert not archive.read(TOP + "vllm/version.py").endswith(b"\n")
    binary = archive.read(TOP + "vllm/_C.abi3.so")
    assert 4096 <= len(binary) <= 20480
    assert b"\x00" in binary and b"\r\n" in binary


# -- numerics of the shipped paged_attn.py ------------------------------


@pytest.fixture()
def vendor() -> tuple[types.ModuleType, Any]:
    pytest.importorskip("torch")
    from patcher.numerics.loader import load_paged_attn
    from patcher.numerics.stub_ops import StubOps

    ops = StubOps()
    module = load_paged_attn(SHIPPED.read_bytes(), ops, "vendor_paged_attn")
    return module, ops


def test_loader_leaves_sys_modules_as_it_was(vendor: tuple[types.ModuleType, Any]) -> None:
    module, ops = vendor
    assert "vllm" not in sys.modules and "vendor_paged_attn" not in sys.modules
    assert module.ops is ops
    assert module.PagedAttention._PYTORCH_DECODE_THRESHOLD == 32768


PREFIX_SHAPES = {
    # GQA 3, a context that is not a multiple of the block size, an empty
    # context, and several sequences in one batch.
    "gqa-ragged-batch": dict(context_lens=[5, 0, 37], query_lens=[3, 7, 1],
                             num_kv_heads=2, gqa_ratio=3, head_dim=16, block_size=4),
    # 300 new tokens > _BLOCKS_PER_TILE * block_size = 128: three causal tiles.
    "query-over-one-tile": dict(context_lens=[9], query_lens=[300],
                                num_kv_heads=1, gqa_ratio=2, head_dim=16, block_size=4),
    # 75 context blocks: three context tiles, the last one partial.
    "context-over-one-tile": dict(context_lens=[298, 3], query_lens=[4, 2],
                                  num_kv_heads=2, gqa_ratio=2, head_dim=16, block_size=4),
    "head-dim-128": dict(context_lens=[20, 33], query_lens=[6, 2],
                         num_kv_heads=2, gqa_ratio=4, head_dim=128, block_size=8),
    "no-context-at-all": dict(context_lens=[0, 0], query_lens=[1, 5],
                              num_kv_heads=4, gqa_ratio=1, head_dim=32, block_size=16),
}


@pytest.mark.parametrize("shape", PREFIX_SHAPES.values(), ids=PREFIX_SHAPES.keys())
def test_forward_prefix_matches_naive_attention(vendor: tuple[types.ModuleType, Any],
                                                shape: dict) -> None:
    import torch

    from patcher.numerics.cases import make_prefix_case

    module, ops = vendor
    case = make_prefix_case(**shape, seed=7)
    out = module.PagedAttention.forward_prefix(**case.fresh_kwargs())
    assert out.shape == case.kwargs["query"].shape and out.dtype == torch.float32
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)
    direct = module.PagedAttention._forward_prefix_pytorch(**case.pytorch_kwargs())
    assert torch.equal(direct, out)
    assert sum(ops.calls.values()) == 0  # no native kernel on the prefill path


def test_forward_prefix_half_precision(vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_prefix_case

    module, _ = vendor
    case = make_prefix_case([13, 40], [9, 3], num_kv_heads=2, gqa_ratio=2, head_dim=64,
                            block_size=8, dtype=torch.float16, seed=3)
    out = module.PagedAttention.forward_prefix(**case.fresh_kwargs())
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), case.reference(), rtol=0, atol=2e-3)


def test_forward_decode_runs_v1_and_matches_pytorch_path(
        vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case

    module, ops = vendor
    case = make_decode_case([1, 17, 64, 33], num_kv_heads=2, gqa_ratio=4, head_dim=32,
                            block_size=4, seed=11)
    out = module.PagedAttention.forward_decode(**case.fresh_kwargs())
    assert ops.calls == {"paged_attention_v1": 1}
    expected = module.PagedAttention._forward_decode_pytorch(**case.pytorch_kwargs())
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-5)
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)


def test_forward_decode_never_takes_v2(vendor: tuple[types.ModuleType, Any]) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case
    from patcher.numerics.loader import load_paged_attn
    from patcher.numerics.stub_ops import StubOps

    ops = StubOps(v2_available=True)
    module = load_paged_attn(SHIPPED.read_bytes(), ops, "vendor_paged_attn_v2")
    # A padded max_seq_len past 8192 makes upstream's heuristic pick V2;
    # the vendor's 'use_v1 = True' overrides it.
    case = make_decode_case([30, 12], block_size=16, seed=5, max_seq_len=9000)
    out = module.PagedAttention.forward_decode(**case.fresh_kwargs())
    assert ops.calls == {"paged_attention_v1": 1}
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)


def test_long_decode_takes_the_pytorch_path(vendor: tuple[types.ModuleType, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from patcher.numerics.cases import make_decode_case

    module, ops = vendor
    monkeypatch.setattr(module.PagedAttention, "_PYTORCH_DECODE_THRESHOLD", 32)
    long = make_decode_case([40, 10], block_size=4, seed=2)
    out = module.PagedAttention.forward_decode(**long.kwargs)
    assert ops.calls["paged_attention_v1"] == 0
    torch.testing.assert_close(out, long.reference(), rtol=0, atol=1e-5)

    # At the threshold itself V1 still runs; the padded bound does not count.
    short = make_decode_case([32, 10], block_size=4, seed=2, max_seq_len=64)
    module.PagedAttention.forward_decode(**short.kwargs)
    assert ops.calls["paged_attention_v1"] == 1


def test_stub_v2_matches_v1() -> None:
    torch = pytest.importorskip("torch")
    from patcher.numerics.cases import make_decode_case
    from patcher.numerics.stub_ops import StubOps

    # Spans three 512-token partitions so the reduction is exercised.
    case = make_decode_case([1100, 7, 513], num_kv_heads=1, gqa_ratio=2, head_dim=16,
                            block_size=16, seed=9)
    k = case.kwargs
    query = k["query"]
    ops = StubOps(v2_available=True)
    parts = -(-k["max_seq_len"] // 512)
    out = torch.empty_like(query)
    exp_sums = torch.empty(query.shape[0], query.shape[1], parts)
    max_logits = torch.empty_like(exp_sums)
    tmp = torch.empty(*query.shape[:2], parts, query.shape[2])
    ops.paged_attention_v2(out, exp_sums, max_logits, tmp, query, k["key_cache"],
                           k["value_cache"], k["num_kv_heads"], k["scale"], k["block_tables"],
                           k["seq_lens"], case.block_size, k["max_seq_len"], None,
                           "auto", 1.0, 1.0, 0, 0, 0, 64, 0)
    torch.testing.assert_close(out, case.reference(), rtol=0, atol=1e-5)
    with pytest.raises(NotImplementedError):
        StubOps().paged_attention_v2(out, exp_sums, max_logits, tmp)
