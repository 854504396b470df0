"""``patcher inspect`` through the CLI: what ships, where it lands, what the patches target, what hides a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures_vendor import SHIPPED

COREX = "/usr/local/corex/lib/python3/dist-packages/vllm"
TARGET_IMAGE = f"{COREX}/attention/ops/paged_attn.py"


def test_the_demo_zip(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", vendor_zip)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    for expected in (
        "     3  WORKDIR /workspace",
        "     4  COPY qwen3_6_scripts -> /workspace/qwen3_6_scripts (10 files)",
        "     5  RUN /workspace/qwen3_6_scripts/patch_ops.sh (in /workspace/qwen3_6_scripts)",
        "  qwen3_6_scripts/patch_ops.sh (Dockerfile line 5; no 'set -e': a failed command does not stop the build)",
        f"     8  {SHIPPED} -> {TARGET_IMAGE}",
        f"    23  qwen3_6_scripts/reasoning/__init__.py -> {COREX}/reasoning/__init__.py",
        "    28  qwen3_6_scripts/chat_template.jinja -> /workspace/templates/qwen3_6.jinja",
        f"  vllm/attention/ops/paged_attn.py <- {SHIPPED}",
        f"        -> {TARGET_IMAGE}",
        "        stale copies synced by apply: paged_attn.py",
        "        patches: three-tier-decode, prefix-pregather, prefix-buffer-reuse",
        f"  {SHIPPED} -> /workspace/{SHIPPED}, {TARGET_IMAGE}",
        "  paged_attn.py",  # never shipped: the stale root copy
        "  vllm/ (8 files)",  # a folder that ships nothing is folded
    ):
        assert expected in lines, expected
    never = lines[lines.index("Never shipped (16 files)") + 1:]
    assert "  Dockerfile" in never and not any(line.startswith("  qwen3_6_scripts") for line in never)
    assert result.stderr == (
        f"warning: qwen3_6_scripts/patch_ops.sh:8: if copying the patched {SHIPPED} to {TARGET_IMAGE} fails, "
        "the build goes on (no 'set -e') and the image silently keeps the vendor's unpatched file; "
        "add 'set -e' at the top of the script and drop what hides the error\n")
    assert cli("inspect", "--strict", vendor_zip).exit_code == 1


# A Dockerfile with what real ones use: ARG/ENV, JSON form, --chown, line
# continuations, relative WORKDIR, a glob, RUN in exec form, .dockerignore.
DOCKERFILE = """\
FROM registry.example.invalid/bi100-base:v1.2.3
ARG APP=/workspace
ENV SCRIPTS=qwen3_6_scripts
WORKDIR ${APP}
COPY --chown=1000:1000 ["qwen3_6_scripts", "./$SCRIPTS"]
COPY launch_service \\
     computility-run.yaml \\
     ${APP}/bin/
ADD *.json data/
WORKDIR qwen3_6_scripts
RUN ["bash", "./patch_ops.sh"]
"""

LOOPING_SCRIPT = """\
#!/bin/sh
set -e
for root in /usr/local/corex/lib/python3/dist-packages /usr/lib/python3/dist-packages; do
  VLLM="$root/vllm"
  if [ -d "$VLLM" ]; then
    cp ./paged_attn.py "$VLLM/attention/ops/paged_attn.py" 2>/dev/null || true
    install -m 644 ./sequence.py ${VLLM}/sequence.py
  fi
done
cp -r ./reasoning "$VLLM/"
"""


@pytest.fixture
def modern(vendor_copy: Path) -> Path:
    """The demo tree with a richer Dockerfile and a later-style install script."""
    (vendor_copy / "Dockerfile").write_text(DOCKERFILE)
    (vendor_copy / ".dockerignore").write_text("# not part of the context\nvllm\n**/__pycache__\n")
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text(LOOPING_SCRIPT)
    return vendor_copy


def test_dockerfile_forms_variables_and_loops_are_resolved(cli, modern) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", "--format", "json", modern)
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    docker = data["dockerfile"]
    assert docker["workdirs"] == [{"line": 4, "path": "/workspace"}, {"line": 10, "path": "/workspace/qwen3_6_scripts"}]
    assert docker["copies"] == [
        {"line": 5, "instruction": "COPY", "flags": ["--chown=1000:1000"], "sources": ["qwen3_6_scripts"],
         "destination": "/workspace/qwen3_6_scripts"},
        {"line": 6, "instruction": "COPY", "flags": [], "sources": ["launch_service", "computility-run.yaml"],
         "destination": "/workspace/bin/"},
        {"line": 9, "instruction": "ADD", "flags": [], "sources": ["*.json"], "destination": "/workspace/data/"},
    ]
    assert docker["runs"] == [{"line": 11, "script": "/workspace/qwen3_6_scripts/patch_ops.sh",
                               "cwd": "/workspace/qwen3_6_scripts"}]
    shipped = {item["path"]: item["image_paths"] for item in data["shipped"]}
    assert shipped["launch_service"] == ["/workspace/bin/launch_service"]
    assert shipped["chat_dataset_v0.json"] == ["/workspace/data/chat_dataset_v0.json"]
    assert shipped[SHIPPED] == [f"/workspace/{SHIPPED}", TARGET_IMAGE,
                                "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"]
    assert shipped["qwen3_6_scripts/sequence.py"][1:] == [f"{COREX}/sequence.py",
                                                         "/usr/lib/python3/dist-packages/vllm/sequence.py"]
    # After the loop $VLLM keeps its last value, as in the shell.
    assert shipped["qwen3_6_scripts/reasoning/__init__.py"][1:] == ["/usr/lib/python3/dist-packages/vllm/reasoning/__init__.py"]
    assert data["scripts"] == [{"path": "qwen3_6_scripts/patch_ops.sh", "image_path": "/workspace/qwen3_6_scripts/patch_ops.sh",
                                "run_line": 11, "stops_on_error": True, "unresolved_variables": []}]
    assert all(p.startswith("vllm/") for p in data["dockerignored"]) and data["dockerignored"]
    assert "paged_attn.py" in data["never_shipped"] and "Dockerfile" in data["never_shipped"]
    (target,) = data["targets"]
    assert (target["shipped"], target["mirrors"], target["problem"]) == (SHIPPED, ["paged_attn.py"], None)


def test_set_e_does_not_save_a_copy_behind_or_true(cli, modern) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", "--format", "json", "--strict", modern)
    assert result.exit_code == 1
    warnings = json.loads(result.stdout)["warnings"]
    assert [(w["line"], w["image_path"], w["reasons"]) for w in warnings] == [
        (6, TARGET_IMAGE, ["'2>/dev/null'", "'|| true'"]),
        (6, "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py", ["'2>/dev/null'", "'|| true'"]),
    ]
    assert result.stderr.count("warning: qwen3_6_scripts/patch_ops.sh:6: ") == 2


# How a copy line hides its failure, as examples:
# script body -> (what hides it, set -e in force, whether inspect warns) for the paged_attn copy.
HIDING = [
    ("cp ./paged_attn.py $D/paged_attn.py", [], False, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py", [], True, False),
    ("#!/bin/bash -e\ncp ./paged_attn.py $D/paged_attn.py", [], True, False),
    ("set -euo pipefail\nset +e\ncp ./paged_attn.py $D/paged_attn.py", [], False, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py || echo 'copy failed'", ["|| echo"], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py && echo ok", ["&& ..."], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py | tee log", ["| ..."], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py >/dev/null 2>&1", [">/dev/null 2>&1"], True, False),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py || exit 1", [], True, False),
    ("set -o errexit\n[ -d $D ] && cp ./paged_attn.py ${D}/paged_attn.py", [], True, False),
]


@pytest.mark.parametrize(("body", "hides", "stops", "warns"), HIDING)
def test_what_hides_a_failed_copy(cli, vendor_copy, body, hides, stops, warns) -> None:  # type: ignore[no-untyped-def]
    lines = body.splitlines()
    shebang, rest = (lines[:1], lines[1:]) if lines[0].startswith("#!") else ([], lines)
    script = vendor_copy / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_text("\n".join([*shebang, f"D={TARGET_IMAGE.rsplit('/', 1)[0]}", *rest]) + "\n")
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    (copy,) = [i for i in data["installed"] if i["path"] == SHIPPED]
    assert copy["image_path"] == TARGET_IMAGE
    assert (copy["hides_failure"], copy["stops_on_error"]) == (hides, stops)
    assert bool(data["warnings"]) == warns


def test_a_target_nothing_ships_is_reported(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    script = vendor_copy / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"cp ./paged_attn.py" not in line))
    result = cli("inspect", vendor_copy)
    assert result.exit_code == 0
    assert "  vllm/attention/ops/paged_attn.py: NOT SHIPPED: nothing the image ships lands at" in result.stdout
    assert result.stderr.startswith("warning: vllm/attention/ops/paged_attn.py: nothing the image ships")
    assert cli("inspect", "--strict", vendor_copy).exit_code == 1


def test_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("inspect", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0 done; 1 with --strict, a warning" in text and "3 internal error" in text


def test_no_dockerfile_is_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    result = cli("inspect", tmp_path / "empty")
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and result.stdout == ""


# Dockerfile and install-script forms that must still find the shipped paged_attn.py:
# (Dockerfile after FROM, patch_ops.sh body, image paths of the target).
ROOT_LIB = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
FORMS = {
    "copy-into-dot": (
        "WORKDIR /workspace\nCOPY qwen3_6_scripts/patch_ops.sh .\nCOPY qwen3_6_scripts/paged_attn.py ./\n"
        "RUN ./patch_ops.sh\n",
        f"cp ./paged_attn.py {TARGET_IMAGE}\n", [TARGET_IMAGE]),
    "env-in-run-and-script": (
        f"ENV SCRIPTS=/workspace/qwen3_6_scripts OPS={TARGET_IMAGE.rsplit('/', 1)[0]}\n"
        "COPY qwen3_6_scripts $SCRIPTS\nRUN cd ${SCRIPTS} && bash -ex patch_ops.sh\n",
        "cp ./paged_attn.py $OPS/\n", [TARGET_IMAGE]),
    "sh-c": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\n"
        "RUN [\"/bin/bash\", \"-c\", \"cd /workspace/qwen3_6_scripts && ./patch_ops.sh\"]\n",
        f"cp ./paged_attn.py {TARGET_IMAGE}\n", [TARGET_IMAGE]),
    "quoted-workdir": (
        "WORKDIR \"/workspace\"\nCOPY qwen3_6_scripts qwen3_6_scripts\n"
        "RUN cd qwen3_6_scripts && /workspace/qwen3_6_scripts/patch_ops.sh\n",
        f"cp ./paged_attn.py {TARGET_IMAGE}\n", [TARGET_IMAGE]),
    "default-value": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n",
        f"OPS=${{OPS:-{TARGET_IMAGE.rsplit('/', 1)[0]}}}\ncp ./paged_attn.py $OPS/paged_attn.py\n", [TARGET_IMAGE]),
    "nested-loops": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN cd /workspace/qwen3_6_scripts && ./patch_ops.sh\n",
        "for root in /usr/local/corex/lib/python3/dist-packages /usr/lib/python3/dist-packages; do\n"
        "  for name in paged_attn.py; do\n"
        "    while false; do :; done\n"
        "    cp ./$name $root/vllm/attention/ops/\n"
        "  done\n"
        "done\n", [TARGET_IMAGE, ROOT_LIB]),
    "own-folder": (
        "COPY qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN bash /workspace/qwen3_6_scripts/patch_ops.sh\n",
        'cd "$(dirname "$0")"\nHERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\n'
        f"pushd {TARGET_IMAGE.rsplit('/', 1)[0]}\n/bin/cp $HERE/paged_attn.py .\npopd\n", [TARGET_IMAGE]),
}


@pytest.mark.parametrize("form", FORMS)
def test_the_shipped_copy_is_found_through_these_forms(cli, vendor_copy, form) -> None:  # type: ignore[no-untyped-def]
    dockerfile, script, image_paths = FORMS[form]
    (vendor_copy / "Dockerfile").write_text("FROM registry.example.invalid/base:v1\n" + dockerfile)
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text("#!/bin/sh\nset -e\n" + script)
    result = cli("inspect", "--format", "json", "--strict", vendor_copy)
    assert result.exit_code == 0, result.stderr
    (target,) = json.loads(result.stdout)["targets"]
    assert (target["shipped"], target["image_paths"], target["problem"]) == (SHIPPED, image_paths, None)


def test_a_copy_glob_matching_several_files_fills_a_folder(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    # Docker wants a trailing '/' here; without it each file must not land on the same path.
    (vendor_copy / "Dockerfile").write_text("FROM base\nCOPY *.py /workspace/stale\n")
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    shipped = {item["path"]: item["image_paths"] for item in data["shipped"]}
    assert shipped["paged_attn.py"] == ["/workspace/stale/paged_attn.py"]
    assert shipped["attention.py"] == ["/workspace/stale/attention.py"]


@pytest.mark.parametrize("command", ["inspect", "apply", "diff", "verify-sync", "check"])
def test_a_dockerfile_that_does_not_parse_is_exit_2(cli, vendor_copy, command) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "Dockerfile").write_text("FROM base\nENV\nCOPY qwen3_6_scripts /workspace/qwen3_6_scripts\n")
    result = cli(command, vendor_copy)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("error: Dockerfile: cannot be parsed") and "internal error" not in result.stderr
