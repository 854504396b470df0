"""The plan the reader hands on: what ships, where, by which line, and what could change it.

``copied`` maps each context file that reaches the image to its first image
path; ``copied_by`` to the COPY that brought it (the first, when a command
took it further); ``installed`` lists the files a command moved, by the last
command that moved them; ``scripts`` each script run, once per RUN line.
``would_ship`` answers for a file that is not there yet (the manifest
``apply`` writes). ``shipped_copy`` names the one context file the image
runs as a target, or refuses with what to do.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from patcher.shipping import Installed
from patcher.shipping.install_script import Note
from patcher.shipping.plan import describe, parent_folders
from tests.shipping.conftest import in_dest, plan_of, run_script, script_context

CONTEXT = {"main.py": "", "pkg/a.py": "", "pkg/sub/b.py": "", "other/c.py": "", ".dockerignore": "pkg/sub\n"}


@pytest.mark.parametrize(("dockerfile", "answers"), [
    ("FROM base\nCOPY pkg /app/pkg\nCOPY main.py /app/\nCOPY other/*.py /o/\n",
     {"pkg/new.py": True, "pkg/sub/new.py": False, "main.py": True, "main2.py": False, "other/x.py": True,
      "other/x.txt": False, "other/d/x.py": False, "x": False, "pkgx/a.py": False, "pkg": True}),
    ("FROM base\nCOPY . /app/\n", {"anything.py": True, "pkg/sub/x": False, "a/b/c": True}),
    ("FROM base\nCOPY ./ /app/\n", {"anything.py": True}),
    ("FROM base\nCOPY pkg/ /app/\n", {"pkg/x.py": True, "pkg": True, "pk": False}),
    ("FROM base\nCOPY o*/ /app/\n", {"other/new.py": True, "own/x/y.py": True, "pkg/x.py": False}),
    ("FROM base\nCOPY */c.py /app/\n", {"other/c.py": True, "new/c.py": True, "other/d.py": False}),
    ("FROM base AS b\nCOPY main.py /b/\nFROM base\nCOPY --from=b /b /c\nCOPY --from=img / /d\n",
     {"main.py": True, "pkg/a.py": False}),
    ("FROM base AS b\nCOPY pkg /b/\nFROM base\nCOPY main.py /c/\n", {"main.py": True, "pkg/a.py": False}),
    ("FROM base\nCOPY --from=img:1 / /\n", {"main.py": False}),
    # A folder whose name ends in the letter X: 'pkgX' is no prefix of 'pkg/...'.
    ("FROM base\nCOPY pkgX /app/pkgX\n", {"pkgX/new.py": True, "pkg/new.py": False, "pkgX": True}),
])
def test_would_ship_follows_the_copies_of_the_stages_that_make_the_image(dockerfile: str,
                                                                           answers: dict[str, bool]) -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": dockerfile})
    assert {path: plan.would_ship(path) for path in answers} == answers


def test_dockerignored_files_never_ship() -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY . /app/\n"})
    assert plan.ignored == ("pkg/sub/b.py",) and not plan.ships("pkg/sub/b.py") and plan.ships("pkg/a.py")
    assert [(r.pattern, r.exception) for r in plan.ignore_rules] == [("pkg/sub", False)]


@pytest.mark.parametrize(("dockerfile", "copied", "copied_by", "installed"), [
    ("FROM base\nCOPY main.py /a/m.py\nCOPY main.py /b/m.py\nRUN cp /a/m.py /c/m.py\nCOPY main.py /d/\n",
     {"main.py": "/a/m.py"}, {"main.py": 2}, [("main.py", "/c/m.py", "Dockerfile", 4, (), True)]),
    ("FROM base\nCOPY main.py /a/m.py\nRUN mv /a/m.py /c/m.py\n",
     {"main.py": "/c/m.py"}, {"main.py": 2}, [("main.py", "/c/m.py", "Dockerfile", 3, (), True)]),
    ("FROM base\nCOPY main.py /a/m.py\nRUN mv /a/m.py /c/m.py\nCOPY main.py /d/m.py\n",  # a COPY's own path first
     {"main.py": "/d/m.py"}, {"main.py": 2}, [("main.py", "/c/m.py", "Dockerfile", 3, (), True)]),
    ("FROM base\nCOPY main.py /a/m.py\nCOPY main.py /b/m.py\n", {"main.py": "/a/m.py"}, {"main.py": 2}, []),
    ("FROM base\nCOPY main.py /a/m.py\nCOPY main.py /a/m.py\n", {"main.py": "/a/m.py"}, {"main.py": 3}, []),
    ("FROM base\nCOPY main.py /a/m.py\nRUN cp /a/m.py /b/m.py || true; cp /b/m.py /c/m.py\n",
     {"main.py": "/a/m.py"}, {"main.py": 2},
     [("main.py", "/b/m.py", "Dockerfile", 3, ("|| true",), False),
      ("main.py", "/c/m.py", "Dockerfile", 3, ("|| true",), False)]),
    ("FROM base\nRUN --mount=type=bind,target=/m cp /m/main.py /a/m.py\n", {"main.py": "/a/m.py"}, {},
     [("main.py", "/a/m.py", "Dockerfile", 2, (), True)]),
    ("FROM base AS b\nCOPY main.py /b/m.py\nFROM base\nCOPY --from=b /b/m.py /f/m.py\n",
     {"main.py": "/f/m.py"}, {"main.py": 4}, []),
    # Copied from another stage, then moved by a command: the first COPY brought it.
    ("FROM base AS b\nCOPY main.py /b/m.py\nFROM base\nCOPY --from=b /b/m.py /f/m.py\nRUN mv /f/m.py /g/m.py\n",
     {"main.py": "/g/m.py"}, {"main.py": 2}, [("main.py", "/g/m.py", "Dockerfile", 5, (), True)]),
    # ADD of a context file that is not an archive copies it as COPY does: it is the line that brought it.
    ("FROM base\nADD main.py /a/m.py\nRUN cp /a/m.py /c/m.py\n",
     {"main.py": "/a/m.py"}, {"main.py": 2}, [("main.py", "/c/m.py", "Dockerfile", 3, (), True)]),
])
def test_the_plan_says_which_line_brought_each_file(dockerfile: str, copied: dict[str, str], copied_by: dict[str, int],
                                                    installed: list[object]) -> None:
    plan = plan_of({"Dockerfile": dockerfile, "main.py": ""})
    assert (plan.copied, plan.copied_by) == (copied, copied_by)
    assert [(i.path, i.image_path, i.script, i.line, i.hides_failure, i.stops_on_error) for i in plan.installed] == \
        installed


def test_a_script_run_twice_by_one_run_line_is_one_script_with_both_runs_copies() -> None:
    plan = plan_of(script_context("set -e\ncp x.py $D/x.py\n", run="cd /w/s && ./i.sh; D=/q ./i.sh; set +e"))
    assert [(s.path, s.image_path, s.run_line, s.body.stops_on_error, s.body.unknown) for s in plan.scripts] == [
        ("s/i.sh", "/w/s/i.sh", 4, True, ("D",))]
    assert [(c.source, c.destination, c.line) for c in plan.scripts[0].body.copies] == [("/w/s/x.py", "/q/x.py", 2)]
    plan = plan_of(script_context("cp x.py /d/$N.py\n", run="cd /w/s && N=1 ./i.sh && N=2 ./i.sh"))
    assert [(c.destination, c.line) for c in plan.scripts[0].body.copies] == [("/d/1.py", 1), ("/d/2.py", 1)]
    assert plan.scripts[0].body.stops_on_error is False


@pytest.mark.parametrize(("script", "found"), [
    ("cp x.py /usr/lib/vllm/ops/paged_attn.py\n", [("s/x.py", "/usr/lib/vllm/ops/paged_attn.py", "s/i.sh", 1)]),
    ("cp x.py /usr/lib/vllm/ops/\nmv /usr/lib/vllm/ops/x.py /usr/lib/vllm/ops/paged_attn.py\n",
     [("s/x.py", "/usr/lib/vllm/ops/paged_attn.py", "s/i.sh", 2)]),
    ("cp x.py /ops/paged_attn.py\ncp sub/y.py /b/vllm/ops/paged_attn.py\n",
     [("s/sub/y.py", "/b/vllm/ops/paged_attn.py", "s/i.sh", 2)]),
    ("cp x.py /vllm/ops/paged_attn.py/\n", []),
])
def test_find_matches_the_target_on_whole_path_components(script: str, found: list[object]) -> None:
    plan = plan_of(script_context("mkdir -p /usr/lib/vllm/ops\n" + script))
    assert [(i.path, i.image_path, i.script, i.line - 1) for i in plan.find("vllm/ops/paged_attn.py")] == found


def test_find_also_gives_what_a_copy_alone_put_there() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY a.py /x/vllm/ops/paged_attn.py\nCOPY b.py /y/\n"
                                  "RUN cp /y/b.py /z/vllm/ops/paged_attn.py\n", "a.py": "", "b.py": ""})
    assert plan.find("/vllm/ops/paged_attn.py/") == [
        Installed("b.py", "/z/vllm/ops/paged_attn.py", "Dockerfile", 4, ()),
        Installed("a.py", "/x/vllm/ops/paged_attn.py", "Dockerfile", 0, ())]


def test_the_shipped_copy_is_the_one_file_found() -> None:
    plan = plan_of(script_context("cp x.py /a/vllm/x.py\ncp x.py /b/vllm/x.py\n"))
    assert plan.shipped_copy("vllm/x.py") == "s/x.py"


def test_two_different_files_at_the_target_are_refused() -> None:
    plan = plan_of(script_context("cp x.py /a/vllm/x.py\ncp sub/y.py /b/vllm/x.py\n"))
    with pytest.raises(ShippingError) as raised:
        plan.shipped_copy("vllm/x.py")
    assert (raised.value.where, raised.value.message, raised.value.hint) == (
        "Dockerfile", "several files are installed as .../vllm/x.py: s/sub/y.py, s/x.py",
        "the image would end up with whichever is copied last; remove the extra copy")


@pytest.mark.parametrize(("script", "message"), [
    ("echo nothing\n", "nothing the image ships lands at .../vllm/x.py (install scripts run: s/i.sh)"),
    ("eval \"$X\"\n", "nothing the image ships lands at .../vllm/x.py (install scripts run: s/i.sh); line 1 of "
                      "s/i.sh (`eval \"$X\"`) could have placed it"),
    ("make\nmake install\n", "nothing the image ships lands at .../vllm/x.py (install scripts run: s/i.sh); lines 1 "
                             "and 2 of s/i.sh (`make`, `make install`) could have placed it"),
])
def test_a_target_nothing_lands_at_is_refused_with_what_could_have_placed_it(script: str, message: str) -> None:
    plan = plan_of(script_context(script))
    with pytest.raises(ShippingError) as raised:
        plan.shipped_copy("vllm/x.py")
    assert (raised.value.where, raised.value.message, raised.value.hint) == (
        "Dockerfile", message, "run 'patcher inspect VENDOR' to see what the build copies where")


def test_a_build_without_scripts_says_none_ran() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY a.py /a.py\n", "a.py": ""})
    with pytest.raises(ShippingError) as raised:
        plan.shipped_copy("vllm/x.py")
    assert raised.value.message == "nothing the image ships lands at .../vllm/x.py (install scripts run: none)"


def test_unread_keeps_the_notes_of_the_stages_that_make_the_image() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS b\nRUN make\nRUN false\nFROM base AS unused\nRUN make\n"
                                  "FROM b\nRUN eval \"$X\"\nRUN apt-get install x\nRUN cd /nothere; cd $Y\n", "a.py": ""})
    assert [(n.line, n.kind, n.stage) for n in plan.unread()] == [
        (2, "program", "b"), (7, "unread", "stage 2"), (8, "program", "stage 2"), (9, "stop", "stage 2")]
    assert [(n.line, n.kind) for n in plan.notes] == [
        (2, "program"), (3, "fails"), (5, "program"), (7, "unread"), (8, "program"), (9, "stop")]


def test_caveats_are_the_unread_lines_that_ran_where_and_when_they_could_change_the_file() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nRUN make\nCOPY a.py /s/a.py\nRUN eval \"$X\"\nRUN sed -i s/x/y/ /s/a.py\n"
                                  "RUN cp /s/a.py /t/a.py\nRUN sed -i s/x/y/ /s/a.py\nRUN sed -i s/x/y/ /t/b.py\n"
                                  "RUN make\nRUN pip install vllm\n", "a.py": ""})
    assert [n.line for n in plan.caveats("a.py")] == [4, 5, 7, 9]  # line 7 changes /s/a.py, the copy at /s
    assert [n.line for n in plan.caveats("a.py", ("/t/a.py",))] == [4, 5, 9]
    assert [n.line for n in plan.caveats("a.py", ("/s/a.py",))] == [4, 5, 7, 9]
    assert plan.caveats("a.py", ("/elsewhere.py",)) == () and plan.caveats("b.py") == ()


def test_a_caveat_counts_once_for_a_file_at_several_paths() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY a.py /s/a.py\nCOPY a.py /t/a.py\nRUN make\n", "a.py": ""})
    assert [(n.line, n.kind) for n in plan.caveats("a.py")] == [(4, "program")]


def test_a_note_of_another_stage_is_no_caveat() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS b\nCOPY a.py /s/a.py\nRUN make\nFROM base\nRUN make install\n"
                                  "COPY --from=b /s/a.py /t/a.py\nRUN make all\n", "a.py": ""})
    assert [n.line for n in plan.caveats("a.py")] == [3, 7]


@pytest.mark.parametrize(("notes", "text"), [
    ([("a.sh", 3, "x")], "line 3 of a.sh (`x`)"),
    ([("a.sh", 3, "x"), ("a.sh", 5, "y")], "lines 3 and 5 of a.sh (`x`, `y`)"),
    ([("a.sh", 3, "x"), ("a.sh", 5, "y"), ("a.sh", 7, "z")], "lines 3, 5 and 7 of a.sh (`x`, `y`, `z`)"),
    ([("a.sh", n, f"c{n}") for n in range(1, 6)] + [("b.sh", 9, "q")],
     "lines 1, 2, 3 and 2 more of a.sh (`c1`, `c2`, `c3`); line 9 of b.sh (`q`)"),
    ([("a.sh", 1, "p"), ("b.sh", 2, "q"), ("a.sh", 3, "r")], "lines 1 and 3 of a.sh (`p`, `r`); line 2 of b.sh (`q`)"),
    ([("a.sh", n, "c") for n in range(1, 5)], "lines 1, 2, 3 and 1 more of a.sh (`c`, `c`, `c`)"),
])
def test_describe_names_the_lines_of_each_file(notes: list[tuple[str, int, str]], text: str) -> None:
    assert describe(tuple(Note(file, line, command, "why", "unread") for file, line, command in notes)) == text


def test_parent_folders_outermost_first() -> None:
    assert parent_folders("a/b/c.py") == ["a", "a/b"] and parent_folders("c.py") == []


@pytest.mark.parametrize(("files", "where", "message"), [
    ({}, "context", "no Dockerfile at the context root"),
    ({"Dockerfile": b"FROM base\n\xff\xfe\n"}, "Dockerfile", "not UTF-8 text"),
])
def test_a_context_without_a_readable_dockerfile_is_refused(files: dict[str, str | bytes], where: str,
                                                            message: str) -> None:
    with pytest.raises(ShippingError) as raised:
        plan_of(files)
    assert (raised.value.where, raised.value.message) == (where, message)


def test_only_the_dockerfile_and_scripts_are_held_to_the_script_size() -> None:
    # A vendor drop carries wheels and weights far past it: those are copied, never read as a script.
    wheel = b"PK\x03\x04" + b"\0" * (2 << 20)
    plan = plan_of(script_context("cp dist/vllm.whl /opt/\n") | {"s/dist/vllm.whl": wheel, "a/weights.bin": wheel})
    assert plan.image["/opt/vllm.whl"].source == "s/dist/vllm.whl" and plan.notes == ()


def test_a_dockerfile_with_a_byte_order_mark_is_read() -> None:
    plan = plan_of({"Dockerfile": "\ufeffFROM base\nCOPY main.py /m.py\n".encode("utf-8"), "main.py": ""})
    assert plan.image["/m.py"].source == "main.py"


@pytest.mark.parametrize(("data", "placed"), [
    ("cp x.py /a.py\n".encode(), True),
    ("\ufeffcp x.py /a.py\n".encode(), False),  # sh reads the byte-order mark as part of 'cp': not found
    (b"# \xe9t\xe9\ncp x.py /a.py\n", True),  # not UTF-8: read as Latin-1, as sh reads bytes
    (b"cp x.py /a.py\n\x00", False),  # a binary is not read as a script
    (b"cp x.py /a.py\n" + b"#" * 9000 + b"\x00", True),  # only the head is looked at for NUL bytes
])
def test_a_script_is_read_as_text_whatever_its_encoding(data: bytes, placed: bool) -> None:
    plan = plan_of(script_context("", files=None) | {"s/i.sh": data})
    assert ("/a.py" in plan.image) is placed


@pytest.mark.parametrize("first", ["#!/bin/bash", "#!/usr/bin/python3", "cp x.py /dest/first.py", "set -e", ""])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh", "./i.sh"])
def test_a_script_saved_with_a_byte_order_mark_fails_its_first_command_and_goes_on(first: str, run: str) -> None:
    # bash 5.2 and dash 0.5.12 read the mark as part of the first word ("\ufeff#!/bin/bash: not found"); the
    # kernel finds no '#!' in the first two bytes, so ./i.sh is run by sh, not by the interpreter it names.
    plan = run_script(f"\ufeff{first}\ncp x.py /dest/a.py\n", run)
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1)]
    assert plan.notes[0].reason.startswith("the script starts with a byte-order mark, which sh reads as part of")


def test_a_dockerignore_that_is_not_text_ignores_nothing() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY . /app/\n", "a.py": "", ".dockerignore": b"a.py\x00"})
    assert plan.ignored == () and plan.ships("a.py")
