"""Reading vendor trees: the bad-zip corpus is refused, good trees read back."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import struct
import sys
import zipfile
from collections.abc import Callable, Mapping, Set
from pathlib import Path
from types import ModuleType

import pytest

from patcher.archive import DirSource, Limits, SourceFile, ZipSource, open_source
from patcher.errors import BadArchive, PatcherError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _load_corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_bad_archives", FIXTURES / "make_bad_archives.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
CASES = {case.name: case for case in corpus.CASES}

DOCKERFILE = b"FROM vendor/base:1\r\nRUN mkdir /workspace\r\nCOPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\r\n"
PATCH_OPS = b"cp ./paged_attn.py /usr/local/x/paged_attn.py\r\n"
PAGED = b"import torch\n\n_PARTITION_SIZE = 512\n"


def make_zip(
    path: Path, members: Mapping[str, bytes | None], *, executable: Set[str] = frozenset()
) -> Path:
    """Write a zip; a None value is a folder entry."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 5, 1, 12, 0, 0))
            info.create_system = 3
            if data is None:
                info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
                archive.writestr(info, b"")
            else:
                mode = 0o755 if name in executable else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
    return path


def vendor_members(top: str = "enginex-demo-main/") -> dict[str, bytes | None]:
    return {
        top: None,
        top + "Dockerfile": DOCKERFILE,
        top + "paged_attn.py": b"# stale root copy\n",
        top + "qwen3_6_scripts/": None,
        top + "qwen3_6_scripts/patch_ops.sh": PATCH_OPS,
        top + "qwen3_6_scripts/paged_attn.py": PAGED,
        top + "vllm/attention/ops/paged_attn.py": b"# upstream\n",
    }


@pytest.fixture
def vendor_zip(tmp_path: Path) -> Path:
    return make_zip(
        tmp_path / "enginex-demo-main.zip",
        vendor_members(),
        executable={"enginex-demo-main/qwen3_6_scripts/patch_ops.sh"},
    )


# --- the corpus of bad zips --------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_zip_is_refused_with_its_own_message(name: str) -> None:
    case = CASES[name]
    path = FIXTURES / "bad" / name
    with pytest.raises(BadArchive) as caught:
        with open_source(path) as tree:
            assert case.read is not None, "opening should have failed"
            tree.read(case.read)
    message = str(caught.value)
    assert case.expect in message
    assert message.startswith(f"{name}: ")
    assert "\n" not in message


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.read))
def test_member_errors_also_stop_streaming_reads(name: str) -> None:
    case = CASES[name]
    with open_source(FIXTURES / "bad" / name) as tree:
        assert tree.exists(case.read)
        with pytest.raises(BadArchive, match="bytes|CRC|corrupt"):
            with tree.open(case.read) as stream:
                while stream.read(4096):
                    pass


def test_committed_corpus_is_what_the_script_builds() -> None:
    built = corpus.build_all()
    committed = {p.name: p.read_bytes() for p in (FIXTURES / "bad").iterdir()}
    assert committed == built


def test_corpus_script_writes_into_a_given_folder(tmp_path: Path) -> None:
    assert corpus.main([str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(CASES)


def test_lying_size_is_caught_before_the_data_is_all_inflated() -> None:
    # The member inflates to 2 MiB; reading must stop near its declared 1000.
    case = CASES["bomb_lying_size.zip"]
    with open_source(FIXTURES / "bad" / case.name) as tree:
        stream = tree.open(case.read)
        got = bytearray()
        with pytest.raises(BadArchive, match="possible zip bomb"):
            while True:
                block = stream.read(100)
                if not block:
                    break
                got += block
        assert len(got) <= 1000


# --- limits -------------------------------------------------------------------


def test_too_many_members_is_refused(vendor_zip: Path) -> None:
    with pytest.raises(BadArchive, match="declares 7 members, more than the limit of 3"):
        with open_source(vendor_zip, Limits(max_members=3)):
            pass


def test_too_much_declared_data_is_refused(vendor_zip: Path) -> None:
    with pytest.raises(BadArchive, match="more than 100 bytes in all: possible zip bomb"):
        with open_source(vendor_zip, Limits(max_total_size=100)):
            pass


def test_small_members_may_compress_very_well(tmp_path: Path) -> None:
    members = vendor_members("t/")
    members["t/blank.txt"] = b"\n" * (512 << 10)  # 512 KiB, ratio ~500:1
    with open_source(make_zip(tmp_path / "t.zip", members)) as tree:
        assert tree.read("blank.txt") == b"\n" * (512 << 10)


def test_large_vendor_sized_zip_passes_default_limits(tmp_path: Path) -> None:
    # About the real zip's shape: 1,400 members and a 40 MB incompressible
    # wheel. Stored, so the test spends its time reading, not compressing.
    path = tmp_path / "big.zip"
    wheel = os.urandom(40 << 20)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("big/Dockerfile", DOCKERFILE)
        for i in range(1400):
            archive.writestr(f"big/vllm/m{i:04}.py", f"x = {i}\n" * 200, zipfile.ZIP_DEFLATED)
        archive.writestr("big/wheels/engine.whl", wheel)
    with open_source(path) as tree:
        assert len(tree.files()) == 1402
        digest = hashlib.sha256()
        with tree.open("wheels/engine.whl") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        assert digest.hexdigest() == hashlib.sha256(wheel).hexdigest()


# --- a valid zip --------------------------------------------------------------


def test_valid_zip_lists_files_relative_to_the_context(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        assert isinstance(tree, ZipSource)
        assert tree.label == "enginex-demo-main.zip"
        assert tree.prefix == "enginex-demo-main/"
        assert tree.top == "enginex-demo-main/"
        assert list(tree.files()) == [
            SourceFile("Dockerfile", len(DOCKERFILE), False),
            SourceFile("paged_attn.py", 18, False),
            SourceFile("qwen3_6_scripts/paged_attn.py", len(PAGED), False),
            SourceFile("qwen3_6_scripts/patch_ops.sh", len(PATCH_OPS), True),
            SourceFile("vllm/attention/ops/paged_attn.py", 11, False),
        ]


def test_valid_zip_reads_exact_bytes(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        assert tree.read("Dockerfile") == DOCKERFILE  # CRLF kept
        with tree.open("qwen3_6_scripts/paged_attn.py") as stream:
            assert stream.read(6) == b"import"
            assert stream.read() == PAGED[6:]
        assert tree.exists("qwen3_6_scripts/patch_ops.sh")
        assert not tree.exists("qwen3_6_scripts")  # folders are not files
        assert not tree.exists("enginex-demo-main/Dockerfile")


def test_unknown_paths_raise_key_error(vendor_zip: Path) -> None:
    with open_source(vendor_zip) as tree:
        for path in ("missing.py", "../enginex-demo-main/Dockerfile", "qwen3_6_scripts"):
            with pytest.raises(KeyError):
                tree.read(path)


def test_sha256_is_of_the_zip_file_which_is_left_untouched(vendor_zip: Path) -> None:
    before = vendor_zip.read_bytes()
    mtime = vendor_zip.stat().st_mtime_ns
    with open_source(vendor_zip) as tree:
        for item in tree.files():
            tree.read(item.path)
        assert tree.sha256() == hashlib.sha256(before).hexdigest()
    assert vendor_zip.read_bytes() == before
    assert vendor_zip.stat().st_mtime_ns == mtime


def test_zip_without_folder_entries_works(tmp_path: Path) -> None:
    members = {k: v for k, v in vendor_members().items() if v is not None}
    with open_source(make_zip(tmp_path / "z.zip", members)) as tree:
        assert tree.exists("qwen3_6_scripts/paged_attn.py")


def test_dockerfile_at_the_zip_root_gives_an_empty_prefix(tmp_path: Path) -> None:
    members = {"Dockerfile": DOCKERFILE, "qwen3_6_scripts/paged_attn.py": PAGED}
    with open_source(make_zip(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert (tree.prefix, tree.top) == ("", "")
        assert [f.path for f in tree.files()] == ["Dockerfile", "qwen3_6_scripts/paged_attn.py"]


def test_the_shallowest_dockerfile_is_the_context(tmp_path: Path) -> None:
    members = vendor_members("t/")
    members["t/vllm/docker/Dockerfile"] = b"FROM other\n"
    with open_source(make_zip(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert tree.prefix == "t/"
        assert tree.exists("vllm/docker/Dockerfile")


def test_context_below_the_top_folder(tmp_path: Path) -> None:
    members = {"t/": None, "t/ctx/": None, "t/ctx/Dockerfile": DOCKERFILE, "t/ctx/a.py": b"a\n"}
    with open_source(make_zip(tmp_path / "z.zip", members)) as tree:
        assert isinstance(tree, ZipSource)
        assert (tree.prefix, tree.top) == ("t/ctx/", "t/")
        assert [f.path for f in tree.files()] == ["Dockerfile", "a.py"]


def test_missing_input_is_reported(tmp_path: Path) -> None:
    with pytest.raises(BadArchive, match="no such file or folder"):
        with open_source(tmp_path / "nope.zip"):
            pass


# --- folders -----------------------------------------------------------------


def make_tree(root: Path) -> Path:
    ctx = root / "enginex-demo-main"
    for name, data in vendor_members("").items():
        if name and data is not None:
            (ctx / name).parent.mkdir(parents=True, exist_ok=True)
            (ctx / name).write_bytes(data)
    (ctx / "qwen3_6_scripts/patch_ops.sh").chmod(0o755)
    return ctx


def test_folder_reads_like_the_zip(tmp_path: Path, vendor_zip: Path) -> None:
    ctx = make_tree(tmp_path / "tree")
    (ctx / ".git").mkdir()
    (ctx / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    with open_source(vendor_zip) as zipped, open_source(ctx) as folder:
        assert isinstance(folder, DirSource)
        assert folder.files() == zipped.files()
        for item in folder.files():
            assert folder.read(item.path) == zipped.read(item.path)
        assert folder.sha256() is None
        assert folder.label == str(ctx)


def test_folder_above_the_context_finds_it(tmp_path: Path) -> None:
    make_tree(tmp_path / "tree")
    (tmp_path / "tree" / "notes.txt").write_text("beside the context\n")
    with open_source(tmp_path / "tree") as tree:
        assert isinstance(tree, DirSource)
        assert tree.root == tmp_path / "tree" / "enginex-demo-main"
        assert not tree.exists("notes.txt")


def test_folder_symlink_inside_the_tree_reads_as_a_file(tmp_path: Path) -> None:
    ctx = make_tree(tmp_path)
    (ctx / "link.sh").symlink_to("qwen3_6_scripts/patch_ops.sh")
    with open_source(ctx) as tree:
        assert SourceFile("link.sh", len(PATCH_OPS), True) in tree.files()
        assert tree.read("link.sh") == PATCH_OPS


UNSAFE_IN_FOLDER: dict[str, tuple[Callable[[Path], object], str]] = {
    "symlink-out": (lambda c: (c / "evil").symlink_to("/etc/passwd"), "pointing outside the tree"),
    "dangling": (lambda c: (c / "dangling").symlink_to(c / "nowhere"), "broken symbolic link"),
    "dir-link": (lambda c: (c / "loop").symlink_to(c / "vllm"), "symbolic link to a folder"),
    "fifo": (lambda c: os.mkfifo(c / "pipe"), "not a regular file or folder"),
    "case": (lambda c: (c / "DOCKERFILE").write_bytes(b"x"), "differ only in letter case"),
    "backslash": (lambda c: (c / "a\\b").write_bytes(b"x"), "has a backslash"),
    "not-utf8": (
        lambda c: os.close(os.open(os.fsencode(c) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY)),
        "is not valid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(UNSAFE_IN_FOLDER))
def test_folder_refuses_unsafe_entries(tmp_path: Path, case: str) -> None:
    setup, message = UNSAFE_IN_FOLDER[case]
    ctx = make_tree(tmp_path)
    with open_source(ctx):
        pass  # fine before the change
    setup(ctx)
    with pytest.raises(BadArchive, match=message):
        with open_source(ctx):
            pass


def test_folder_without_dockerfile_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(BadArchive, match="no Dockerfile found"):
        with open_source(tmp_path):
            pass


def test_folder_with_two_contexts_is_refused(tmp_path: Path) -> None:
    make_tree(tmp_path / "one")
    make_tree(tmp_path / "two")
    with pytest.raises(BadArchive, match="several candidate build contexts"):
        with open_source(tmp_path):
            pass


# --- errors -------------------------------------------------------------------


def test_error_text_is_one_line_with_where_and_hint() -> None:
    error = PatcherError("bad\nthing", where="x.zip", hint="do this")
    assert str(error) == "x.zip: bad thing (do this)"
    assert error.exit_code == 2
    assert isinstance(BadArchive("m"), PatcherError)


def test_local_header_name_that_is_not_utf8_is_corrupt(tmp_path: Path) -> None:
    # The central directory says UTF-8 and holds a valid name; the local header does not.
    path = make_zip(tmp_path / "v.zip", {"top/Dockerfile": DOCKERFILE, "top/\u00e9.py": PAGED})
    data = path.read_bytes()
    at = data.index("top/\u00e9.py".encode())  # the local header comes first
    path.write_bytes(data[: at + 4] + b"\xff\xfe" + data[at + 6 :])
    with ZipSource(path) as source, pytest.raises(BadArchive, match="'top/\u00e9.py' is corrupt"):
        source.read("\u00e9.py")


def test_zip64_locator_pointing_at_a_short_record_is_not_a_crash(tmp_path: Path) -> None:
    # The locator points into the comment, where a zip64 record's magic starts
    # but fewer bytes than a record follow.
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0, 0, 6)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, 20 + len(eocd), 1)
    path = tmp_path / "short.zip"
    path.write_bytes(locator + eocd + b"PK\x06\x06xx")
    with pytest.raises(BadArchive, match="truncated or corrupt"):
        ZipSource(path)
