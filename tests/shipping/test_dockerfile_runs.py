"""RUN lines run in the stage's SHELL, in their exec, shell or here-document form, with their --mount folders.

A RUN that fails as the reader follows it is noted (``docker build`` would
stop there). ``--mount=type=bind`` shows context or stage files at the
target for that RUN only; ``cache`` and ``tmpfs`` hide what stood there for
that RUN only; ``secret`` and ``ssh`` change no file; other types are
unread. A script a RUN starts is recorded with its directory and the
stage's ARG and ENV values.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of

CONTEXT = {"main.py": "", "pkg/a.py": "", "pkg/sub/b.py": "", "s.sh": "cp /src/main.py /ran.py\n"}
FAILS = "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted before it)"


def built(dockerfile: str):  # type: ignore[no-untyped-def]
    return plan_of({"Dockerfile": dockerfile, **CONTEXT})


def outcome(dockerfile: str) -> tuple[dict[str, str], list[tuple[str, int, str, str]]]:
    plan = built(dockerfile)
    return ({path: p.source for path, p in plan.image.items() if path != "/src/main.py"},
            [(n.kind, n.line, n.text, n.reason) for n in plan.notes])


@pytest.mark.parametrize(("run", "placed", "found"), [
    ('RUN ["cp", "/src/main.py", "/e.py"]', {"/e.py": "main.py"}, []),
    ('RUN ["sh", "-c", "cp /src/main.py /$0.py", "zero"]', {"/zero.py": "main.py"}, []),
    ("RUN <<EOF\ncp /src/main.py /h1.py\nEOF", {"/h1.py": "main.py"}, []),
    ("RUN <<EOF\nfalse\ncp /src/main.py /h2.py\nEOF", {"/h2.py": "main.py"}, []),
    ("RUN <<EOF bash\nset -e\nfalse\ncp /src/main.py /h3.py\nEOF", {}, [("fails", 3, "RUN <<EOF bash", FAILS)]),
    # Several here-documents and no command: the shell runs a command of redirections alone, which does nothing.
    ("RUN <<A <<B\ncp /src/main.py /ha.py\nA\ncp /src/main.py /hb.py\nB\nRUN cp /src/main.py /h6.py",
     {"/h6.py": "main.py"}, []),
    ("RUN <<A sh && <<B sh\ncp /src/main.py /ha.py\nA\ncp /src/main.py /hb.py\nB",
     {"/ha.py": "main.py", "/hb.py": "main.py"}, []),
    ("RUN <<EOF\ncp /src/main.py /h4.py\nfalse\nEOF\nRUN cp /src/main.py /h5.py",
     {"/h4.py": "main.py", "/h5.py": "main.py"}, [("fails", 4, "RUN <<EOF", FAILS)]),
    ("RUN false\nRUN cp /src/main.py /after.py", {"/after.py": "main.py"}, [("fails", 3, "RUN false", FAILS)]),
    ("RUN exit 1", {}, [("fails", 3, "RUN exit 1", FAILS)]),
    ('RUN ["sh", "-c", "exit 3"]', {}, [("fails", 3, 'RUN ["sh", "-c", "exit 3"]', FAILS)]),
    # exec is no program either: the exec form does not find it (not false failing).
    ('RUN ["exec", "false"]', {}, [("fails", 3, 'RUN ["exec", "false"]', "exec is a shell's own command, not a program "
                                    "the exec form can run, so 'docker build' stops here")]),
    ('RUN ["sh", "-c", "exit 0"]', {}, []),
    # 'exit' is no program: the exec form cannot run it.
    ('RUN ["exit", "0"]', {}, [("fails", 3, 'RUN ["exit", "0"]', "exit is a shell's own command, not a program the exec "
                                                                 "form can run, so 'docker build' stops here")]),
    ("RUN exit 0; cp /src/main.py /n.py", {}, []),
    ("RUN exit $CODE; cp /src/main.py /n.py", {}, []),
    ('SHELL ["/bin/bash", "-e", "-c"]\nRUN false; cp /src/main.py /no.py', {},
     [("fails", 4, "RUN false; cp /src/main.py /no.py", FAILS)]),
    ('SHELL ["/bin/bash", "-c"]\nRUN false; cp /src/main.py /yes.py', {"/yes.py": "main.py"}, []),
    ('SHELL ["/bin/sh", "-ec"]\nRUN <<EOF\nfalse\ncp /src/main.py /no.py\nEOF', {}, [("fails", 5, "RUN <<EOF", FAILS)]),
    ("RUN true && false || cp /src/main.py /or.py", {"/or.py": "main.py"}, []),
    # A lone here-document starting with '#!' is a file BuildKit runs by that line, not by SHELL.
    ("RUN <<EOF\n#!/bin/bash -e\nfalse\ncp /src/main.py /no.py\nEOF", {}, [("fails", 4, "RUN <<EOF", FAILS)]),
    ("RUN <<EOF\n#!/usr/bin/env python3\nimport shutil\nshutil.copy('/x.py', '/src/main.py')\nEOF", {},
     [("unread", 4, "RUN <<EOF", "python3 -c rewrites /src/main.py, which the build placed there")]),
])
def test_a_run_is_read_in_its_form_and_its_stages_shell(run: str, placed: dict[str, str],
                                                       found: list[tuple[str, int, str, str]]) -> None:
    assert outcome(f"FROM base\nCOPY main.py /src/\n{run}\n") == (placed, found)


@pytest.mark.parametrize(("run", "placed", "found"), [
    ("RUN --mount=type=bind,source=pkg,target=/m cp /m/a.py /a.py", {"/a.py": "pkg/a.py"}, []),
    ("RUN --mount=type=bind,src=main.py,dst=/m.py cp /m.py /b.py", {"/b.py": "main.py"}, []),
    ("RUN --mount=target=/m cp /m/main.py /c.py", {"/c.py": "main.py"}, []),
    ("WORKDIR /w\nRUN --mount=type=bind,source=pkg,destination=m cp m/a.py /d.py", {"/d.py": "pkg/a.py"}, []),
    ("RUN --mount=type=bind,source=/pkg/sub,target=/m cp /m/b.py /e.py\nRUN cp /m/b.py /f.py || true",
     {"/e.py": "pkg/sub/b.py"}, []),
    ("RUN --mount=type=bind,source=nothere,target=/m true", {}, []),
    ("RUN --mount=type=cache,target=/root/.cache pip install x", {}, []),
    # A cache or tmpfs mount hides what stood there during its RUN, and gives it back after.
    ("COPY main.py /cache/m.py\nRUN --mount=type=cache,target=/cache cp /cache/m.py /g.py\nRUN cp /cache/m.py /h.py",
     {"/cache/m.py": "main.py", "/h.py": "main.py"}, []),
    ("COPY main.py /t/m.py\nRUN --mount=type=tmpfs,target=/t rm -rf /t/m.py", {"/t/m.py": "main.py"}, []),
    ("COPY main.py /t/m.py\nRUN --mount=type=tmpfs,target=/t cp /t/m.py /g.py || true\nRUN cp /t/m.py /h.py",
     {"/t/m.py": "main.py", "/h.py": "main.py"}, []),
    ("COPY main.py /t/m.py\nRUN --mount=type=tmpfs,target=/t cp /src/main.py /t/n.py\nRUN cp /t/n.py /h.py || true",
     {"/t/m.py": "main.py"}, []),
    ("RUN --mount=type=bind,source=pkg,target=/m cp /m/a.py /m/x.py\nRUN cp /m/x.py /i.py || true", {}, []),
    # What the base image holds under the folder is unknown again after the RUN, not removed.
    ("RUN --mount=type=cache,target=/opt/cache true\nRUN if [ -f /opt/cache/keep.py ]; then cp /src/main.py /y.py; "
     "else cp /src/main.py /n.py; fi", {"/y.py": "main.py", "/n.py": "main.py"},
     [("assumed", 4, "[ -f /opt/cache/keep.py ]", "the base image decides whether this holds: the reader follows "
                                                  "the branch for 'yes', then the one for 'no'")]),
    # ...and what the build removed beside the folder stays removed.
    ("RUN rm -rf /opt/old\nRUN --mount=type=tmpfs,target=/t true\nRUN if [ -e /opt/old/keep.py ]; then "
     "cp /src/main.py /y.py; else cp /src/main.py /n.py; fi", {"/n.py": "main.py"}, []),
    # Only the mount folder is given back: what the RUN changes beside it stays, whatever the folder's name.
    ("COPY main.py /opt/m.py\nRUN --mount=type=cache,target=/opt/X rm /opt/m.py", {}, []),
    ("COPY main.py /opt/m.py\nCOPY pkg/a.py /src/\nRUN --mount=type=tmpfs,target=/opt/tmp/ cp /src/a.py /opt/tmp/ "
     "&& cp /src/a.py /opt/m.py", {"/opt/m.py": "pkg/a.py", "/src/a.py": "pkg/a.py"}, []),
    ("RUN --mount=type=secret,id=x cat /run/secrets/x", {}, []),
    ("RUN --mount=type=ssh ls", {}, []),
    ("RUN --mount=type=weird,target=/w true", {},
     [("unread", 3, "RUN --mount=type=weird,target=/w true", "--mount=type=weird,target=/w, which the reader does "
                                                             "not follow")]),
    ("RUN --mount=type=cache true", {},
     [("unread", 3, "RUN --mount=type=cache true", "--mount=type=cache, which the reader does not follow")]),
    ("RUN --mount=type=bind,from=img:1,source=/x,target=/m cp /m/a /f.py", {},
     [("unread", 3, "RUN --mount=type=bind,from=img:1,source=/x,target=/m cp /m/a /f.py",
       "mounts files of the image img:1, which the reader cannot see")]),
    ("RUN --mount cp a b", {}, []),
    ("RUN --network=none --security=insecure true", {}, []),
    # Each --mount is read, whatever flags come before it.
    ("RUN --network=none --mount=type=secret,id=x --mount=type=bind,source=pkg,target=/m cp /m/a.py /a.py",
     {"/a.py": "pkg/a.py"}, []),
])
def test_a_run_mount_shows_files_during_that_run_only(run: str, placed: dict[str, str],
                                                      found: list[tuple[str, int, str, str]]) -> None:
    plan = built(f"FROM base\nCOPY main.py /src/\n{run}\n")
    assert {path: p.source for path, p in plan.image.items() if path != "/src/main.py"} == placed
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes if n.kind != "fails"] == found


@pytest.mark.parametrize("mount", ["type=cache,target=/cache", "type=cache,target=/w/cache"])
def test_a_cache_mount_holds_what_earlier_builds_left_there(mount: str) -> None:
    # A warm cache may hold m.py: 'cp' from it is not known to fail (a tmpfs, which starts empty, would be), and
    # the reader goes on to the copy after it. (/w is the build's own folder: the cache still is not.)
    target = mount.split("target=")[1]
    plan = built(f"FROM base\nCOPY main.py /src/\nRUN mkdir /w\nRUN --mount={mount} cp {target}/m.py /g.py "
                 "&& cp /src/main.py /after.py\n")
    assert {path: p.source for path, p in plan.image.items()} == {"/src/main.py": "main.py", "/after.py": "main.py"}
    assert not [n for n in plan.notes if n.kind == "fails"]


@pytest.mark.parametrize(("first", "second"), [
    ("type=cache,target=/cache", "type=cache,target=/cache"),
    ("type=cache,id=pip,target=/a", "type=cache,id=pip,target=/b"),  # the id names the cache, not the target
    ("type=cache,id=/b,target=/a", "type=cache,target=/b"),  # a cache without an id is its target's
])
def test_a_later_run_finds_what_an_earlier_one_left_in_the_same_cache(first: str, second: str) -> None:
    there = second.split("target=")[1]
    plan = built(f"FROM base\nCOPY main.py /src/\nRUN --mount={first} cp /src/main.py {first.split('target=')[1]}/\n"
                 f"RUN --mount={second} cp {there}/main.py /k.py\n")
    assert {path: p.source for path, p in plan.image.items()} == {"/src/main.py": "main.py", "/k.py": "main.py"}
    cache = "pip" if "id=pip" in first else there
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 4, f"the cache {cache} is taken to hold what this build's earlier RUNs left in it (main.py)")]


@pytest.mark.parametrize("second", ["type=cache,target=/other", "type=cache,id=x,target=/cache", "type=tmpfs,target=/cache"])
def test_another_cache_or_a_tmpfs_does_not_hold_what_a_run_left_in_a_cache(second: str) -> None:
    plan = built("FROM base\nCOPY main.py /src/\nRUN --mount=type=cache,target=/cache cp /src/main.py /cache/\n"
                 f"RUN --mount={second} cp {second.split('target=')[1]}/main.py /k.py || true\n"
                 "RUN cp /cache/main.py /after.py || true\n")  # nor does the image, once the RUN is over
    assert {path: p.source for path, p in plan.image.items()} == {"/src/main.py": "main.py"}
    assert not [n for n in plan.notes if n.kind == "assumed"]


def test_a_bind_mount_over_a_placed_folder_gives_it_back_afterwards() -> None:
    plan = built("FROM base\nCOPY pkg/sub /m\nRUN --mount=type=bind,source=pkg,target=/m cp /m/a.py /a.py\n"
                 "RUN cp /m/b.py /b.py\n")
    assert {path: p.source for path, p in plan.image.items()} == {
        "/m/b.py": "pkg/sub/b.py", "/a.py": "pkg/a.py", "/b.py": "pkg/sub/b.py"}


def test_a_bind_mount_hides_only_its_own_folder() -> None:
    # The files the build placed elsewhere are there during the RUN and after it.
    plan = built("FROM base\nCOPY main.py /app/\n"
                 "RUN --mount=type=bind,source=pkg,target=/tmp/pkg "
                 "cp /tmp/pkg/a.py /app/ && cp /app/main.py /app/m.py\n")
    assert {path: p.source for path, p in plan.image.items()} == {
        "/app/main.py": "main.py", "/app/a.py": "pkg/a.py", "/app/m.py": "main.py"}
    assert plan.notes == ()


@pytest.mark.parametrize(("mount", "placed"), [
    ("from=b,source=/p,target=/m", {"/g/a.py": "pkg/a.py", "/g/sub/b.py": "pkg/sub/b.py"}),
    ("type=bind,from=0,target=/m", {"/g/p/a.py": "pkg/a.py", "/g/p/sub/b.py": "pkg/sub/b.py", "/g/m.py": "main.py"}),
    ("from=B,src=/p/sub,target=/m", {"/g/b.py": "pkg/sub/b.py"}),
])
def test_a_bind_mount_from_a_stage_shows_what_that_stage_holds(mount: str, placed: dict[str, str]) -> None:
    plan = built(f"FROM base AS b\nCOPY pkg /p\nCOPY main.py /m.py\nFROM base\nRUN mkdir /g\n"
                 f"RUN --mount={mount} cp -r /m/. /g/\n")
    assert {path: p.source for path, p in plan.image.items()} == placed
    assert plan.dockerfile.stages[1].uses == (0,) and plan.notes == ()


def test_a_bind_mount_from_a_stage_keeps_each_name_below_its_source_whole() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS conf\nCOPY x11 /etc/X11\nFROM base\nRUN mkdir /g\n"
                                  "RUN --mount=from=conf,source=/etc,target=/m cp -r /m/. /g/\n",
                    "x11/xorg.conf": "", "x11/Xsession": ""})
    assert {path: p.source for path, p in plan.image.items()} == {
        "/g/X11/xorg.conf": "x11/xorg.conf", "/g/X11/Xsession": "x11/Xsession"}


@pytest.mark.parametrize("workdir", ["/workspace/app", "/workspace/app/", "app"])
def test_a_workdir_makes_its_folder_so_a_copy_there_lands_inside_it(workdir: str) -> None:
    # BuildKit creates a WORKDIR that is not there: `cp FILE .` (or the folder's path) copies into it.
    placed, found = outcome(f"FROM base\nCOPY main.py /src/\nRUN mkdir /workspace\nWORKDIR /workspace\n"
                            f"WORKDIR {workdir}\nRUN cp /src/main.py . && cp /src/main.py /workspace/app\n")
    assert (placed, found) == ({"/workspace/app/main.py": "main.py"}, [])


def test_each_script_a_run_starts_is_recorded_with_its_directory_and_environment() -> None:
    plan = built("FROM base\nARG A=1\nARG UNSET\nENV B=2 A=3\nCOPY s.sh /s/s.sh\nCOPY main.py /src/\nWORKDIR /s\n"
                 "RUN ./s.sh\nRUN ./s.sh && ./s.sh\nRUN /s/s.sh\n")
    assert [(r.script, r.cwd, r.line, dict(r.environment)) for r in plan.dockerfile.runs] == [
        ("/s/s.sh", "/s", 8, {"A": "3", "B": "2"}), ("/s/s.sh", "/s", 9, {"A": "3", "B": "2"}),
        ("/s/s.sh", "/s", 10, {"A": "3", "B": "2"})]
    assert plan.image["/ran.py"].source == "main.py"
    assert [(s.path, s.image_path, s.run_line) for s in plan.scripts] == [
        ("s.sh", "/s/s.sh", 8), ("s.sh", "/s/s.sh", 9), ("s.sh", "/s/s.sh", 10)]
    assert [len(s.body.copies) for s in plan.scripts] == [1, 2, 1]  # one RUN's two runs, told as one


@pytest.mark.parametrize(("dockerfile", "stages", "final", "shipping"), [
    ("FROM base AS b\nCOPY main.py /m.py\nFROM base AS c\nCOPY main.py /c.py\nFROM b\nCOPY --from=c /c.py /d.py\n",
     [(0, "b", "base", 1, None, ()), (1, "c", "base", 3, None, ()), (2, None, "b", 5, 0, (1,))], 2, [0, 1, 2]),
    ("FROM base AS b\nCOPY main.py /m.py\nFROM base AS unused\nCOPY pkg /u\nFROM b AS final\n",
     [(0, "b", "base", 1, None, ()), (1, "unused", "base", 3, None, ()), (2, "final", "b", 5, 0, ())], 2, [0, 2]),
    ("FROM base AS b\nFROM base AS c\nRUN --mount=from=b,target=/m true\nCOPY --from=b /x /y\nFROM c\n",
     [(0, "b", "base", 1, None, ()), (1, "c", "base", 2, None, (0,)), (2, None, "c", 5, 1, ())], 2, [0, 1, 2]),
    ("FROM base AS b\nFROM base\nCOPY --from=img /x /y\n",
     [(0, "b", "base", 1, None, ()), (1, None, "base", 2, None, ())], 1, [1]),
    ("FROM base AS a\nFROM a AS b\nFROM b AS c\nFROM base\n",
     [(0, "a", "base", 1, None, ()), (1, "b", "a", 2, 0, ()), (2, "c", "b", 3, 1, ()), (3, None, "base", 4, None, ())],
     3, [3]),
])
def test_stages_record_their_parent_and_the_stages_they_use(dockerfile: str, stages: list[object], final: int,
                                                            shipping: list[int]) -> None:
    plan = built(dockerfile)
    assert [(s.index, s.name, s.base, s.line, s.parent, s.uses) for s in plan.dockerfile.stages] == stages
    assert plan.dockerfile.final == final and sorted(plan.dockerfile.shipping_stages()) == shipping


def test_target_decides_which_stages_ship() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS a\nFROM a AS b\nFROM base AS c\n", **CONTEXT}, "B")
    assert plan.dockerfile.final == 1 and sorted(plan.dockerfile.shipping_stages()) == [0, 1]


def test_a_stage_built_from_an_earlier_one_keeps_its_workdir_env_and_shell() -> None:
    placed, found = outcome("FROM base AS b\nWORKDIR /w\nENV X=/x\nSHELL [\"/bin/bash\", \"-e\", \"-c\"]\nFROM b\n"
                            "COPY main.py /src/\nRUN cp /src/main.py rel.py; false; cp /src/main.py $X.py\n")
    assert placed == {"/w/rel.py": "main.py"}
    assert found == [("fails", 7, "RUN cp /src/main.py rel.py; false; cp /src/main.py $X.py", FAILS)]


@pytest.mark.parametrize(("copy", "placed", "found"), [
    ("COPY --from=b /p* /q/", {"/q/a.py": "pkg/a.py", "/q/sub/b.py": "pkg/sub/b.py"}, []),
    ("COPY --from=b /p*/sub /q/", {"/q/b.py": "pkg/sub/b.py"}, []),
    ("COPY --from=b /*.py /q/", {"/q/m.py": "main.py"}, []),
    ("COPY --from=b /m.py /p/sub/b.py /r/", {"/r/m.py": "main.py", "/r/b.py": "pkg/sub/b.py"}, []),
    ("COPY --from=b /p /t", {"/t/a.py": "pkg/a.py", "/t/sub/b.py": "pkg/sub/b.py"}, []),
    ("COPY --from=b /p/ /t/", {"/t/a.py": "pkg/a.py", "/t/sub/b.py": "pkg/sub/b.py"}, []),
    ("COPY --from=b m.py /u.py", {"/u.py": "main.py"}, []),
    ("RUN mkdir /v\nCOPY --from=b /m.py /v", {"/v/m.py": "main.py"}, []),
    ("COPY --from=b /o.txt /u.txt", {}, []),
    ("COPY main.py /w.py\nCOPY --from=b /o.txt /w.py", {}, []),
    ("COPY --from=b /nothere /s/", {},
     [("unread", 6, "COPY --from=b /nothere /s/", "copies /nothere of b, which only its base image holds: the reader "
                                                   "cannot see what that is")]),
    ("COPY --from=b /x /m.py /s/", {"/s/m.py": "main.py"},
     [("unread", 6, "COPY --from=b /x /m.py /s/", "copies /x of b, which only its base image holds: the reader "
                                                  "cannot see what that is")]),
])
def test_copy_from_a_stage_takes_what_that_stage_holds(copy: str, placed: dict[str, str],
                                                      found: list[tuple[str, int, str, str]]) -> None:
    plan = built(f"FROM base AS b\nCOPY pkg /p\nCOPY main.py /m.py\nRUN echo x > /o.txt\nFROM base\n{copy}\n")
    assert {path: p.source for path, p in plan.image.items()} == placed
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == found


def test_a_mount_of_an_images_files_is_a_caveat_only_for_what_is_under_the_mount() -> None:
    # What the unseen files are can change only the mount's folder (given back after the RUN) and what the
    # command writes from them; a file placed elsewhere and left alone keeps its answer without a caveat.
    plan = built("FROM base\nCOPY main.py /app/main.py\nCOPY pkg/a.py /m/a.py\n"
                 "RUN --mount=type=bind,from=tools:1,target=/m ls /m\n")
    assert [(n.kind, n.line, n.scope) for n in plan.notes] == [("unread", 4, ("/m",))]
    assert plan.caveats("main.py", ("/app/main.py",)) == ()
    assert [n.line for n in plan.caveats("pkg/a.py", ("/m/a.py",))] == [4]


@pytest.mark.parametrize("builtin", ["eval", "export", "source", "set"])
def test_an_exec_form_run_of_a_shell_builtin_fails_the_build(builtin: str) -> None:
    # The exec form runs argv[0] from PATH with no shell; no image has these as programs.
    plan = plan_of({"Dockerfile": f'FROM base\nCOPY x.py /src/\nRUN ["{builtin}", "cp /src/x.py /dest/a.py"]\n',
                    "x.py": ""})
    assert "/dest/a.py" not in plan.image
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("fails", 3, f"{builtin} is a shell's own command, not a program the exec form can run, so 'docker build' "
                     "stops here")]


def test_a_bind_mount_after_a_cache_mount_is_laid_too() -> None:
    plan = built("FROM base\nRUN --mount=type=cache,target=/root/.cache --mount=type=bind,source=pkg,target=/m "
                 "cp /m/a.py /a.py\n")
    assert {path: p.source for path, p in plan.image.items()} == {"/a.py": "pkg/a.py"} and plan.notes == ()
