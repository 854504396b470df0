"""``patcher inspect``'s report, line by line and field by field, on a build that uses every part of it.

The build (``many_sided``) has three stages (one the image uses, one it does
not), COPY with flags and ``--from``, a ``.dockerignore``, a Dockerfile RUN
that installs a file behind ``|| true``, and an install script under
``set -e`` with a hidden copy of the patched file, an unset variable, a
``pip install -r``, a copy into a base-image folder and a ``cp`` of a folder
without ``-r``. The report's layout is pinned whole; what the shipping
reader says about each line (its reasons) is taken from the plan, so this
pins how ``inspect`` shows the reading, not the reading itself.
"""

from __future__ import annotations

from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.patchset.model import SeriesOutline
from patcher.review.inspect import HiddenFailure, Inspection, TargetShipping, inspect_tree, lines, note_json, to_json
from patcher.shipping.shell_records import Note

from tests.fixtures_cli import INSTALLED, TARGET
from tests.fixtures_vendor import SHIPPED

DOCKERFILE = """\
FROM registry.example.invalid/bi100-base:v1.2.3 AS tools
RUN mkdir /tools
FROM registry.example.invalid/unused:v1 AS unused
FROM registry.example.invalid/bi100-base:v1.2.3
WORKDIR /workspace/
COPY --chown=1000:1000 ./qwen3_6_scripts /workspace/qwen3_6_scripts
COPY launch_service computility-run.yaml /workspace/bin/
COPY --from=tools /tools /tools
RUN cp /workspace/bin/launch_service /usr/local/bin/launch_service || true
RUN cd ./qwen3_6_scripts && ./patch_ops.sh
"""

SCRIPT = f"""\
set -e
cp ./paged_attn.py {INSTALLED} 2>/dev/null || true
cp ./sequence.py $VLLM_HOME/sequence.py
cp ./qwen3_5.py /opt/models
pip install -r requirements.txt
cp ./reasoning /usr/local/corex/lib/python3/dist-packages/vllm/
eval "$EXTRA"
"""


def many_sided(tree: Path) -> Path:
    """Give the demo tree a three-stage Dockerfile, a .dockerignore and an install script with one of each caveat."""
    (tree / "Dockerfile").write_text(DOCKERFILE)
    (tree / ".dockerignore").write_text("vllm\n")
    (tree / "qwen3_6_scripts" / "patch_ops.sh").write_text(SCRIPT)
    return tree


def outline() -> SeriesOutline:
    return SeriesOutline(Path("patches"), (("three-tier-decode", TARGET), ("prefix-pregather", TARGET),
                                           ("gone-target", "vllm/nope.py")))


def test_the_report_shows_stages_copies_scripts_notes_targets_and_files(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    tree = DirSource(many_sided(vendor_copy))
    inspection = inspect_tree(tree, outline())
    reason = {n.line if n.file != "Dockerfile" else -n.line: n.reason for n in inspection.plan.notes}
    missing = inspection.targets[1].problem
    assert lines(inspection) == [
        f"{tree.label}: 27 files, 12 shipped",
        "",
        "Dockerfile",
        "     1  FROM registry.example.invalid/bi100-base:v1.2.3 AS tools (stage 0: used by the image)",
        "     3  FROM registry.example.invalid/unused:v1 AS unused (stage 1: not in the image)",
        "     4  FROM registry.example.invalid/bi100-base:v1.2.3 (stage 2: the image)",
        "     5  WORKDIR /workspace",
        "     6  COPY --chown=1000:1000 qwen3_6_scripts -> /workspace/qwen3_6_scripts (10 files)",
        "     7  COPY launch_service computility-run.yaml -> /workspace/bin/ (2 files)",
        "     8  COPY --from=tools /tools -> /tools (0 files)",
        "    10  RUN /workspace/qwen3_6_scripts/patch_ops.sh (in /workspace/qwen3_6_scripts)",
        "  .dockerignore keeps 8 file(s) out of the build context",
        "",
        "Install scripts",
        "  qwen3_6_scripts/patch_ops.sh (Dockerfile line 10; set -e)",
        f"     2  {SHIPPED} -> {INSTALLED}  [2>/dev/null, || true]",
        "     4  qwen3_6_scripts/qwen3_5.py -> /opt/models/qwen3_5.py",
        "        unresolved variables: $VLLM_HOME",
        "  the Dockerfile's own RUN lines",
        "     9  launch_service -> /usr/local/bin/launch_service  [|| true]",
        "",
        "Not read (2)",
        "  qwen3_6_scripts/patch_ops.sh:3 [stage 2]  cp ./sequence.py $VLLM_HOME/sequence.py",
        f"        {reason[3]}",
        "  qwen3_6_scripts/patch_ops.sh:5 [stage 2]  pip install -r requirements.txt",
        f"        {reason[5]}",
        "",
        "Would fail (2)",
        "  qwen3_6_scripts/patch_ops.sh:6 [stage 2]  cp ./reasoning /usr/local/corex/lib/python3/dist-packages/vllm/",
        f"        {reason[6]}",
        "  Dockerfile:10 [stage 2]  RUN cd ./qwen3_6_scripts && ./patch_ops.sh",
        f"        {reason[-10]}",
        "",
        "Assumed (1)",
        "  qwen3_6_scripts/patch_ops.sh:4 [stage 2]  cp ./qwen3_5.py /opt/models",
        f"        {reason[4]}",
        "",
        "Patch targets",
        f"  {TARGET} <- {SHIPPED}",
        f"        -> {INSTALLED}",
        "        stale copies synced by apply: paged_attn.py",
        "        could be changed by what was not read: lines 3 and 5 of qwen3_6_scripts/patch_ops.sh "
        "(`cp ./sequence.py $VLLM_HOME/sequence.py`, `pip install -r requirements.txt`)",
        "        patches: three-tier-decode, prefix-pregather",
        f"  vllm/nope.py: NOT SHIPPED: {missing}",
        "        patches: gone-target",
        "",
        "Shipped files (12)",
        "  computility-run.yaml -> /workspace/bin/computility-run.yaml",
        "  launch_service -> /workspace/bin/launch_service, /usr/local/bin/launch_service",
        "  qwen3_6_scripts/chat_template.jinja -> /workspace/qwen3_6_scripts/chat_template.jinja",
        "  qwen3_6_scripts/mamba_cache.py -> /workspace/qwen3_6_scripts/mamba_cache.py",
        f"  {SHIPPED} -> /workspace/{SHIPPED}, {INSTALLED}",
        "  qwen3_6_scripts/patch_ops.sh -> /workspace/qwen3_6_scripts/patch_ops.sh",
        "  qwen3_6_scripts/patch_registry.py -> /workspace/qwen3_6_scripts/patch_registry.py",
        "  qwen3_6_scripts/patch_scheduler.py -> /workspace/qwen3_6_scripts/patch_scheduler.py",
        "  qwen3_6_scripts/qwen3_5.py -> /workspace/qwen3_6_scripts/qwen3_5.py, /opt/models/qwen3_5.py",
        "  qwen3_6_scripts/reasoning/__init__.py -> /workspace/qwen3_6_scripts/reasoning/__init__.py",
        "  qwen3_6_scripts/reasoning/qwen3_reasoning_parser.py -> "
        "/workspace/qwen3_6_scripts/reasoning/qwen3_reasoning_parser.py",
        "  qwen3_6_scripts/sequence.py -> /workspace/qwen3_6_scripts/sequence.py",
        "",
        "Never shipped (15 files)",
        "  .dockerignore",
        "  Dockerfile",
        "  __init__.py",
        "  attention.py",
        "  chat_dataset_v0.json",
        "  paged_attn.py",
        "  prefix_prefill.py",
        "  vllm/ (8 files)",
    ]
    assert missing.startswith("nothing the image ships lands at .../vllm/nope.py")


def test_a_single_stage_build_shows_no_stage_lines_and_a_script_without_set_e_says_so(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    inspection = inspect_tree(DirSource(vendor_copy), outline())
    shown = lines(inspection)
    assert shown[2:7] == ["Dockerfile", "     3  WORKDIR /workspace",
                          "     4  COPY qwen3_6_scripts -> /workspace/qwen3_6_scripts (10 files)",
                          "     5  RUN /workspace/qwen3_6_scripts/patch_ops.sh (in /workspace/qwen3_6_scripts)", ""]
    assert ("  qwen3_6_scripts/patch_ops.sh (Dockerfile line 5; no 'set -e': a failed command does not stop the build)"
            in shown)
    assert not any(line.startswith(("Not read", "Would fail", "Assumed", "  the Dockerfile's own")) for line in shown)
    assert not any("[stage" in line or ".dockerignore keeps" in line or "unresolved" in line for line in shown)


def test_a_dockerfile_that_runs_no_script_says_so(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text("FROM base:1\nCOPY qwen3_6_scripts/paged_attn.py /app/paged_attn.py\n")
    shown = lines(inspect_tree(DirSource(vendor_copy), outline()))
    assert shown[shown.index("Install scripts") + 1] == "  (none: the Dockerfile runs no script from the context)"
    assert "     2  COPY qwen3_6_scripts/paged_attn.py -> /app/paged_attn.py (1 file)" in shown


def test_json_gives_the_same_as_fields(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    tree = DirSource(many_sided(vendor_copy))
    inspection = inspect_tree(tree, outline())
    data = to_json(inspection)
    notes = {n.line: n for n in inspection.plan.notes if n.file != "Dockerfile"}
    assert data["input"] == tree.label
    assert data["dockerfile"] == {
        "workdirs": [{"line": 5, "path": "/workspace"}],
        "copies": [
            {"line": 6, "instruction": "COPY", "flags": ["--chown=1000:1000"], "sources": ["qwen3_6_scripts"],
             "destination": "/workspace/qwen3_6_scripts"},
            {"line": 7, "instruction": "COPY", "flags": [], "sources": ["launch_service", "computility-run.yaml"],
             "destination": "/workspace/bin/"},
            {"line": 8, "instruction": "COPY", "flags": ["--from=tools"], "sources": ["/tools"], "destination": "/tools"},
        ],
        "runs": [{"line": 10, "script": "/workspace/qwen3_6_scripts/patch_ops.sh", "cwd": "/workspace/qwen3_6_scripts"}],
    }
    assert data["scripts"] == [{"path": "qwen3_6_scripts/patch_ops.sh", "image_path": "/workspace/qwen3_6_scripts/patch_ops.sh",
                                "run_line": 10, "stops_on_error": True, "unresolved_variables": ["VLLM_HOME"]}]
    assert data["stages"] == [
        {"index": 0, "name": "tools", "base": "registry.example.invalid/bi100-base:v1.2.3", "line": 1,
         "from_stage": None, "uses": [], "is_image": False, "in_image": True},
        {"index": 1, "name": "unused", "base": "registry.example.invalid/unused:v1", "line": 3,
         "from_stage": None, "uses": [], "is_image": False, "in_image": False},
        {"index": 2, "name": None, "base": "registry.example.invalid/bi100-base:v1.2.3", "line": 4,
         "from_stage": None, "uses": [0], "is_image": True, "in_image": True},
    ]
    shipped = {s["path"]: s["image_paths"] for s in data["shipped"]}
    assert shipped[SHIPPED] == [f"/workspace/{SHIPPED}", INSTALLED]
    assert shipped["computility-run.yaml"] == ["/workspace/bin/computility-run.yaml"]
    assert list(shipped) == sorted(shipped)
    assert {"image_path": INSTALLED, "path": SHIPPED} in data["image"]
    assert [i["image_path"] for i in data["image"]] == sorted(i["image_path"] for i in data["image"])
    assert data["installed"] == [
        {"path": "launch_service", "image_path": "/usr/local/bin/launch_service", "script": "Dockerfile", "line": 9,
         "hides_failure": ["|| true"], "stops_on_error": False},
        {"path": SHIPPED, "image_path": INSTALLED, "script": "qwen3_6_scripts/patch_ops.sh", "line": 2,
         "hides_failure": ["2>/dev/null", "|| true"], "stops_on_error": True},
        {"path": "qwen3_6_scripts/qwen3_5.py", "image_path": "/opt/models/qwen3_5.py",
         "script": "qwen3_6_scripts/patch_ops.sh", "line": 4, "hides_failure": [], "stops_on_error": True},
    ]
    target, gone = data["targets"]
    assert target == {"target": TARGET, "patches": ["three-tier-decode", "prefix-pregather"], "shipped": SHIPPED,
                      "image_paths": [INSTALLED], "mirrors": ["paged_attn.py"], "problem": None,
                      "unread": [note_json(notes[3]), note_json(notes[5])]}
    assert (gone["shipped"], gone["problem"], gone["mirrors"], gone["unread"]) == (
        None, inspection.targets[1].problem, [], [])
    assert [u["line"] for u in data["unread"]] == [3, 5]
    assert [(f["file"], f["line"]) for f in data["fails"]] == [("qwen3_6_scripts/patch_ops.sh", 6), ("Dockerfile", 10)]
    assert [a["line"] for a in data["assumed"]] == [4]
    assert data["never_shipped"] == list(inspection.unshipped) and "vllm/utils.py" in data["never_shipped"]
    assert data["dockerignored"] == list(inspection.plan.ignored) and len(data["dockerignored"]) == 8
    (warning,) = data["warnings"]
    assert warning == {"path": SHIPPED, "image_path": INSTALLED, "script": "qwen3_6_scripts/patch_ops.sh", "line": 2,
                       "reasons": ["'2>/dev/null'", "'|| true'"], "message": inspection.warnings[0].message()}


def test_a_note_as_data_says_where_what_why_and_what_it_could_change() -> None:
    note = Note("qwen3_6_scripts/patch_ops.sh", 5, "pip install foo", "installs foo", "program",
                ("**/site-packages/foo",), 3, "stage 2")
    assert note_json(note) == {"file": "qwen3_6_scripts/patch_ops.sh", "line": 5, "text": "pip install foo",
                               "kind": "program", "reason": "installs foo", "stage": "stage 2",
                               "could_change": ["**/site-packages/foo"]}
    assert note_json(Note("Dockerfile", 1, "RUN make", "r", "program"))["could_change"] is None


def test_a_hidden_failure_says_what_to_do_and_a_caveat_names_the_unread_lines() -> None:
    hidden = HiddenFailure(SHIPPED, INSTALLED, "qwen3_6_scripts/patch_ops.sh", 8, ("no 'set -e'", "'|| true'"))
    assert hidden.message() == (
        f"qwen3_6_scripts/patch_ops.sh:8: if copying the patched {SHIPPED} to {INSTALLED} fails, the build goes on "
        "(no 'set -e', '|| true') and the image silently keeps the vendor's unpatched file; add 'set -e' at the top "
        "of the script and drop what hides the error")
    one = Note("qwen3_6_scripts/patch_ops.sh", 12, 'eval "$CMD"', "r", "unread")
    two = Note("qwen3_6_scripts/patch_ops.sh", 30, "make", "r", "program")
    assert TargetShipping(TARGET, ("a",), SHIPPED, (INSTALLED,), ()).caveat() is None
    assert TargetShipping(TARGET, ("a",), SHIPPED, (INSTALLED,), (), None, (one,)).caveat() == (
        f"the image ships {SHIPPED}, but line 12 of qwen3_6_scripts/patch_ops.sh (`eval \"$CMD\"`) was not read: "
        "it could change that")
    assert TargetShipping(TARGET, ("a",), SHIPPED, (INSTALLED,), (), None, (one, two)).caveat() == (
        f"the image ships {SHIPPED}, but lines 12 and 30 of qwen3_6_scripts/patch_ops.sh (`eval \"$CMD\"`, `make`) "
        "were not read: they could change that")


def test_strict_fails_on_a_warning_a_target_not_shipped_or_one_unread_lines_could_change(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text(f"set -e\ncp ./paged_attn.py {INSTALLED}\n")
    clean = inspect_tree(DirSource(vendor_copy), SeriesOutline(Path("p"), (("a", TARGET),)))
    assert clean.warnings == () and (int(clean.exit_code(True)), int(clean.exit_code(False))) == (0, 0)
    note = Note("qwen3_6_scripts/patch_ops.sh", 3, "make", "r", "program")
    target = clean.targets[0]
    for trouble in (Inspection(clean.label, clean.plan, clean.files, clean.targets,
                               (HiddenFailure(SHIPPED, INSTALLED, "s", 1, ("x",)),)),
                    Inspection(clean.label, clean.plan, clean.files,
                               (TargetShipping(TARGET, ("a",), None, (), (), "not shipped"),), ()),
                    Inspection(clean.label, clean.plan, clean.files,
                               (TargetShipping(TARGET, ("a",), SHIPPED, target.image_paths, (), None, (note,)),), ())):
        assert (int(trouble.exit_code(True)), int(trouble.exit_code(False))) == (1, 0)


def test_folders_that_ship_nothing_are_folded_and_lone_files_listed(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "docs" / "api").mkdir(parents=True)
    (vendor_copy / "docs" / "api" / "one.md").write_text("x\n")
    (vendor_copy / "docs" / "api" / "two.md").write_text("x\n")
    (vendor_copy / "lonely").mkdir()
    (vendor_copy / "lonely" / "only.txt").write_text("x\n")
    # In a folder that ships: a subfolder that ships nothing folds, a lone file is listed.
    (vendor_copy / ".dockerignore").write_text("qwen3_6_scripts/notes\nqwen3_6_scripts/README.md\n")
    (vendor_copy / "qwen3_6_scripts" / "notes").mkdir()
    (vendor_copy / "qwen3_6_scripts" / "notes" / "a.md").write_text("x\n")
    (vendor_copy / "qwen3_6_scripts" / "notes" / "b.md").write_text("x\n")
    (vendor_copy / "qwen3_6_scripts" / "README.md").write_text("x\n")
    shown = lines(inspect_tree(DirSource(vendor_copy), outline()))
    never = shown[shown.index(next(line for line in shown if line.startswith("Never shipped"))):]
    assert never[0] == "Never shipped (23 files)"
    assert "  docs/ (2 files)" in never and "  lonely/only.txt" in never
    assert "  vllm/ (8 files)" in never and "  qwen3_6_scripts/notes/ (2 files)" in never
    assert "  qwen3_6_scripts/README.md" in never


def test_two_stages_flags_a_copy_from_an_image_and_a_script_that_cannot_be_parsed(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text(
        "FROM registry.example.invalid/bi100-base:v1.2.3 AS build\nFROM registry.example.invalid/bi100-base:v1.2.3\n"
        "COPY --chown=1000:1000 --chmod=755 qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "COPY --from=registry.example.invalid/tools:v2 /opt/tools /opt/tools\n"
        "RUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n")
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text("cp ./a ./b\nif [ -d /x ]; then\n  cp ./a ./b\n")
    inspection = inspect_tree(DirSource(vendor_copy), SeriesOutline(Path("p"), ()))
    (stop,) = inspection.plan.notes
    shown = lines(inspection)
    assert shown[3:8] == [
        "     1  FROM registry.example.invalid/bi100-base:v1.2.3 AS build (stage 0: not in the image)",
        "     2  FROM registry.example.invalid/bi100-base:v1.2.3 (stage 1: the image)",
        "     3  COPY --chown=1000:1000 --chmod=755 qwen3_6_scripts -> /workspace/qwen3_6_scripts (10 files)",
        "     4  COPY --from=registry.example.invalid/tools:v2 /opt/tools -> /opt/tools (0 files)",
        "     5  RUN /workspace/qwen3_6_scripts/patch_ops.sh (in /workspace/qwen3_6_scripts)",
    ]
    assert stop.kind == "stop"
    start = shown.index("Not read (1)")
    assert shown[start + 1:start + 3] == [f"  qwen3_6_scripts/patch_ops.sh:{stop.line} [stage 1]  {stop.text}",
                                          f"        {stop.reason}"]
    assert [n["kind"] for n in to_json(inspection)["unread"]] == ["stop"]


def test_every_unresolved_variable_of_a_script_is_named(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text(
        "cp ./paged_attn.py $VLLM_A/attention/ops/paged_attn.py\ncp ./sequence.py ${VLLM_B}/sequence.py\n")
    shown = lines(inspect_tree(DirSource(vendor_copy), SeriesOutline(Path("p"), ())))
    assert "        unresolved variables: $VLLM_A, $VLLM_B" in shown


def test_a_target_that_does_not_ship_does_not_hide_the_ones_after_it(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    series = SeriesOutline(Path("patches"), (("gone-target", "vllm/nope.py"), ("three-tier-decode", TARGET)))
    gone, shipped = inspect_tree(DirSource(vendor_copy), series).targets
    assert (gone.target, gone.shipped, shipped.target, shipped.shipped) == ("vllm/nope.py", None, TARGET, SHIPPED)


def test_a_copy_in_a_script_without_set_e_is_warned_about_for_that_reason(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (warning,) = inspect_tree(DirSource(vendor_copy), outline()).warnings
    assert (warning.path, warning.image_path, warning.reasons) == (SHIPPED, INSTALLED, ("no 'set -e'",))
    assert "the build goes on (no 'set -e') and the image" in warning.message()
