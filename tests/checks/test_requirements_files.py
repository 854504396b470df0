"""``pip install -r FILE`` (and ``-c FILE``) is followed into FILE, as the image will have it.

The file is looked up where the command runs (the script's folder, moved
by ``cd``/``pushd``/``popd``, or the Dockerfile's ``WORKDIR`` for a
``RUN``), among the files the build copies from the context; a nested
``-r``/``-c`` is relative to the file that names it. Every spelling pip
takes (``-r F``, ``-rF``, ``--requirement F``, ``--requirement=F``, the
same for ``-c``) is read; a loop is read once, and files nested deeper than
``MAX_DEPTH`` are left unread with a warning. A file the Dockerfile copies
to several places is found at each; ``${VAR}`` is the Dockerfile's ``ENV``
in a nested file as in the first. A Triton requirement is an
error at its own line of its own file, naming the ``pip install`` that
reads it; a file the reader cannot reach is a warning at the command.
"""

from __future__ import annotations

import pytest

from patcher.checks import RULES
from patcher.checks.requirement_files import requirement_lines
from patcher.checks.triton_installs import MAX_DEPTH

from tests.fixtures_rules import INSTALLS, SCRIPT, build_dockerfile, findings

RULE = RULES["no-triton-kernels"]
FOLDER = "qwen3_6_scripts"


def check(script: str, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    """Return what the rule reports when the vendor's install script is ``script`` and ``files`` are in the context."""
    return findings(RULE, script, path=SCRIPT, files=files)


def requirements_of_realistic_size(triton_at: int, lines: int = 2_000) -> str:
    """Return a pinned requirements file of ``lines`` lines (comments, hashes, markers) with Triton at line ``triton_at``."""
    out = []
    for number in range(1, lines + 1):
        if number == triton_at:
            out.append("triton==2.1.0 ; platform_machine == 'x86_64'")
        elif number % 10 == 0:
            out.append(f"# via package-{number}")
        else:
            out.append(f"package-{number}=={number % 7}.{number % 5}.0 --hash=sha256:{number:064x}")
    return "\n".join(out) + "\n"


def chain(depth: int, last: str) -> dict[str, str]:
    """Return requirements files r0.txt .. r{depth-1}.txt, each naming the next with -r; the last holds ``last``."""
    files = {f"{FOLDER}/r{i}.txt": f"-r r{i + 1}.txt\n" for i in range(depth - 1)}
    files[f"{FOLDER}/r{depth - 1}.txt"] = last
    return files


def test_a_triton_requirement_is_an_error_at_its_own_line() -> None:
    files = {f"{FOLDER}/requirements.txt": requirements_of_realistic_size(1_234)}
    assert check("set -e\npip install --no-deps -r requirements.txt\n", files) == [
        (f"{FOLDER}/requirements.txt", 1_234, "error",
         "installs Triton (`triton==2.1.0 ; platform_machine == 'x86_64'`, read through "
         f"`pip install -r requirements.txt` at {SCRIPT}:2) {INSTALLS}")]


@pytest.mark.parametrize("option", ["-r requirements.txt", "-rrequirements.txt", "--requirement requirements.txt",
                                    "--requirement=requirements.txt", "-r ./requirements.txt",
                                    "-r /workspace/qwen3_6_scripts/requirements.txt",
                                    "-r ../qwen3_6_scripts/requirements.txt"])
def test_every_spelling_of_r_is_followed(option: str) -> None:
    found = check(f"set -e\npython3 -m pip install {option}\n", {f"{FOLDER}/requirements.txt": "triton\n"})
    assert [(path, line, severity) for path, line, severity, _ in found] == [(f"{FOLDER}/requirements.txt", 1, "error")]


@pytest.mark.parametrize("option", ["-c constraints.txt", "-cconstraints.txt", "--constraint constraints.txt",
                                    "--constraint=constraints.txt"])
def test_a_constraint_that_pins_triton_is_an_error(option: str) -> None:
    found = check(f"set -e\npip install vllm {option}\n", {f"{FOLDER}/constraints.txt": "triton==2.1.0\n"})
    assert found == [(f"{FOLDER}/constraints.txt", 1, "error",
                      f"pins Triton (`triton==2.1.0`, a constraint read through `pip install -c constraints.txt` at "
                      f"{SCRIPT}:2): whatever needs Triton installs that build {INSTALLS}")]


@pytest.mark.parametrize("script, where", [
    # The script runs in qwen3_6_scripts/ (the Dockerfile does `cd ./qwen3_6_scripts && ./patch_ops.sh`).
    ("set -e\ncd reqs\npip install -r gpu.txt\n", "reqs/gpu.txt"),
    ("set -e\ncd /workspace && pip install -r qwen3_6_scripts/reqs/gpu.txt\n", "reqs/gpu.txt"),
    ("set -e\npushd reqs\npopd\npip install -r gpu.txt\n", "gpu.txt"),
    ("set -e\npushd /tmp\npopd\ncd reqs; pip install -r gpu.txt\n", "reqs/gpu.txt"),
    ("set -e\ncd /tmp\ncd \"$(dirname \"$0\")\"\npip install -r gpu.txt\n", "gpu.txt"),
    ("set -e\nREQS=/workspace/qwen3_6_scripts/reqs\npip install -r $REQS/gpu.txt\n", "reqs/gpu.txt"),
])
def test_the_file_is_looked_up_where_the_command_runs(script: str, where: str) -> None:
    files = {f"{FOLDER}/gpu.txt": "pytorch-triton\n", f"{FOLDER}/reqs/gpu.txt": "pytorch-triton\n"}
    found = check(script, files)
    assert [(path, severity) for path, _, severity, _ in found] == [(f"{FOLDER}/{where}", "error")], found


@pytest.mark.parametrize("option", ["-r /tmp/requirements.txt", "-r requirements.txt"])
def test_a_file_the_dockerfile_copies_to_two_places_is_followed_from_either(option: str) -> None:
    dockerfile = build_dockerfile("COPY ./qwen3_6_scripts/requirements.txt /tmp/requirements.txt")
    files = {"Dockerfile": dockerfile, f"{FOLDER}/requirements.txt": "transformers==4.57.1\r\ntriton==2.1.0\r\n"}
    found = check(f"set -e\npip install {option}\n", files)
    assert [(path, line, severity) for path, line, severity, _ in found] == [(f"{FOLDER}/requirements.txt", 2, "error")]


def test_a_nested_file_is_relative_to_the_file_that_names_it() -> None:
    files = {f"{FOLDER}/reqs/base.txt": "transformers\n-r gpu/extra.txt\n--constraint ../pins.txt\n",
             f"{FOLDER}/reqs/gpu/extra.txt": "xformers\n-r /workspace/qwen3_6_scripts/last.txt\n",
             f"{FOLDER}/pins.txt": "triton==2.1.0\n",
             f"{FOLDER}/last.txt": "triton-nightly\n"}
    found = check("set -e\npip install -r reqs/base.txt\n", files)
    via = f"read through `pip install -r reqs/base.txt` at {SCRIPT}:2"
    assert sorted((path, line, message) for path, line, _, message in found) == [
        (f"{FOLDER}/last.txt", 1, f"installs Triton (`triton-nightly`, {via}, 3 files deep) {INSTALLS}"),
        (f"{FOLDER}/pins.txt", 1, f"pins Triton (`triton==2.1.0`, a constraint {via}, 2 files deep): whatever needs "
                                  f"Triton installs that build {INSTALLS}"),
    ]


def test_a_dockerfile_env_is_expanded_in_a_nested_file_as_in_the_first() -> None:
    dockerfile = build_dockerfile("ENV WHEELS=/workspace/qwen3_6_scripts/wheels")
    files = {"Dockerfile": dockerfile,
             f"{FOLDER}/requirements.txt": "transformers==4.57.1\n-r reqs/gpu.txt\n",
             f"{FOLDER}/reqs/gpu.txt": "xformers\n${WHEELS}/triton-2.1.0-cp310-cp310-linux_x86_64.whl\n"}
    found = check("set -e\npip install -r requirements.txt\n", files)
    assert [(path, line, severity, message.split(", read through")[0]) for path, line, severity, message in found] == [
        (f"{FOLDER}/reqs/gpu.txt", 2, "error",
         "installs Triton (`/workspace/qwen3_6_scripts/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl`")]


def test_a_loop_of_files_is_read_once() -> None:
    files = {f"{FOLDER}/a.txt": "-r b.txt\nnumpy\n", f"{FOLDER}/b.txt": "-r a.txt\n-r b.txt\ntriton\n"}
    found = check("set -e\npip install -r a.txt -r b.txt\n", files)
    assert [(path, line, severity) for path, line, severity, _ in found] == [(f"{FOLDER}/b.txt", 3, "error")]


def test_files_nested_past_the_limit_are_a_warning_not_a_hang() -> None:
    found = check("set -e\npip install -r r0.txt\n", chain(MAX_DEPTH + 5, "triton\n"))
    assert [(path, line, severity) for path, line, severity, _ in found] == [
        (f"{FOLDER}/r{MAX_DEPTH - 1}.txt", 1, "warning")]
    assert f"requirements files nest deeper than {MAX_DEPTH} here" in found[0][3]
    assert f"`-r r{MAX_DEPTH}.txt` is not read" in found[0][3]
    found = check("set -e\npip install -r r0.txt\n", chain(MAX_DEPTH, "triton\n"))
    assert [(path, severity) for path, _, severity, _ in found] == [(f"{FOLDER}/r{MAX_DEPTH - 1}.txt", "error")]


@pytest.mark.parametrize("script, read", [
    ("set -e\npip install -r missing.txt\n", "reads /workspace/qwen3_6_scripts/missing.txt, which the build does "
                                             "not copy from the context"),
    ("set -e\npip install -r https://example.com/requirements.txt\n", "reads https://example.com/requirements.txt, "
                                                                     "which cannot be read before the build"),
    ("set -e\npip install -r $REQUIREMENTS\n", "reads $REQUIREMENTS, which cannot be read before the build"),
    ("set -e\ncd ~\npip install -r requirements.txt\n", "reads requirements.txt, which cannot be read before the "
                                                        "build"),
])
def test_a_file_the_reader_cannot_reach_is_a_warning_at_the_command(script: str, read: str) -> None:
    found = check(script, {f"{FOLDER}/requirements.txt": "numpy\n"})
    line = script.count("\n") - 0
    assert [(path, number, severity) for path, number, severity, _ in found] == [(SCRIPT, line, "warning")]
    assert read in found[0][3] and "whether it installs Triton, whose kernels hang the BI-V100, is unknown" in found[0][3]


def test_a_requirements_file_read_by_a_dockerfile_run_is_followed_from_its_workdir() -> None:
    dockerfile = build_dockerfile().replace(
        "RUN cd ./qwen3_6_scripts && ./patch_ops.sh",
        "RUN cd ./qwen3_6_scripts && ./patch_ops.sh\nWORKDIR qwen3_6_scripts\nRUN pip install -r requirements.txt")
    found = check("set -e\n", {"Dockerfile": dockerfile, f"{FOLDER}/requirements.txt": "numpy\npytorch_triton\n"})
    assert [(path, line, severity) for path, line, severity, _ in found] == [(f"{FOLDER}/requirements.txt", 2, "error")]
    assert "read through `pip install -r requirements.txt` at Dockerfile:6" in found[0][3]


def test_what_pip_reads_from_a_requirements_file() -> None:
    text = ("# comment\n"
            "transformers==4.57.1 \\\n"
            "    --hash=sha256:00  # pinned\n"
            "-r other.txt\n"
            "--requirement=more.txt\n"
            "-cpins.txt\n"
            "--index-url https://mirror/simple\n"
            "-e git+https://github.com/triton-lang/triton.git#egg=triton\n"
            "${PKG}==1.0\n"
            "tritonclient#not a comment\n"
            "\r\n")
    assert [(r.line, r.kind, r.value) for r in requirement_lines(text, {"PKG": "xformers"})] == [
        (2, "requirement", "transformers==4.57.1     --hash=sha256:00"),
        (4, "-r", "other.txt"),
        (5, "-r", "more.txt"),
        (6, "-c", "pins.txt"),
        (8, "-e", "git+https://github.com/triton-lang/triton.git#egg=triton"),
        (9, "requirement", "xformers==1.0"),
        (10, "requirement", "tritonclient#not a comment"),
    ]


def test_editables_and_vcs_urls_of_triton_are_errors_and_other_packages_are_not() -> None:
    files = {f"{FOLDER}/requirements.txt": ("-e git+https://github.com/triton-lang/triton.git#egg=triton\n"
                                            "git+https://github.com/triton-lang/triton.git@v2.1.0#subdirectory=python\n"
                                            "tritonclient[all]\ntransformers\n")}
    found = check("set -e\npip install -r requirements.txt\n", files)
    assert [(line, severity) for _, line, severity, _ in found] == [(1, "error"), (2, "error")]
    found = check("set -e\npip install -e 'git+https://github.com/triton-lang/triton#egg=triton'\n", {})
    assert [(path, line, severity) for path, line, severity, _ in found] == [(SCRIPT, 2, "error")]


def hostile_requirements(run: int = 200_000) -> str:
    """Return a requirements file whose lines make a backtracking reader quadratic: long runs of spaces, then Triton."""
    return "\n".join([
        "a" + " " * run + "x",  # a name, spaces, then something that is no version
        " " * run + "y",  # spaces with no comment after them
        "numpy" + " " * run + "# pinned by the vendor",
        "b" + "\t" * run + "[",
        "triton==2.1.0",
    ]) + "\n"


def test_a_hostile_requirements_file_is_read_in_one_pass() -> None:
    files = {f"{FOLDER}/requirements.txt": hostile_requirements()}
    found = check("set -e\npip install -r requirements.txt\n", files)
    assert [(path, line, severity) for path, line, severity, _ in found if severity == "error"] == [
        (f"{FOLDER}/requirements.txt", 5, "error")]


def test_a_hostile_operand_in_the_script_is_read_in_one_pass() -> None:
    found = check('set -e\npip install "a' + " " * 200_000 + 'x" triton\n', {})
    assert [(line, severity, message.split(" (`")[1][:6]) for _, line, severity, message in found] == [
        (2, "error", "triton")]
