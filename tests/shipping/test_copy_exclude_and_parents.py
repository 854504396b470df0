"""``COPY --exclude`` leaves files out and ``COPY --parents`` keeps their folders, as BuildKit copies them.

An ``--exclude`` pattern is a ``.dockerignore`` pattern matched against each
file's path below the source it is copied from (moby/buildkit#5509); a
source itself, a file named or matched by a wildcard, is never left out
(moby/buildkit#5489: the reader copies it and notes the line as unread,
since BuildKit's reference says otherwise). ``--parents`` keeps each
source's folders below the context root or a ``/./`` pivot, into a
destination that is always a folder.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from tests.shipping.conftest import image_of, notes_of, plan_of

CONTEXT = {"main.py": "", "notes.md": "", "pkg/a.py": "", "pkg/a.pyc": "", "pkg/sub/b.py": "", "pkg/sub/b.pyc": "",
           "pkg/sub/deep/c.py": "", "pkg/docs/d.md": ""}
SCRIPTS = "/workspace/qwen3_6_scripts"
COREX = "/usr/local/corex/lib/python3/dist-packages/vllm"
TARGET = "vllm/attention/ops/paged_attn.py"


def copied(line: str) -> dict[str, str]:
    """Image path -> context file, for a Dockerfile that is FROM base and LINE."""
    return image_of({**CONTEXT, "Dockerfile": f"FROM base\n{line}\n"})


@pytest.mark.parametrize(("line", "image"), [
    # Patterns match below the source: '*.pyc' is pkg/a.pyc only, '**/*.pyc' every one.
    ("COPY --exclude=*.pyc pkg /d/", {"/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py",
                                      "/d/sub/b.pyc": "pkg/sub/b.pyc", "/d/sub/deep/c.py": "pkg/sub/deep/c.py",
                                      "/d/docs/d.md": "pkg/docs/d.md"}),
    ("COPY --exclude=**/*.pyc --exclude=docs pkg/ /d", {"/d/a.py": "pkg/a.py", "/d/sub/b.py": "pkg/sub/b.py",
                                                        "/d/sub/deep/c.py": "pkg/sub/deep/c.py"}),
    # A folder pattern leaves out all below it; '!' takes back what an earlier pattern left out.
    ("COPY --exclude=sub --exclude=!sub/deep pkg /d/", {"/d/a.py": "pkg/a.py", "/d/a.pyc": "pkg/a.pyc",
                                                        "/d/sub/deep/c.py": "pkg/sub/deep/c.py",
                                                        "/d/docs/d.md": "pkg/docs/d.md"}),
    # Below the context root, the patterns match paths from the root: 'pkg/*.py' is pkg/a.py only.
    ("COPY --exclude=pkg/*.py* --exclude=*.md --exclude=pkg/sub/deep . /d/",
     {"/d/Dockerfile": "Dockerfile", "/d/main.py": "main.py", "/d/pkg/sub/b.py": "pkg/sub/b.py",
      "/d/pkg/sub/b.pyc": "pkg/sub/b.pyc", "/d/pkg/docs/d.md": "pkg/docs/d.md"}),
    # A folder a wildcard matches is a source too: the patterns match below it.
    ("COPY --exclude=b.py pkg/s* /d/", {"/d/b.pyc": "pkg/sub/b.pyc", "/d/deep/c.py": "pkg/sub/deep/c.py"}),
    # A file named as a source is copied whatever the patterns.
    ("COPY --exclude=main.py --exclude=*.py main.py /d/", {"/d/main.py": "main.py"}),
    ("ADD --exclude=*.py pkg/sub /d/", {"/d/b.pyc": "pkg/sub/b.pyc", "/d/deep/c.py": "pkg/sub/deep/c.py"}),
    # An empty pattern is dropped.
    ("COPY --exclude= pkg/docs /d/", {"/d/d.md": "pkg/docs/d.md"}),
])
def test_exclude_leaves_out_what_its_patterns_match_below_each_source(line: str, image: dict[str, str]) -> None:
    assert copied(line) == image


def test_a_file_a_wildcard_matches_is_copied_and_its_line_noted_when_a_pattern_names_it() -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY --exclude=*.pyc pkg/a.py* /d/\n"})
    assert {image: placed.source for image, placed in plan.image.items()} == {"/d/a.py": "pkg/a.py",
                                                                              "/d/a.pyc": "pkg/a.pyc"}
    assert notes_of(plan, "unread") == [("Dockerfile", 2, "COPY --exclude=*.pyc pkg/a.py* /d/")]
    assert "BuildKit copies it" in plan.notes[0].reason
    quiet = plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY --exclude=*.md pkg/a.py* /d/\n"})
    assert notes_of(quiet, "unread") == [] and len(quiet.image) == 2


def test_a_stage_file_a_wildcard_matches_is_copied_and_noted_as_a_caveat_for_the_destination_only() -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base AS build\nCOPY pkg /out/\nFROM base\nCOPY main.py /app/\n"
                                             "COPY --from=build --exclude=*.pyc /out/a.py* /d/\n"})
    assert {image: placed.source for image, placed in plan.image.items()} == {
        "/app/main.py": "main.py", "/d/a.py": "pkg/a.py", "/d/a.pyc": "pkg/a.pyc"}
    assert [(n.kind, n.line, n.scope) for n in plan.notes] == [("unread", 5, ("/d",))]
    assert plan.caveats("main.py", ("/app/main.py",)) == ()


def test_a_folder_whose_files_are_all_left_out_is_still_made() -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY --exclude=* pkg/docs /d\nRUN cp /main.py /d\n"})
    assert plan.image == {} and plan.copy_counts[2] == 0
    # /d is a folder from then on: a file copied to /d lands inside it, not as /d.
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY --exclude=* pkg/docs /d\nCOPY main.py /d\n"})
    assert {path: placed.source for path, placed in plan.image.items()} == {"/d/main.py": "main.py"}
    assert plan.notes == ()  # known to be a folder, not taken to be one of the base image


def test_exclude_applies_to_a_copy_from_another_stage() -> None:
    dockerfile = "FROM base AS build\nCOPY pkg /out/\nFROM base\nCOPY --from=build --exclude=sub/** /out /app/\n"
    assert image_of({**CONTEXT, "Dockerfile": dockerfile}) == {
        "/app/a.py": "pkg/a.py", "/app/a.pyc": "pkg/a.pyc", "/app/docs/d.md": "pkg/docs/d.md"}


def test_a_shipped_copy_left_out_by_exclude_is_not_what_the_image_runs() -> None:
    """The vendor's COPY of qwen3_6_scripts with its paged_attn.py left out: patch_ops.sh's cp finds nothing."""
    context = {
        "Dockerfile": "FROM bi100:v1.2.3\nRUN mkdir /workspace\nWORKDIR /workspace/\n"
                      "COPY --exclude=paged_attn.py ./qwen3_6_scripts /workspace/qwen3_6_scripts\n"
                      "RUN cd ./qwen3_6_scripts && ./patch_ops.sh\n",
        "qwen3_6_scripts/patch_ops.sh": f"cp ./paged_attn.py {COREX}/attention/ops/paged_attn.py\n",
        "qwen3_6_scripts/paged_attn.py": "x = 1\n",
        "paged_attn.py": "x = 1\n",
    }
    plan = plan_of(context)
    assert not plan.ships("qwen3_6_scripts/paged_attn.py") and plan.find(TARGET) == []
    kept = plan_of({**context, "Dockerfile": context["Dockerfile"].replace("--exclude=paged_attn.py",
                                                                           "--exclude=*.md")})
    assert kept.shipped_copy(TARGET) == "qwen3_6_scripts/paged_attn.py"
    assert kept.image[f"{SCRIPTS}/paged_attn.py"].source == "qwen3_6_scripts/paged_attn.py"


@pytest.mark.parametrize(("line", "why"), [
    ("COPY --exclude=$SKIP pkg /d/", "--exclude=$SKIP, whose variable BuildKit may or may not substitute"),
    ("COPY --exclude=/a.py pkg /d/", "--exclude=/a.py, a pattern BuildKit matches against no path below a source"),
    ("COPY --exclude=! pkg /d/", "--exclude=!, a pattern BuildKit matches against no path below a source"),
    ("ADD --parents pkg /d/", "--parents, which only COPY takes"),
    ("COPY --parents=maybe pkg /d/", "--parents=maybe, which is not a true or false BuildKit reads"),
])
def test_flags_the_reader_cannot_follow_leave_the_line_unread_with_the_reason(line: str, why: str) -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": f"FROM base\n{line}\n"})
    assert plan.image == {}
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("unread", 2, f"{line.split()[0]} with {why}")]


@pytest.mark.parametrize(("line", "image"), [
    ("COPY --parents pkg/sub/b.py main.py /d/", {"/d/pkg/sub/b.py": "pkg/sub/b.py", "/d/main.py": "main.py"}),
    # The destination is a folder, written with '/' or not.
    ("COPY --parents pkg/a.py /d", {"/d/pkg/a.py": "pkg/a.py"}),
    # A folder source keeps its own name and all below it.
    ("COPY --parents pkg/sub /d/", {"/d/pkg/sub/b.py": "pkg/sub/b.py", "/d/pkg/sub/b.pyc": "pkg/sub/b.pyc",
                                    "/d/pkg/sub/deep/c.py": "pkg/sub/deep/c.py"}),
    ("COPY --parents pkg/*/*.py /d/", {"/d/pkg/sub/b.py": "pkg/sub/b.py"}),
    # A '/./' pivot keeps the folders after it only.
    ("COPY --parents ./pkg/./sub/*.py /d/", {"/d/sub/b.py": "pkg/sub/b.py"}),
    ("COPY --parents pkg/./sub /d/", {"/d/sub/b.py": "pkg/sub/b.py", "/d/sub/b.pyc": "pkg/sub/b.pyc",
                                      "/d/sub/deep/c.py": "pkg/sub/deep/c.py"}),
    # The first '/./' is the pivot; a later one is only a '.' folder of the pattern.
    ("COPY --parents ./pkg/./sub/./b.py /d/", {"/d/sub/b.py": "pkg/sub/b.py"}),
    # --exclude then matches below the root the layout is kept from.
    ("COPY --parents --exclude=**/*.pyc --exclude=pkg/sub/deep pkg/sub /d/", {"/d/pkg/sub/b.py": "pkg/sub/b.py"}),
    # A source that matches nothing copies nothing and does not stop the build.
    ("COPY --parents pkg/none.py main.py /d/", {"/d/main.py": "main.py"}),
    # --parents=false is a plain COPY.
    ("COPY --parents=false pkg/sub/b.py /d/", {"/d/b.py": "pkg/sub/b.py"}),
    ("COPY --parents=true pkg/a.py /d/", {"/d/pkg/a.py": "pkg/a.py"}),
])
def test_parents_keeps_each_sources_folders_below_the_context_root_or_its_pivot(line: str,
                                                                                 image: dict[str, str]) -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": f"FROM base\n{line}\n"})
    assert {path: placed.source for path, placed in plan.image.items()} == image
    assert notes_of(plan, "fails") == [] and plan.copy_counts[2] == len(image)


def test_parents_with_a_copy_from_another_stage_is_left_unread() -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": "FROM base AS b\nCOPY pkg /o/\nFROM base\nCOPY --from=b --parents "
                                             "/o/a.py /d/\n"})
    assert plan.image == {} and notes_of(plan, "unread") == [("Dockerfile", 4, "COPY --from=b --parents /o/a.py /d/")]


@pytest.mark.parametrize(("line", "answers"), [
    ("COPY --exclude=.patcher-manifest . /app/", {".patcher-manifest": False, "new.py": True}),
    ("COPY --exclude=**/*.md . /app/", {"new.md": False, "x/new.md": False, "new.py": True}),
    ("COPY --exclude=*.md pkg /app/", {"pkg/new.md": False, "pkg/x/new.md": True}),
    ("COPY --exclude=x p* /app/", {"pkg/x": False, "pkg/y": True, "p": True}),
    ("COPY --exclude=*.md notes.md /app/", {"notes.md": True}),
])
def test_a_new_file_an_exclude_pattern_matches_would_not_ship(line: str, answers: dict[str, bool]) -> None:
    plan = plan_of({**CONTEXT, "Dockerfile": f"FROM base\n{line}\n"})
    assert {path: plan.would_ship(path) for path in answers} == answers


def test_a_parents_source_pattern_docker_cannot_read_is_refused_naming_it() -> None:
    with pytest.raises(ShippingError, match=r"pattern 'pkg/a\*\*b\*\*c\*\*d\*\*e\*\*f' has more than 4") as raised:
        plan_of({**CONTEXT, "Dockerfile": "FROM base\nCOPY --parents pkg/a**b**c**d**e**f /d/\n"})
    assert raised.value.where == "COPY --parents source"
