"""Entries that would not unpack to the same tree everywhere are refused.

Listed twice, file and folder at once, names differing only in case, folders holding data,
unknown file types, unsupported member flags.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures_archives import TOP, corpus, corpus_zip, members_zip, zip_refusal


def test_a_folder_entry_listed_twice_is_refused(tmp_path: Path) -> None:
    path = members_zip(tmp_path / "v.zip", corpus.base_members() + [corpus.Member(TOP + "scripts/")])
    assert zip_refusal(path) == "v.zip: member 'vendor-demo/scripts/' appears twice"


@pytest.mark.parametrize("name", ["run", "LINUX"])
def test_an_empty_folder_entry_named_like_a_file_is_a_clash(tmp_path: Path, name: str) -> None:
    members = corpus.base_members() + [
        corpus.Member(TOP + f"scripts/{name}", corpus.SCRIPT),
        corpus.Member(TOP + f"scripts/{name}/"),
    ]
    assert zip_refusal(members_zip(tmp_path / "v.zip", members)) == (
        f"v.zip: member 'vendor-demo/scripts/{name}' is both a file and a folder")


def test_an_empty_folder_entry_differing_in_case_from_a_folder_is_a_clash(tmp_path: Path) -> None:
    members = corpus.base_members() + [corpus.Member(TOP + "Scripts/")]
    assert zip_refusal(members_zip(tmp_path / "v.zip", members)) == (
        "v.zip: members 'vendor-demo/Scripts' and 'vendor-demo/scripts' differ only in letter case"
        " and would collide on case-insensitive file systems"
        " (re-create the zip with one of them renamed: a macOS or Windows checkout keeps only one)"
    )


def test_a_folder_entry_holding_data_is_refused(tmp_path: Path) -> None:
    members = [m for m in corpus.base_members() if m.name != TOP + "scripts/"]
    path = members_zip(tmp_path / "v.zip", members + [corpus.Member(TOP + "scripts/", b"hidden payload\n")])
    assert zip_refusal(path) == "v.zip: folder entry 'vendor-demo/scripts/' holds data"


def test_a_member_of_an_unknown_file_type_is_refused_with_the_type(tmp_path: Path) -> None:
    # 0o070000 is no type POSIX defines (not a file, folder, link, device, fifo or socket).
    path = corpus_zip(tmp_path / "v.zip", corpus.Member(TOP + "scripts/odd", b"", 0o070000 | 0o644))
    assert zip_refusal(path) == (
        "v.zip: member 'vendor-demo/scripts/odd' is of unknown file type 0o70000,"
        " not a regular file or folder"
    )


def test_compressed_patched_data_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.patch(corpus.with_base(), TOP + "scripts/run.sh", flags_or=0x20))
    assert zip_refusal(path) == (
        "v.zip: member 'vendor-demo/scripts/run.sh' uses compressed patched data,"
        " which is not supported (re-create the zip with deflate)"
    )
