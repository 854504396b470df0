"""A tar or tar.gz context is read in place with the zip reader's rules: hostile ones are refused before use.

Each hostile tar is built here, byte by byte (tests/fixtures_tars.py), in the
shape an attacker or a hurried engineer would produce.
"""

from __future__ import annotations

import io
import os
import random
import tarfile
import tempfile
import threading
import unicodedata
import zlib
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.archive.limits import Limits
from patcher.archive.tar_source import TarSource
from patcher.errors import BadArchive
from tests.fixtures_archives import small_zip
from tests.fixtures_tars import (BLOCK, GNU, DOCKERFILE, SCRIPT, context, end, folder, gz, header, member, pax,
                                 padded, tar_of)


def _write(tmp_path: Path, data: bytes, name: str = "ctx.tar") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refused(path: Path, limits: Limits = Limits()) -> BadArchive:
    with pytest.raises(BadArchive) as caught:
        with open_source(path, limits):
            pass
    assert caught.value.where == path.name
    return caught.value


# --- what is read, and how ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, compress", [("ctx.tar", False), ("ctx.tar.gz", True)])
def test_the_context_is_read_with_its_bytes_and_executable_bits(tmp_path: Path, name: str, compress: bool) -> None:
    data = tar_of(member("scripts/tool.py", b"LEVEL = 1\r\n"))
    with open_source(_write(tmp_path, gz(data) if compress else data, name)) as tree:
        assert [(f.path, f.size, f.executable) for f in tree.files()] == [
            ("Dockerfile", len(DOCKERFILE), False), ("scripts/run.sh", len(SCRIPT), True),
            ("scripts/tool.py", 11, False)]
        assert tree.read("scripts/tool.py") == b"LEVEL = 1\r\n" and tree.read("Dockerfile") == DOCKERFILE
        assert isinstance(tree, TarSource) and tree.prefix == ""


def test_the_format_is_told_by_content_not_by_name(tmp_path: Path) -> None:
    tar = _write(tmp_path, gz(tar_of()), "drop.zip")
    with open_source(tar) as tree:
        assert isinstance(tree, TarSource)
    zipped = small_zip(tmp_path / "ctx.tar.gz")
    with open_source(zipped) as tree:
        assert not isinstance(tree, TarSource) and tree.exists("Dockerfile")


def test_a_top_folder_holding_the_context_is_its_prefix(tmp_path: Path) -> None:
    data = end(folder("vendor-demo") + b"".join(context("vendor-demo/")))
    with open_source(_write(tmp_path, data)) as tree:
        assert isinstance(tree, TarSource) and tree.prefix == "vendor-demo/"
        assert [f.path for f in tree.files()] == ["Dockerfile", "scripts/run.sh"]


def test_names_as_tar_dash_c_writes_them_lose_their_leading_dot_slash(tmp_path: Path) -> None:
    data = end(folder(".") + member("./Dockerfile", DOCKERFILE) + folder("./scripts")
               + member("./scripts/run.sh", SCRIPT, mode=0o755))
    with open_source(_write(tmp_path, data)) as tree:
        assert [f.path for f in tree.files()] == ["Dockerfile", "scripts/run.sh"]


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_long_and_accented_names_are_read_in_every_format_tarfile_writes(tmp_path: Path, fmt: int) -> None:
    deep = "scripts/" + "/".join(["sous-dossier"] * 9) + "/module.py"  # 125 characters: past the name field
    accented = "scripts/donn\u00e9es.py" if fmt != tarfile.USTAR_FORMAT else "scripts/plain.py"
    path = tmp_path / "ctx.tgz"
    with tarfile.open(path, "w:gz", format=fmt, encoding="utf-8") as archive:
        for name, data in (("Dockerfile", DOCKERFILE), (deep, b"A = 1\n"), (accented, b"B = 2\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    with open_source(path) as tree:
        assert tree.read(deep) == b"A = 1\n" and tree.read(accented) == b"B = 2\n"


def test_a_git_archive_global_header_is_read_past(tmp_path: Path) -> None:
    data = end(pax({"comment": b"0123456789abcdef0123456789abcdef01234567"}, kind=b"g") + b"".join(context()))
    with open_source(_write(tmp_path, gz(data), "ctx.tar.gz")) as tree:
        assert tree.read("scripts/run.sh") == SCRIPT


def test_a_pax_header_gives_the_next_member_its_name_and_size(tmp_path: Path) -> None:
    body = b"X = 1\n" * 3
    data = tar_of(pax({"path": "scripts/r\u00e9el.py".encode(), "size": str(len(body)).encode()}),
                  header("scripts/short", size=0) + padded(body))
    with open_source(_write(tmp_path, data)) as tree:
        assert tree.read("scripts/r\u00e9el.py") == body and not tree.exists("scripts/short")


def test_a_gzip_stream_in_several_members_is_one_tar(tmp_path: Path) -> None:
    data = tar_of(member("scripts/tool.py", b"LEVEL = 1\n" * 100))
    joined = gz(data[:1536]) + gz(data[1536:])  # as 'cat a.gz b.gz' or a parallel gzip writes
    with open_source(_write(tmp_path, joined, "ctx.tar.gz")) as tree:
        assert tree.read("scripts/tool.py") == b"LEVEL = 1\n" * 100


def test_members_read_on_two_threads_at_once_keep_their_own_bytes(tmp_path: Path) -> None:
    bodies = {f"scripts/m{n}.py": random.Random(n).randbytes(300_000 + n) for n in range(6)}
    data = tar_of(*(member(name, body) for name, body in bodies.items()))
    with open_source(_write(tmp_path, gz(data), "ctx.tar.gz")) as tree:
        got: dict[str, bytes] = {}

        def read(names: list[str]) -> None:
            for name in names:
                with tree.open(name) as stream:
                    got[name] = b"".join(iter(lambda: stream.read(4096), b""))

        workers = [threading.Thread(target=read, args=(list(bodies)[i::2],)) for i in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert got == bodies


def test_the_sha256_is_of_the_file_as_given(tmp_path: Path) -> None:
    import hashlib

    path = _write(tmp_path, gz(tar_of()), "ctx.tar.gz")
    with open_source(path) as tree:
        assert tree.sha256() == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_tar_gz_is_inflated_into_no_file_anyone_can_see(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    path = _write(tmp_path, gz(tar_of(member("scripts/big.py", b"# x\n" * 100_000))), "ctx.tar.gz")
    with open_source(path) as tree:
        assert os.listdir(scratch) == [] and tree.read("scripts/big.py") == b"# x\n" * 100_000
    assert os.listdir(scratch) == []


# --- what is refused: members ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind, what", [
    (b"2", "is a symbolic link; links are not allowed"),
    (b"1", "is a hard link; links are not allowed"),
    (b"3", "is a character device, not a regular file or folder"),
    (b"4", "is a block device, not a regular file or folder"),
    (b"6", "is a fifo, not a regular file or folder"),
    (b"S", "is a sparse file, which is not supported"),
])
def test_links_devices_fifos_and_sparse_files_are_refused(tmp_path: Path, kind: bytes, what: str) -> None:
    data = tar_of(header("scripts/tool.py", kind=kind, link=b"/etc/passwd"))
    error = _refused(_write(tmp_path, data))
    assert error.message == f"member 'scripts/tool.py' {what}"


def test_a_link_is_refused_with_how_to_write_the_tar_without_it(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(header("scripts/tool.py", kind=b"2", link=b"../../etc/shadow"))))
    assert error.hint is not None and "--hard-dereference" in error.hint


def test_a_member_of_an_unknown_type_is_refused_with_the_type(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(header("scripts/label", kind=b"V"))))
    assert error.message == "member 'scripts/label' is of unknown tar type 'V', not a regular file or folder"


@pytest.mark.parametrize("name, problem", [
    ("/etc/cron.d/x", "has an absolute path"),
    ("../outside.py", "escapes the tree with a '..' component"),
    ("scripts/../../outside.py", "escapes the tree with a '..' component"),
    ("scripts//run2.sh", "has an empty or '.' path component"),
    ("scripts/./run2.sh", "has an empty or '.' path component"),
    ("scripts\\..\\run2.sh", "has a backslash in its name"),
    ("scripts/\x1b[2Jrun.sh", "has a control character in its name"),
    ("C:/x.py", "has a drive letter"),
])
def test_names_that_could_escape_or_mislead_are_refused(tmp_path: Path, name: str, problem: str) -> None:
    error = _refused(_write(tmp_path, tar_of(member(name, b"x"))))
    assert error.message.endswith(problem) and "\x1b" not in str(error)


def test_a_pax_path_that_escapes_is_refused_like_a_header_name(tmp_path: Path) -> None:
    data = tar_of(pax({"path": b"../../root/.ssh/authorized_keys"}), member("scripts/innocent.py", b"key"))
    assert _refused(_write(tmp_path, data)).message == \
        "member '../../root/.ssh/authorized_keys' escapes the tree with a '..' component"


def test_a_name_that_is_not_utf8_is_refused_escaped(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(member(b"scripts/caf\xe9.py", b"x"))))
    assert error.message == "member name 'scripts/caf\\xe9.py' is not valid UTF-8"


def test_a_member_listed_twice_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(member("scripts/run.sh", b"rm -rf /\n"))))
    assert error.message == "member 'scripts/run.sh' appears twice"


def test_names_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(member("scripts/RUN.sh", b"x"))))
    assert "'scripts/RUN.sh'" in error.message and "'scripts/run.sh'" in error.message


def test_one_name_in_two_unicode_normalisations_is_refused(tmp_path: Path) -> None:
    nfc, nfd = "scripts/caf\u00e9.py", unicodedata.normalize("NFD", "scripts/caf\u00e9.py")
    error = _refused(_write(tmp_path, tar_of(member(nfc, b"a"), member(nfd, b"b"))))
    assert error.message.startswith("members ")


def test_a_file_that_is_also_a_folder_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(member("scripts/run.sh/inner.py", b"x"))))
    assert error.message == "member 'scripts/run.sh' is both a file and a folder"


def test_a_folder_entry_holding_data_is_refused(tmp_path: Path) -> None:
    data = tar_of(header("data/", kind=b"5", size=BLOCK) + bytes(BLOCK))
    assert _refused(_write(tmp_path, data)).message == "folder entry 'data/' holds data"


@pytest.mark.parametrize("kind", [b"0", b"7"])
def test_a_regular_file_whose_name_ends_with_a_slash_is_refused(tmp_path: Path, kind: bytes) -> None:
    # Only a type NUL (old V7) entry is a folder by its trailing '/', as tarfile reads it; a '0' or '7' says file.
    error = _refused(_write(tmp_path, tar_of(member("scripts/extra/", b"x", kind=kind))))
    assert error.message == "member 'scripts/extra/' is a file whose name ends with '/'"


def test_a_member_beside_the_context_is_refused(tmp_path: Path) -> None:
    data = end(b"".join(context("vendor-demo/")) + member("stray.py", b"x"))
    error = _refused(_write(tmp_path, data))
    assert error.message == ("member 'stray.py' lies outside the build context 'vendor-demo/'"
                             " (the folder holding the Dockerfile)")


def test_a_tar_without_a_dockerfile_is_refused(tmp_path: Path) -> None:
    data = end(member("scripts/run.sh", SCRIPT))
    assert _refused(_write(tmp_path, data)).message == "no Dockerfile found"


# --- what is refused: headers, structure -------------------------------------------------------------------


def test_a_header_with_a_wrong_checksum_is_refused_as_corrupt(tmp_path: Path) -> None:
    data = tar_of(header("scripts/tool.py", checksum=1234))
    error = _refused(_write(tmp_path, data))
    assert error.message == "the header at byte 2560 fails its checksum (the tar is corrupt)"


def test_a_size_field_that_is_no_number_is_refused(tmp_path: Path) -> None:
    data = tar_of(header("scripts/tool.py", size_field=b"12x45678901\0"))
    assert _refused(_write(tmp_path, data)).message == "the header at byte 2560 holds a number that is not one"


def test_a_negative_base256_size_is_refused(tmp_path: Path) -> None:
    data = tar_of(header("scripts/tool.py", size_field=b"\xff" * 12))
    assert _refused(_write(tmp_path, data)).message == "the header at byte 2560 declares a negative size"


def test_a_member_cut_short_is_refused_as_truncated(tmp_path: Path) -> None:
    whole = tar_of(member("scripts/tool.py", b"x" * 5000), ended=False)
    error = _refused(_write(tmp_path, whole[:-2000]))
    assert error.message == "member 'scripts/tool.py' declares 5000 bytes but the tar ends 3120 bytes later (truncated)"


def test_a_tar_without_its_end_marker_is_refused_as_truncated(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of(ended=False)))
    assert error.message == "the tar ends without its end-of-archive marker (truncated)"


def test_two_tars_joined_are_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of() + tar_of()))
    assert error.message == "data follows the tar's end-of-archive marker (two archives joined?)"


def test_megabytes_of_zeros_after_the_end_are_not_padding(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, tar_of() + bytes(2 << 20)))
    assert error.message == "more than 1048576 bytes follow the tar's end-of-archive marker"


@pytest.mark.parametrize("records", [
    b"99 path=scripts/x.py\n",  # a length past the header's end
    b"5 path=scripts/x.py\n",  # a length too short to hold the key
    b"abc path=x\n",  # no length at all
    b"12 pathx.py\n",  # no '='
])
def test_a_malformed_pax_record_is_refused(tmp_path: Path, records: bytes) -> None:
    error = _refused(_write(tmp_path, tar_of(pax(records), member("scripts/tool.py", b"x"))))
    assert error.message == "the pax header at byte 2560 is malformed"


def test_a_pax_size_that_is_no_number_is_refused(tmp_path: Path) -> None:
    data = tar_of(pax({"size": b"-5"}), member("scripts/tool.py", b"x"))
    assert _refused(_write(tmp_path, data)).message == \
        "the pax header at byte 2560 gives a size that is not a number"


def test_a_pax_sparse_file_is_refused(tmp_path: Path) -> None:
    data = tar_of(pax({"GNU.sparse.major": b"1", "GNU.sparse.minor": b"0"}), member("scripts/tool.py", b"x"))
    assert _refused(_write(tmp_path, data)).message == \
        "the member after byte 2560 is a sparse file, which is not supported"


def test_a_global_header_naming_every_member_is_refused(tmp_path: Path) -> None:
    data = end(pax({"path": b"Dockerfile"}, kind=b"g") + b"".join(context()))
    assert _refused(_write(tmp_path, data)).message == \
        "the global pax header at byte 0 sets a name or size for every member"


def test_an_extended_header_of_megabytes_is_refused_before_it_is_read(tmp_path: Path) -> None:
    data = tar_of(header("././@LongLink", kind=b"L", size=64 << 20, magic=GNU))
    error = _refused(_write(tmp_path, data))
    assert error.message == "the extended header at byte 2560 declares 67108864 bytes (more than 1048576)"


def test_a_chain_of_extended_headers_is_refused(tmp_path: Path) -> None:
    data = tar_of(*(pax({"comment": b"again"}) for _ in range(5)), member("scripts/tool.py", b"x"))
    assert _refused(_write(tmp_path, data)).message == "more than 4 extended headers in a row at byte 6656"


# --- limits ----------------------------------------------------------------------------------------------


def test_more_members_than_the_limit_are_refused(tmp_path: Path) -> None:
    data = tar_of(*(member(f"scripts/m{n}.py", b"") for n in range(20)))
    error = _refused(_write(tmp_path, data), Limits(max_members=10))
    assert error.message == "the tar holds more than 10 members" and "--max-members" in (error.hint or "")


def test_a_declared_size_past_the_limit_is_refused_without_reading(tmp_path: Path) -> None:
    # Base-256 size (GNU): 10 TB declared, nothing behind it.
    data = tar_of(header("scripts/huge.bin", size_field=b"\x80" + (10 ** 13).to_bytes(11, "big")))
    error = _refused(_write(tmp_path, data))
    assert error.message == "members declare more than 1073741824 bytes in all: possible tar bomb"
    assert error.hint == "if the archive is trusted, raise the limit with --max-size"  # the option that raises it


def test_a_gzip_bomb_is_stopped_by_the_expansion_limit(tmp_path: Path) -> None:
    bomb = gz(tar_of(member("scripts/zeros.bin", bytes(256 << 20))), level=9)  # 256 MiB of zeros, 250 KB packed
    error = _refused(_write(tmp_path, bomb, "ctx.tar.gz"))
    assert error.message.startswith("the gzip stream expands more than 100 times")
    assert "--max-ratio" in (error.hint or "")


def test_a_bomb_of_many_small_members_is_stopped_too(tmp_path: Path) -> None:
    members = [member(f"scripts/z{n}.bin", bytes(900 << 10)) for n in range(40)]  # each under 1 MiB
    error = _refused(_write(tmp_path, gz(tar_of(*members), level=9), "ctx.tar.gz"))
    assert error.message.startswith("the gzip stream expands more than 100 times")


def test_a_raised_ratio_lets_a_trusted_compressible_tar_through(tmp_path: Path) -> None:
    data = gz(tar_of(member("scripts/zeros.bin", bytes(4 << 20))), level=9)
    with open_source(_write(tmp_path, data, "ctx.tar.gz"), Limits(max_ratio=10_000)) as tree:
        assert tree.read("scripts/zeros.bin") == bytes(4 << 20)


# --- gzip ------------------------------------------------------------------------------------------------


def test_a_truncated_gzip_is_refused(tmp_path: Path) -> None:
    packed = gz(tar_of(member("scripts/tool.py", os.urandom(20_000))))
    error = _refused(_write(tmp_path, packed[: len(packed) // 2], "ctx.tar.gz"))
    assert error.message == "the gzip stream ends early (truncated)"


def test_a_gzip_whose_crc_does_not_match_is_refused(tmp_path: Path) -> None:
    packed = bytearray(gz(tar_of()))
    packed[-8] ^= 0xFF  # the CRC-32 in the trailer
    error = _refused(_write(tmp_path, bytes(packed), "ctx.tar.gz"))
    assert error.message == "the gzip stream is corrupt (Error -3 while decompressing data: incorrect data check)"


def test_garbage_after_the_gzip_stream_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, gz(tar_of()) + b"<html>502 Bad Gateway</html>", "ctx.tar.gz"))
    assert error.message == "data that is not gzip follows the gzip stream"


def test_a_gzip_holding_something_else_is_refused(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, gz(b"not a tar at all\n" * 100), "ctx.tar.gz"))
    assert error.message == "not a tar archive (its first header is not one)"


@pytest.mark.parametrize("magic, what, command", [
    (b"BZh91AY&SY", "bzip2", "bunzip2 -k"), (b"\xfd7zXZ\x00\x00", "xz", "unxz -k"),
    (b"\x28\xb5\x2f\xfd\x00", "zstd", "unzstd")])
def test_other_compressions_are_named_with_the_command_that_undoes_them(tmp_path: Path, magic: bytes, what: str,
                                                                         command: str) -> None:
    path = _write(tmp_path, magic + bytes(600), "ctx.tar.x")
    error = _refused(path)
    assert error.message == f"a {what}-compressed file: only zips, tars and gzip-compressed tars are read"
    assert error.hint == f"decompress it ({command} {path}) and pass the tar"


def test_a_deflate_stream_that_never_ends_costs_only_its_bytes(tmp_path: Path) -> None:
    # Empty stored blocks, forever as far as the header says: 8 MB of them, then nothing.
    engine = zlib.compressobj(0, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    body = engine.compress(tar_of()[:BLOCK]) + engine.flush(zlib.Z_SYNC_FLUSH)
    body += b"\x00\x00\x00\xff\xff" * ((8 << 20) // 5)
    error = _refused(_write(tmp_path, body, "ctx.tar.gz"))
    assert error.message == "the gzip stream ends early (truncated)"


# --- through the commands ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["apply"], ["check"], ["verify-sync"], ["inspect"], ["diff"]])
def test_a_hostile_tar_stops_each_command_with_one_line_and_writes_nothing(cli, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    hostile = cli.cwd / "ctx.tar.gz"
    hostile.write_bytes(gz(tar_of(header("scripts/tool.py", kind=b"2", link=b"/etc/shadow"))))
    before = sorted(os.listdir(cli.cwd))
    result = cli(*command, hostile)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: ctx.tar.gz: member 'scripts/tool.py' is a symbolic link; links are not allowed ({_link_hint()})"]
    assert sorted(os.listdir(cli.cwd)) == before


def _link_hint() -> str:
    from patcher.archive.tar_headers import _LINK_HINT

    return _LINK_HINT
