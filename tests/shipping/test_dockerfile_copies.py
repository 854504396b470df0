"""COPY and ADD place context files as BuildKit does, and say what they could not follow.

A file copied to a path without a trailing ``/`` becomes that path unless a
folder stands there (BuildKit copies several sources in turn, so over a path
that is not a folder the last one wins); a folder's contents, or a
destination ending in ``/``, ``.`` or ``..``, land inside the destination.
Where only the base image could tell, several sources go into the
destination, as does ``x.py`` into a name without a dot, and that is noted. ``ADD`` of a URL or a
git remote brings a file that is not the context's; of an archive, files
the reader does not follow. ``COPY --from`` an image the reader cannot see
over placed files, an unknown flag, or a path only the base image could
name are unread; a source missing from the context fails the build.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile

import pytest

from patcher.errors import ShippingError
from patcher.shipping.add_archives import unpacks
from tests.shipping.conftest import plan_of


def tar_of(files: dict[str, bytes]) -> bytes:
    """A tar archive holding ``files``."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


TAR = tar_of({"inner/x.py": b"x = 1\n"})
CONTEXT: dict[str, str | bytes] = {"main.py": "", "pkg/a.py": "", "pkg/sub/b.py": "", "data.tar.gz": gzip.compress(TAR),
                                   "notes.md.txt": ""}


def built(dockerfile: str, target: str | None = None):  # type: ignore[no-untyped-def]
    return plan_of({"Dockerfile": dockerfile, **CONTEXT}, target)


def image(dockerfile: str) -> dict[str, str]:
    return {path: p.source for path, p in built(dockerfile).image.items()}


def notes(dockerfile: str) -> list[tuple[str, int, str, str, tuple[str, ...] | None]]:
    return [(n.kind, n.line, n.text, n.reason, n.scope) for n in built(dockerfile).notes]


@pytest.mark.parametrize(("copy", "placed"), [
    ("COPY main.py /d/m.py", {"/d/m.py": "main.py"}),
    ("COPY main.py /d/", {"/d/main.py": "main.py"}),
    ("COPY main.py /d/.", {"/d/main.py": "main.py"}),
    ("COPY main.py /d/..", {"/main.py": "main.py"}),
    ("COPY /main.py ./d/", {"/d/main.py": "main.py"}),
    ("COPY ./main.py m.py", {"/m.py": "main.py"}),
    ("COPY ./main.py d", {"/d/main.py": "main.py"}),  # the base image decides; read as its folder, and noted
    ("COPY pkg /d", {"/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py"}),
    ("COPY pkg/ /d/", {"/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py"}),
    ("COPY pkg/sub/../sub /d", {"/d/b.py": "pkg/sub/b.py"}),
    ("COPY . /d/", {"/d/Dockerfile": "Dockerfile", "/d/data.tar.gz": "data.tar.gz", "/d/main.py": "main.py",
                    "/d/notes.md.txt": "notes.md.txt", "/d/pkg/a.py": "pkg/a.py", "/d/pkg/sub/b.py": "pkg/sub/b.py"}),
    ("COPY ./ /d", {"/d/Dockerfile": "Dockerfile", "/d/data.tar.gz": "data.tar.gz", "/d/main.py": "main.py",
                    "/d/notes.md.txt": "notes.md.txt", "/d/pkg/a.py": "pkg/a.py", "/d/pkg/sub/b.py": "pkg/sub/b.py"}),
    ("COPY p* /d/", {"/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py"}),
    ("COPY pkg/*.py /d", {"/d/a.py": "pkg/a.py"}),
    ("COPY pkg/s?b /d/", {"/d/b.py": "pkg/sub/b.py"}),
    ("COPY [mn]ain.py /d", {"/d/main.py": "main.py"}),
    ("COPY *.py pkg/a.py /d", {"/d/main.py": "main.py", "/d/a.py": "pkg/a.py"}),
    ("COPY main.py pkg/a.py /d", {"/d/main.py": "main.py", "/d/a.py": "pkg/a.py"}),
    ("COPY [\"main.py\", \"/d d/\"]", {"/d d/main.py": "main.py"}),
    ("COPY --chown=1:1 --chmod=755 --link --parents --exclude=x --checksum=sha256:1 --keep-git-dir --unpack "
     "main.py /d/", {"/d/main.py": "main.py"}),
    ("WORKDIR /w\nCOPY main.py .\nCOPY main.py ..", {"/w/main.py": "main.py", "/main.py": "main.py"}),
    ("WORKDIR /w\nCOPY main.py sub/", {"/w/sub/main.py": "main.py"}),
    ("RUN mkdir /d\nCOPY main.py /d", {"/d/main.py": "main.py"}),  # an existing folder: into it
    ("COPY pkg/a.py /d/x.py\nCOPY main.py /d/x.py", {"/d/x.py": "main.py"}),  # an existing file: replaced
    # BuildKit copies each source in turn: over a path that is not a folder, the last one wins.
    ("RUN mkdir /d\nCOPY main.py pkg/a.py /d/x", {"/d/x": "pkg/a.py"}),
    ("RUN mkdir /d\nCOPY pkg/*.py /d/x.py", {"/d/x.py": "pkg/a.py"}),
    ("COPY pkg /d\nCOPY main.py /d", {"/d/main.py": "main.py", "/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py"}),
    ("COPY data.tar.gz /opt/", {"/opt/data.tar.gz": "data.tar.gz"}),  # COPY does not unpack
    ("COPY <<EOF /d/x.py\nhi\nEOF", {}),
    ("COPY main.py /d/x.py\nCOPY <<EOF /d/\nhi\nEOF", {"/d/x.py": "main.py"}),
    ("COPY main.py /d/x.py\nCOPY <<x.py /d/\nhi\nx.py", {}),
    ("COPY main.py /d/EOF.py\nCOPY <<EOF.py main.py /d/\nhi\nEOF.py", {"/d/main.py": "main.py"}),
    ("COPY main.py /d/m.py\nCOPY <<-EOF /d/m.py\n\thi\n\tEOF", {}),
    ("ADD main.py /d/", {"/d/main.py": "main.py"}),
    ("ADD https://example.com/a.py /d/\nADD https://example.com/ /e/x\nADD git@github.com:a/b.git /g/", {}),
    ("COPY main.py /d/a.py\nADD https://example.com/a.py /d/", {}),
    ("COPY main.py /d/a.py\nADD https://example.com/a.py?x=1 /d/", {}),
    ("COPY main.py /e/x.py\nADD https://example.com/a.py /e/x.py", {}),
    ("COPY main.py /e/x.py\nADD https://example.com/a.py main.py /e/", {"/e/main.py": "main.py", "/e/x.py": "main.py"}),
    # BuildKit names a download for the last element of the URL's path: a trailing '/' and a fragment are not
    # part of it, and a URL with no path is __unnamed__ (so an index.html copied before it stays).
    ("COPY main.py /d/v0.6.3\nADD https://example.com/vllm/releases/v0.6.3/ /d/", {}),
    ("COPY main.py /d/a.py\nADD https://example.com/a.py#sha256 /d/", {}),
    ("COPY main.py /d/index.html\nADD https://example.com/ /d/\nADD https://example.com /d/",
     {"/d/index.html": "main.py"}),
])
def test_copy_and_add_place_files_as_buildkit_does(copy: str, placed: dict[str, str]) -> None:
    assert image(f"FROM base\n{copy}\n") == placed


@pytest.mark.parametrize(("dockerfile", "found"), [
    ("FROM base\nCOPY --bogus main.py /d/\n",
     [("unread", 2, "COPY --bogus main.py /d/", "COPY with --bogus, which the reader does not follow", ("/d",))]),
    ("FROM base\nCOPY --bogus --x=1 main.py /d/\n",
     [("unread", 2, "COPY --bogus --x=1 main.py /d/", "COPY with --bogus, --x, which the reader does not follow",
       ("/d",))]),
    ("FROM base\nCOPY --bogus main.py $X/d/\n",
     [("unread", 2, "COPY --bogus main.py $X/d/", "COPY with --bogus, which the reader does not follow", None)]),
    ("FROM base\nCOPY main.py $X/d/\n",
     [("unread", 2, "COPY main.py $X/d/", "its paths depend on a variable only the base image could set", None)]),
    ("FROM base\nCOPY $X main.py /d/\n",
     [("unread", 2, "COPY $X main.py /d/", "its paths depend on a variable only the base image could set", None)]),
    ("FROM base\nCOPY main.py /d/m.py\nCOPY --from=img:1 /x /d/m.py\n",
     [("unread", 3, "COPY --from=img:1 /x /d/m.py", "copies files of image img:1, which the reader cannot see, over "
                                                     "what the build placed in /d/m.py", ("/d/m.py",))]),
    ("FROM base\nCOPY main.py /d/\nCOPY --from=img /x /d/\n",
     [("unread", 3, "COPY --from=img /x /d/", "copies files of image img, which the reader cannot see, over what the "
                                              "build placed in /d", ("/d",))]),
    ("FROM base\nCOPY main.py /d/\nCOPY --from=img /x /e/\n", []),
    ("FROM base\nADD data.tar.gz /opt/\n",
     [("unread", 2, "ADD data.tar.gz /opt/", "ADD unpacks the archive it names; the files in it are not followed",
       ("/opt",))]),
    # A git remote is cloned into DEST: whatever the build placed there may be covered by the repository's files.
    ("FROM base\nCOPY main.py /g/\nADD git@github.com:vendor/ops.git /g/\n",
     [("unread", 3, "ADD git@github.com:vendor/ops.git /g/", "ADD clones git@github.com:vendor/ops.git; the files in "
                                                            "it are not followed", ("/g",))]),
    ("FROM base\nADD https://github.com/vendor/ops.git#v1.2 /g\n",
     [("unread", 2, "ADD https://github.com/vendor/ops.git#v1.2 /g", "ADD clones https://github.com/vendor/ops.git#v1.2; "
                                                                    "the files in it are not followed", ("/g",))]),
    ("FROM base\nCOPY missing.py /d/\nCOPY main.py /e/\n",
     [("fails", 2, "COPY missing.py /d/", "missing.py is not in the build context, so 'docker build' stops here",
       None)]),
    ("FROM base\nCOPY main.py /opt/vllm/ops\n",
     [("assumed", 2, "COPY main.py /opt/vllm/ops", "/opt/vllm/ops is taken to be a folder of the base image (else "
                                                   "main.py would be copied as /opt/vllm/ops itself)", None)]),
    ("FROM base\nCOPY main.py pkg/a.py /d\n",
     [("assumed", 2, "COPY main.py pkg/a.py /d", "/d is taken to be a folder of the base image (else each source "
                                                 "would be copied over the one before, as /d itself)", None)]),
    ("FROM base\nRUN mkdir /d\nCOPY main.py pkg/a.py /d/x\n",
     [("fails", 3, "COPY main.py pkg/a.py /d/x", "/d/x is not a folder and does not end with '/': BuildKit copies "
                                                 "each source over the one before, so it holds only the last (the "
                                                 "classic builder refuses the line)", None)]),
    ("FROM base\nCOPY *.md /d/\n",
     [("fails", 2, "COPY *.md /d/", "*.md is not in the build context, so 'docker build' stops here", None)]),
    ("FROM base\nADD a.txt https://x/ /k/\n",
     [("fails", 2, "ADD a.txt https://x/ /k/", "a.txt is not in the build context, so 'docker build' stops here",
       None)]),
])
def test_what_a_copy_cannot_follow_is_noted(dockerfile: str, found: list[object]) -> None:
    assert notes(dockerfile) == found


@pytest.mark.parametrize(("name", "data"), [
    ("payload.bin", TAR), ("payload.bin", gzip.compress(TAR)), ("payload.bin", bz2.compress(TAR)),
    ("payload.bin", lzma.compress(TAR)), ("payload.zst", b"\x28\xb5\x2f\xfd" + bytes(64)),
])
def test_add_unpacks_a_tar_archive_whatever_its_name(name: str, data: bytes) -> None:
    # "solely based on the contents of the file, not the name of the file" (the Dockerfile reference)
    plan = plan_of({"Dockerfile": f"FROM base\nADD {name} /opt/\n", name: data})
    assert f"/opt/{name}" not in plan.image
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("unread", "ADD unpacks the archive it names; the files in it are not followed")]


@pytest.mark.parametrize(("name", "data"), [
    ("empty.tar.gz", b""), ("notes.gz", gzip.compress(b"plain text, not a tar\n" * 40)), ("fake.tar", b"x" * 2048),
    ("broken.tar.gz", b"\x1f\x8b\x08" + b"not deflate" * 10), ("zeros.tar", bytes(2048)),
])
def test_add_copies_a_file_that_is_no_tar_archive_as_it_is(name: str, data: bytes) -> None:
    plan = plan_of({"Dockerfile": f"FROM base\nADD {name} /opt/\n", name: data})
    assert plan.image[f"/opt/{name}"].source == name and plan.notes == ()


@pytest.mark.parametrize("data", [b"\xfd7zXZ\x00" + b"not xz" * 20, b"BZh9" + b"not bzip2" * 20])
def test_a_file_whose_compression_magic_lies_is_copied_as_it_is(data: bytes) -> None:
    plan = plan_of({"Dockerfile": "FROM base\nADD liar.bin /opt/\n", "liar.bin": data})
    assert plan.image["/opt/liar.bin"].source == "liar.bin" and plan.notes == ()


@pytest.mark.parametrize(("module", "data"), [("lzma", lzma.compress(TAR)), ("bz2", bz2.compress(TAR))])
def test_without_the_module_to_look_inside_a_compressed_file_is_taken_for_the_archive_its_magic_says(
        monkeypatch: pytest.MonkeyPatch, module: str, data: bytes) -> None:
    # A CPython built without liblzma or libbz2 cannot read it: its files are unread, never a guess that it is none.
    from patcher.shipping import add_archives
    monkeypatch.setattr(add_archives, module, None)
    assert unpacks(io.BytesIO(data))
    assert unpacks(io.BytesIO(data[:6] + b"garbage" * 10))


class _Counted(io.BytesIO):
    """A stream that remembers how much was read from it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data


def test_a_compressed_bomb_is_read_no_further_than_its_head() -> None:
    # 64 MiB of zeros compress to 64 KB: the reader reads 64 KiB of the file and inflates one tar block of it.
    bomb = _Counted(gzip.compress(bytes(64 * 1024 * 1024), compresslevel=9) + bytes(1024 * 1024))
    assert not unpacks(bomb) and bomb.taken <= 64 * 1024
    plan = plan_of({"Dockerfile": "FROM base\nADD zeros.gz /opt/\n", "zeros.gz": bomb.getvalue()})
    assert plan.image["/opt/zeros.gz"].source == "zeros.gz"


def test_an_add_of_an_archive_still_places_its_other_sources() -> None:
    assert image("FROM base\nADD data.tar.gz main.py /opt/\n") == {"/opt/main.py": "main.py"}


def test_the_folder_an_archive_is_added_into_is_a_folder_for_later_copies() -> None:
    plan = built("FROM base\nADD data.tar.gz /opt/data/\nCOPY main.py /opt/data\n")
    assert {path: p.source for path, p in plan.image.items()} == {"/opt/data/main.py": "main.py"}
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]  # the archive; no guess about /opt/data


def test_a_folder_an_exclude_pattern_names_is_not_made_by_a_copy_from_another_stage() -> None:
    # BuildKit (fsutil's copy with --exclude patterns) skips a folder a pattern matches and all below it: /app/cache
    # is not made, so whether main.py lands in it is the base image's (assumed, noted); /app/keep is made.
    plan = built("FROM base AS build\nRUN mkdir -p /out/cache /out/keep\nFROM base\n"
                 "COPY --from=build --exclude=cache /out /app/\nCOPY main.py /app/cache\nCOPY main.py /app/keep\n")
    assert {path: p.source for path, p in plan.image.items()} == {
        "/app/cache/main.py": "main.py", "/app/keep/main.py": "main.py"}
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("assumed", 5, "COPY main.py /app/cache")]


@pytest.mark.parametrize(("dockerfile", "copies"), [
    ("FROM base\nCOPY main.py /d\n", [(("main.py",), "/d", 2, "COPY", (), 0, "context")]),
    ("FROM base\nCOPY main.py pkg/a.py /d\n", [(("main.py", "pkg/a.py"), "/d/", 2, "COPY", (), 0, "context")]),
    ("FROM base\nWORKDIR /w\nCOPY ./pkg/ /main.py .\n", [(("pkg", "main.py"), "/w/", 3, "COPY", (), 0, "context")]),
    ("FROM base\nCOPY main.py /d/..\n", [(("main.py",), "/", 2, "COPY", (), 0, "context")]),
    ("FROM base\nCOPY main.py /usr/local/bin/X\n", [(("main.py",), "/usr/local/bin/X", 2, "COPY", (), 0, "context")]),
    ("FROM base\nCOPY $X main.py /d/\n", [(("$X", "main.py"), "/d/", 2, "COPY", (), 0, "context")]),
    ("FROM base\nWORKDIR $W\nCOPY main.py .\n", [(("main.py",), "/$W/", 3, "COPY", (), 0, "context")]),
    ("FROM base\nADD --chmod=644 https://example.com/a.py git@h:a/b.git /d/\n",
     [(("https://example.com/a.py", "git@h:a/b.git"), "/d/", 2, "ADD", ("--chmod=644",), 0, "context")]),
    ("FROM base AS a\nCOPY main.py /m.py\nFROM base\nCOPY --from=0 --link /m.py /n.py\nCOPY --from=A /m.py /p.py\n"
     "COPY --from=1 /m.py /o.py\nCOPY --from=img:1 /x/./y /q/\n",
     [(("main.py",), "/m.py", 2, "COPY", (), 0, "context"),
      (("/m.py",), "/n.py", 4, "COPY", ("--from=0", "--link"), 1, "stage a"),
      (("/m.py",), "/p.py", 5, "COPY", ("--from=A",), 1, "stage a"),
      (("/m.py",), "/o.py", 6, "COPY", ("--from=1",), 1, "image 1"),
      (("/x/./y",), "/q/", 7, "COPY", ("--from=img:1",), 1, "image img:1")]),
])
def test_each_copy_is_recorded_as_the_dockerfile_writes_it(dockerfile: str, copies: list[object]) -> None:
    assert [(c.sources, c.destination, c.line, c.instruction, c.flags, c.stage, c.origin)
            for c in built(dockerfile).dockerfile.copies] == copies


def test_a_copy_counts_the_files_it_placed() -> None:
    plan = built("FROM base\nCOPY pkg /d\nCOPY main.py missing.py /e/\nCOPY pkg/a.py /f/\nCOPY pkg/a.py /f/\n"
                 "COPY <<EOF /g\nx\nEOF\n")
    assert dict(plan.copy_counts) == {2: 2, 3: 1, 4: 1, 5: 1, 6: 0}


def test_an_onbuild_copy_counts_the_files_it_placed_in_each_stage_that_runs_it() -> None:
    # BuildKit runs the trigger at the start of each stage FROM its stage: two stages, two copies of pkg's 2 files.
    plan = built("FROM base AS builder\nONBUILD COPY pkg /opt/pkg\nFROM builder AS one\nFROM builder AS two\n")
    assert dict(plan.copy_counts) == {2: 4}


def test_a_download_is_not_counted_as_a_context_file_the_copy_placed() -> None:
    plan = built("FROM base\nADD https://example.com/a.py /d/\nADD https://example.com/b.py main.py /e/\n")
    assert dict(plan.copy_counts) == {2: 0, 3: 1}


def test_a_copy_from_another_stage_counts_the_files_it_placed() -> None:
    plan = built("FROM base AS builder\nCOPY pkg /opt/pkg\nFROM base\n"
                 "COPY --from=builder /opt/pkg /usr/lib/python3/dist-packages/pkg\n"
                 "COPY --from=builder /opt/pkg/a.py /opt/missing.py /app/\n")
    assert dict(plan.copy_counts) == {2: 2, 4: 2, 5: 1}


REFUSED_HINT = "'docker build' refuses it too; fix that line"


@pytest.mark.parametrize(("dockerfile", "line", "what"), [
    ("FROM\n", 1, "FROM takes an image and, optionally, AS NAME"),
    ("FROM a b\n", 1, "FROM takes an image and, optionally, AS NAME"),
    ("FROM a AS\n", 1, "FROM takes an image and, optionally, AS NAME"),
    ("FROM a as b c\n", 1, "FROM takes an image and, optionally, AS NAME"),
    ("FROM a to b\n", 1, "FROM takes an image and, optionally, AS NAME"),
    ("FROM base\nENV\n", 2, "ENV needs a name and a value"),
    ("FROM base\nENV  \n", 2, "ENV needs a name and a value"),
    ("FROM base\nENV A=\"x\n", 2, "ENV unexpected end of statement while looking for matching double-quote"),
    ("FROM base\nENV =x\n", 2, "ENV '=x' is not NAME=VALUE"),
    ("FROM base\nSHELL /bin/bash\n", 2, 'SHELL needs a JSON array, e.g. ["/bin/bash", "-c"]'),
    ("FROM base\nSHELL []\n", 2, 'SHELL needs a JSON array, e.g. ["/bin/bash", "-c"]'),
    ("FROM base\nCOPY main.py\n", 2, "COPY needs a source and a destination"),
    ("FROM base\nADD [\"main.py\"]\n", 2, "ADD needs a source and a destination"),
    ("FROM base\nCOPY main.py ${D:?required}\n", 2, "COPY ${D:?required}: D: required"),
    ("FROM base\nCOPY main.py ${D:?is required}\n", 2,  # words are split on blanks first, as BuildKit does
     "COPY ${D:?is: unexpected end of statement while looking for matching }"),
    ("FROM base\nWORKDIR ${D\n", 2, "WORKDIR ${D: syntax error: missing '}'"),
    ("FROM base\nCOPY --from=${S:?} /a /b\n", 2, "COPY ${S:?}: S: is not allowed to be unset"),
    ("ARG S=one\nFROM base AS one\nFROM base\nCOPY --from=$S /a /b\n", 4,
     "--from=$S: variables are not expanded in --from (name a stage FROM the image, with an ARG before the first "
     "FROM)"),
    ("FROM ${B:?nobase}\n", 1, "FROM ${B:?nobase}: B: nobase"),
    ("FROM base AS ${N:?}\n", 1, "FROM ${N:?}: N: is not allowed to be unset"),
    ("ARG X=${Y:?}\nFROM base\n", 1, "ARG ${Y:?}: Y: is not allowed to be unset"),
    ("FROM base\nARG X=${Y:?}\n", 2, "ARG ${Y:?}: Y: is not allowed to be unset"),
    ("RUN x\nFROM base\n", 1, "RUN before the first FROM"),
    ("ARG A\nCOPY main.py /x/\n", 2, "COPY before the first FROM"),
    ("FROM base\nCOPY main.py /" + "x" * 100 + "${A\n", 2, "COPY /" + "x" * 79 + ": syntax error: missing '}'"),
])
def test_a_dockerfile_docker_refuses_is_refused_with_the_line_and_why(dockerfile: str, line: int, what: str) -> None:
    with pytest.raises(ShippingError) as raised:
        built(dockerfile)
    assert (raised.value.where, raised.value.message, raised.value.hint) == (
        "Dockerfile", f"cannot be parsed: line {line}: {what}", REFUSED_HINT)


@pytest.mark.parametrize(("dockerfile", "target", "message"), [
    ("FROM base AS one\nFROM base AS two\n", "three", "no build stage named 'three' (named stages: one, two)"),
    ("FROM base\nFROM base\n", "x", "no build stage named 'x' (named stages: none)"),
    ("", None, "no FROM: nothing is built"),
    ("ARG A=1\n# only arguments\n", None, "no FROM: nothing is built"),
])
def test_a_build_without_the_stage_asked_for_is_refused(dockerfile: str, target: str | None, message: str) -> None:
    with pytest.raises(ShippingError) as raised:
        built(dockerfile, target)
    assert (raised.value.where, raised.value.message) == ("Dockerfile", message)
    assert raised.value.hint == ("give --target one of the names after AS in the FROM lines" if target else
                                 "'docker build' refuses it too; start the Dockerfile with FROM")


@pytest.mark.parametrize(("source", "problem"), [
    ("pkg/[z-a]*.py", "cannot be read: bad character range z-a"),
    ("pkg/a**b**c**d**e**f", "has more than 4 '**' inside names"),
])
def test_a_copy_source_pattern_that_cannot_be_read_is_refused_as_a_copy_source(source: str, problem: str) -> None:
    with pytest.raises(ShippingError) as raised:
        built(f"FROM base\nCOPY {source} /opt/\n")
    assert raised.value.where == "COPY source"
    assert str(raised.value).startswith(f"COPY source: pattern {source!r} {problem}")


def test_a_folder_whose_name_ends_in_a_space_is_copied_as_named() -> None:
    # The JSON form keeps the trailing space: "pkg " is a folder of its own, not pkg.
    plan = plan_of({"Dockerfile": 'FROM base\nCOPY ["pkg ", "/app/"]\n', "pkg /b.py": "", "pkg/a.py": ""})
    assert {path: placed.source for path, placed in plan.image.items()} == {"/app/b.py": "pkg /b.py"}
