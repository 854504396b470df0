"""Multi-stage Dockerfiles: each FROM starts a stage; only the final one (or --target) is the image.

Docker's reference: a stage starts from its base with WORKDIR ``/`` (or the
WORKDIR, ENV and files of the earlier stage it is FROM); files reach it
from another stage only by ``COPY --from``; ``ARG`` before the first FROM
is seen by FROM lines only, unless a stage declares it again.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from tests.shipping.conftest import image_of, notes_of, plan_of

MAIN = {"main.py": "print('main')\n", "pkg/a.py": "", "pkg/sub/b.py": ""}


def build(dockerfile: str, **files: str) -> dict[str, str]:
    return {"Dockerfile": dockerfile, **MAIN, **files}


def test_each_stage_starts_at_the_root_not_at_the_previous_stage_workdir() -> None:
    image = image_of(build("FROM base AS one\nWORKDIR /build\nCOPY main.py .\n"
                           "FROM base\nCOPY main.py here.py\n"))
    assert image == {"/here.py": "main.py"}


def test_a_relative_destination_before_any_absolute_workdir_is_noted_as_the_base_images_to_decide() -> None:
    # BuildKit starts a stage in its base image's WORKDIR, which the reader cannot see; FROM scratch it is '/'.
    plan = plan_of(build("FROM base\nCOPY pkg ./pkg\nWORKDIR /app\nCOPY main.py .\nFROM scratch\nCOPY main.py m.py\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 2, "./pkg is relative and no absolute WORKDIR comes before it: the reader reads it from /, but it "
                       "starts from the base image's own WORKDIR if that sets one")]


def test_a_stage_from_an_earlier_stage_inherits_its_workdir_env_and_files() -> None:
    image = image_of(build("FROM base AS common\nWORKDIR /app\nENV DEST=/opt/dest\nCOPY pkg pkg\n"
                           "FROM common\nCOPY main.py .\nCOPY main.py $DEST/\n"))
    assert image == {"/app/pkg/a.py": "pkg/a.py", "/app/pkg/sub/b.py": "pkg/sub/b.py",
                     "/app/main.py": "main.py", "/opt/dest/main.py": "main.py"}


def test_stage_names_are_matched_without_case() -> None:
    image = image_of(build("FROM base AS Builder\nCOPY main.py /b/\nFROM BUILDER\nCOPY pkg/a.py /c/\n"))
    assert image == {"/b/main.py": "main.py", "/c/a.py": "pkg/a.py"}


def test_only_the_final_stage_ships() -> None:
    plan = plan_of(build("FROM base AS builder\nCOPY pkg /src/pkg\nFROM base\nCOPY main.py /app/\n"))
    assert {image: p.source for image, p in plan.image.items()} == {"/app/main.py": "main.py"}
    assert plan.ships("main.py") and not plan.ships("pkg/a.py")
    assert [s.index for s in plan.dockerfile.stages] == [0, 1] and plan.dockerfile.final == 1


def test_target_picks_the_stage_that_is_the_image() -> None:
    files = build("FROM base AS one\nCOPY main.py /one/\nFROM base AS two\nCOPY pkg/a.py /two/\n")
    assert image_of(files, "one") == {"/one/main.py": "main.py"}
    assert image_of(files, "TWO") == {"/two/a.py": "pkg/a.py"}
    with pytest.raises(ShippingError, match=r"no build stage named 'three' \(named stages: one, two\)"):
        plan_of(files, "three")


def test_copy_from_a_named_stage_follows_what_it_took_from_the_context() -> None:
    image = image_of(build(
        "FROM base AS builder\nWORKDIR /src\nCOPY pkg ./pkg\nRUN cp -r pkg /opt/built\n"
        "FROM base\nCOPY --from=builder /opt/built /usr/lib/python3/dist-packages/pkg\n"
        "COPY --from=builder /src/pkg/a.py /app/\n"))
    assert image == {"/usr/lib/python3/dist-packages/pkg/a.py": "pkg/a.py",
                     "/usr/lib/python3/dist-packages/pkg/sub/b.py": "pkg/sub/b.py",
                     "/app/a.py": "pkg/a.py"}


def test_copy_from_a_numbered_stage() -> None:
    image = image_of(build("FROM base\nCOPY main.py /stage0/\nFROM base\nCOPY --from=0 /stage0/main.py /final/m.py\n"))
    assert image == {"/final/m.py": "main.py"}


def test_copy_from_a_stage_sees_that_stage_as_it_ended() -> None:
    # The builder's script removes what it copied from the context and moves the rest: COPY --from sees the result.
    image = image_of(build(
        "FROM base AS builder\nRUN mkdir /w\nCOPY pkg /w/pkg\nRUN cd /w && rm -rf pkg/sub && mv pkg/a.py /w/moved.py\n"
        "FROM base\nCOPY --from=builder /w /app\n"))
    assert image == {"/app/moved.py": "pkg/a.py"}


@pytest.mark.parametrize(("source", "image"), [
    ("/X*/a.py", {"/app/a.py": "pkg/a.py"}),
    ("/Xtools/*.py", {"/app/a.py": "pkg/a.py"}),
    ("/*/sub", {"/app/b.py": "pkg/sub/b.py"}),
    ("/Xtools/s?b/b.py", {"/app/b.py": "pkg/sub/b.py"}),
])
def test_copy_from_a_stage_matches_wildcards_against_that_stages_paths(source: str, image: dict[str, str]) -> None:
    assert image_of(build(f"FROM base AS tools\nCOPY pkg /Xtools/\nFROM base\nCOPY --from=tools {source} /app/\n",
                          )) == image


def test_copy_from_an_image_brings_nothing_from_the_context() -> None:
    plan = plan_of(build("FROM base\nCOPY --from=vendor/tools:1 /opt/tools /opt/tools\nCOPY main.py /app/\n"))
    assert {image: p.source for image, p in plan.image.items()} == {"/app/main.py": "main.py"}
    assert plan.dockerfile.copies[0].origin == "image vendor/tools:1"


def test_copy_from_an_image_over_placed_files_is_noted_as_unread() -> None:
    plan = plan_of(build("FROM base\nCOPY pkg /opt/pkg\nCOPY --from=vendor/tools:1 /x /opt/pkg\n"))
    (note,) = [n for n in plan.notes if n.kind == "unread"]
    assert (note.line, note.scope) == (3, ("/opt/pkg",))
    assert "vendor/tools:1" in note.reason


def test_global_arg_is_seen_in_from_lines() -> None:
    plan = plan_of(build("ARG BASE=ubuntu\nARG TAG=22.04\nFROM ${BASE}:$TAG AS one\nFROM one\n"))
    assert [s.base for s in plan.dockerfile.stages] == ["ubuntu:22.04", "one"]
    assert plan.dockerfile.stages[1].parent == 0


def test_global_arg_is_not_seen_inside_a_stage_unless_declared_again() -> None:
    # FROM scratch: no base image could set DEST, so an undeclared $DEST is empty, as Docker makes it.
    assert image_of(build("ARG DEST=/opt/app\nFROM scratch\nCOPY main.py $DEST/\n")) == {"/main.py": "main.py"}
    assert image_of(build("ARG DEST=/opt/app\nFROM scratch\nARG DEST\nCOPY main.py $DEST/\n")) == {
        "/opt/app/main.py": "main.py"}
    # An in-stage default is used; a value given before FROM does not replace it.
    assert image_of(build("ARG DEST=/opt/app\nFROM scratch\nARG DEST=/srv\nCOPY main.py $DEST/\n")) == {
        "/srv/main.py": "main.py"}


def test_an_undeclared_variable_over_a_base_image_is_unread_not_guessed() -> None:
    # The base image's own ENV could set DEST: the reader does not take it as empty, nor as the global value.
    plan = plan_of(build("ARG DEST=/opt/app\nFROM base\nCOPY main.py $DEST/\n"))
    assert plan.image == {}
    assert notes_of(plan, "unread") == [("Dockerfile", 3, "COPY main.py $DEST/")]


def test_a_stage_from_an_earlier_stage_knows_its_variables_as_that_stage_does() -> None:
    # FROM a stage that is FROM scratch: still no base image could set DEST, so it is empty, as Docker makes it.
    image = image_of(build("FROM scratch AS rootfs\nCOPY main.py /app/\nFROM rootfs\nCOPY pkg/a.py /app$DEST/\n"))
    assert image == {"/app/main.py": "main.py", "/app/a.py": "pkg/a.py"}
    # FROM a stage over a base image: that image's ENV could set DEST in both stages.
    plan = plan_of(build("FROM base AS deps\nCOPY main.py /app/\nFROM deps\nCOPY pkg/a.py /app$DEST/\n"))
    assert notes_of(plan, "unread") == [("Dockerfile", 4, "COPY pkg/a.py /app$DEST/")]


def test_an_arg_without_a_default_is_the_build_args_to_give_not_empty() -> None:
    # 'docker build --build-arg DEST=...' sets it: even FROM scratch the reader cannot take it as empty.
    plan = plan_of(build("FROM scratch\nARG DEST\nCOPY main.py $DEST/app/\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 3, "its paths depend on $DEST, an ARG without a default: only 'docker build --build-arg' gives "
                      "it a value")]


def test_a_platform_arg_declared_in_a_stage_is_the_platforms_to_decide() -> None:
    # BuildKit sets TARGETARCH and the like from 'docker build --platform': the reader cannot know which wheel ships.
    plan = plan_of(build("FROM scratch\nARG TARGETARCH\nCOPY wheels/$TARGETARCH/main.py /app/main.py\n",
                         **{"wheels/amd64/main.py": "", "wheels/arm64/main.py": ""}))
    assert plan.image == {}
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 3, "its paths depend on $TARGETARCH, which BuildKit sets from the platform built for "
                      "('docker build --platform'; the machine's own by default)")]


def test_a_platform_arg_not_declared_in_the_stage_is_empty_there() -> None:
    # Like any global ARG, it reaches a stage only through an ARG line there (FROM scratch: nothing else sets it).
    assert image_of(build("FROM scratch\nCOPY main.py /app$TARGETARCH/\n")) == {"/app/main.py": "main.py"}


def test_a_global_arg_redeclared_in_one_stage_is_not_seen_in_the_next() -> None:
    image = image_of(build("ARG D=/d\nFROM scratch AS one\nARG D\nCOPY main.py $D/\n"
                           "FROM one\nCOPY pkg/a.py ${D:-/none}/\n"))
    assert image == {"/d/main.py": "main.py", "/none/a.py": "pkg/a.py"}


def test_env_overrides_an_arg_of_the_same_name() -> None:
    image = image_of(build("FROM base\nENV DEST=/from-env\nARG DEST=/from-arg\nCOPY main.py $DEST/\n"))
    assert image == {"/from-env/main.py": "main.py"}


def test_env_pairs_are_read_with_the_values_from_before_the_line() -> None:
    # Docker's example: ENV abc=bye def=$abc gives def the previous abc.
    image = image_of(build("FROM base\nENV A=/first\nENV A=/second B=$A\nCOPY main.py $B/\nCOPY pkg/a.py $A/\n"))
    assert image == {"/first/main.py": "main.py", "/second/a.py": "pkg/a.py"}


@pytest.mark.parametrize(("copy", "image_path"), [
    ("COPY main.py ${D:-/unset}/", "/d/main.py"),
    ("COPY main.py ${NONE:-/default}/", "/default/main.py"),
    ("COPY main.py /x${D:+/alt}/", "/x/alt/main.py"),
    ("COPY main.py /x${NONE:+/alt}/", "/x/main.py"),
    ("COPY main.py ${EMPTY:-/empty-default}/", "/empty-default/main.py"),
    ("COPY main.py /e${EMPTY-/dash}/", "/e/main.py"),
    ("COPY main.py \\$D/", "/$D/main.py"),
    ("COPY [\"main.py\", \"${D}/json/\"]", "/d/json/main.py"),
    ("COPY main.py '$D'/", "/$D/main.py"),
    ("COPY main.py \"$D\"/q/", "/d/q/main.py"),
])
def test_copy_substitutes_variables_as_docker_does(copy: str, image_path: str) -> None:
    assert image_of(build(f"FROM scratch\nENV D=/d EMPTY=\nARG NONE\n{copy}\n")) == {image_path: "main.py"}


def test_workdir_arg_and_env_values_are_substituted() -> None:
    image = image_of(build("FROM scratch\nARG ROOT=/srv\nENV APP=$ROOT/app\nWORKDIR $APP\nWORKDIR sub\n"
                           "COPY main.py .\n"))
    assert image == {"/srv/app/sub/main.py": "main.py"}


def test_run_lines_are_expanded_by_their_shell_not_by_docker() -> None:
    # Docker would make $D empty here (it is set by the RUN itself); the shell sets it first.
    image = image_of(build("FROM scratch\nCOPY main.py /src/\nRUN D=/dest; mkdir -p $D && cp /src/main.py $D/\n"
                           "RUN cp /src/main.py '/single/$D.py'\n"))
    assert image == {"/src/main.py": "main.py", "/dest/main.py": "main.py", "/single/$D.py": "main.py"}


def test_run_sees_arg_and_env_values_as_its_environment() -> None:
    image = image_of(build("FROM scratch\nARG TO=/arg\nENV ALSO=/env\nCOPY main.py /src/\n"
                           "RUN cp /src/main.py $TO.py && cp /src/main.py ${ALSO}.py\n"))
    assert image == {"/src/main.py": "main.py", "/arg.py": "main.py", "/env.py": "main.py"}


def test_a_bind_mount_shows_context_files_only_during_its_run() -> None:
    image = image_of(build("FROM base\nRUN --mount=type=bind,source=pkg,target=/mnt/pkg cp -r /mnt/pkg /opt/pkg\n"
                           "RUN cp /mnt/pkg/a.py /late.py || true\n"))
    assert image == {"/opt/pkg/a.py": "pkg/a.py", "/opt/pkg/sub/b.py": "pkg/sub/b.py"}


@pytest.mark.parametrize("mount", ["type=cache,target=/cache", "type=tmpfs,target=/cache"])
def test_a_file_written_outside_a_mount_point_is_still_there_after_the_run(mount: str) -> None:
    # Only what stood under the mount point is put back after the RUN; x.txt, written elsewhere (before, or by
    # the RUN itself), stays: 'cat' finds it, and no '|| cp' runs.
    plan = plan_of(build("FROM base\nCOPY main.py /main.py\nRUN mkdir /out && echo hi > /out/x.txt\n"
                         f"RUN --mount={mount} echo hi > /out/y.txt\n"
                         "RUN cat /out/x.txt || cp /main.py /x-failed.py\n"
                         "RUN cat /out/y.txt || cp /main.py /y-failed.py\n"))
    assert {path: placed.source for path, placed in plan.image.items()} == {"/main.py": "main.py"}
    assert not any(n.kind == "fails" for n in plan.notes)


def test_a_bind_mount_from_a_stage() -> None:
    image = image_of(build("FROM base AS b\nCOPY pkg /p\nFROM base\n"
                           "RUN --mount=type=bind,from=b,source=/p,target=/m cp /m/a.py /a.py\n"))
    assert image == {"/a.py": "pkg/a.py"}


FINAL = "FROM base\nRUN mkdir /app\nCOPY main.py /main.py\n"


@pytest.mark.parametrize("reach", [
    "COPY --from=b /out /app/\nRUN cat /app/sub/x.txt && [ -d /app/sub/empty ] && cp /main.py /app/ok.py",
    "RUN --mount=type=bind,from=b,source=/out,target=/o cat /o/sub/x.txt && [ -d /o/sub/empty ] && "
    "cp /main.py /app/ok.py",
    "RUN --mount=type=bind,from=b,source=/out/sub/x.txt,target=/o.txt cat /o.txt && cp /main.py /app/ok.py",
])
def test_what_a_stage_wrote_itself_reaches_a_later_stage_with_its_folders(reach: str) -> None:
    # A folder COPY --from (or a bind mount of it) carries every file and folder the stage made, not only those
    # it took from the context: 'cat' finds x.txt, and the RUN goes on.
    plan = plan_of(build("FROM base AS b\nRUN mkdir -p /out/sub/empty && echo hi > /out/sub/x.txt\n"
                         f"{FINAL}{reach}\n"))
    assert {path: placed.source for path, placed in plan.image.items()} == {
        "/main.py": "main.py", "/app/ok.py": "main.py"}
    assert plan.notes == ()


def test_a_mount_of_a_folder_the_stage_made_shows_nothing_else() -> None:
    plan = plan_of(build("FROM base AS b\nRUN mkdir /out && echo hi > /out/x.txt\n"
                         f"{FINAL}RUN --mount=type=bind,from=b,source=/out,target=/o cat /o/y.txt || "
                         "cp /main.py /app/failed.py\n"))
    assert "/app/failed.py" in plan.image


def test_a_mount_of_a_folder_of_the_stages_base_image_may_hold_more() -> None:
    # /opt/stuff is the base image's: what else it holds the reader cannot see, so y.txt is not known missing.
    plan = plan_of(build(f"FROM base AS b\nCOPY main.py /opt/stuff/\n{FINAL}"
                         "RUN --mount=type=bind,from=b,source=/opt/stuff,target=/o cat /o/y.txt || "
                         "cp /main.py /app/failed.py\n"))
    assert not any(n.kind == "fails" for n in plan.notes)


def test_a_heredoc_run_is_read_as_a_script() -> None:
    image = image_of(build("FROM base\nCOPY main.py /src/\nRUN <<EOF\nset -e\nmkdir -p /opt/x\n"
                           "cp /src/main.py /opt/x/\nEOF\n"))
    assert image["/opt/x/main.py"] == "main.py"


def test_copy_of_a_heredoc_replaces_what_was_placed() -> None:
    image = image_of(build("FROM base\nCOPY main.py /app/main.py\nCOPY <<EOF /app/main.py\nprint('other')\nEOF\n"))
    assert image == {}


def test_continuation_lines_with_comments_and_an_escape_directive() -> None:
    image = image_of(build("# escape=`\nFROM base\nCOPY main.py `\n  # a comment inside\n  /app/\n"))
    assert image == {"/app/main.py": "main.py"}


def test_a_stage_from_an_earlier_stage_runs_that_stages_onbuild_triggers_first() -> None:
    """BuildKit runs the ONBUILD lines of the parent stage at the start of a stage FROM it, not in the parent."""
    dockerfile = ("FROM base AS builder\nONBUILD COPY pkg /opt/pkg\nONBUILD RUN cp /opt/pkg/a.py /opt/first.py\n"
                  "COPY main.py /app/\nFROM builder AS image\nRUN cp /opt/pkg/a.py /opt/second.py\n")
    plan = plan_of(build(dockerfile))
    assert {path: placed.source for path, placed in plan.image.items()} == {
        "/app/main.py": "main.py", "/opt/pkg/a.py": "pkg/a.py", "/opt/pkg/sub/b.py": "pkg/sub/b.py",
        "/opt/first.py": "pkg/a.py", "/opt/second.py": "pkg/a.py"}
    assert plan.copy_counts == {2: 2, 4: 1} and plan.notes == ()
    # The parent itself does not run them, nor does a stage FROM an image, nor a grandchild.
    assert image_of(build(dockerfile + "FROM builder\n", **{}), target="builder") == {"/app/main.py": "main.py"}
    assert "/opt/pkg/a.py" not in image_of(build("FROM base AS b\nONBUILD COPY pkg /opt/pkg\nFROM base\n"))
    grandchild = image_of(build("FROM base AS b\nONBUILD COPY main.py /once/\nFROM b AS c\nRUN rm /once/main.py\n"
                                "FROM c\n"))
    assert grandchild == {}


@pytest.mark.parametrize("dockerfile", [
    "FROM base\nONBUILD ONBUILD RUN x\n",
    "FROM base\nONBUILD FROM other\n",
    "FROM base\nONBUILD MAINTAINER me\n",
    "FROM base\nONBUILD\n",
    "FROM base\nONBUILD FETCH x\n",
])
def test_an_onbuild_trigger_docker_refuses_is_refused(dockerfile: str) -> None:
    with pytest.raises(ShippingError, match="cannot be parsed: line 2: (ONBUILD needs|.* is not allowed as an ONBUILD)"):
        plan_of(build(dockerfile))


@pytest.mark.parametrize("dockerfile", [
    "COPY main.py /x/\n",  # an instruction before any FROM
    "FROM base\nFETCH main.py /x/\n",  # an instruction Docker does not know
    "FROM base\nCOPY main.py\n",  # a COPY without a destination
    "FROM base\nENV\n",
])
def test_a_dockerfile_docker_refuses_is_refused(dockerfile: str) -> None:
    with pytest.raises(ShippingError, match="cannot be parsed: line"):
        plan_of(build(dockerfile))
