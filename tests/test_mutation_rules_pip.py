"""How install scripts and Dockerfile ``RUN`` lines are read for ``pip install``: each operand and its line.

The shapes are the ones install scripts take (VENDOR.md): variables set
and exported, several commands a line, continuations, ``sudo``/``env``
prefixes, ``python3 -m pip``, options that take a value, wheels named
by path or URL.
"""

from __future__ import annotations

import pytest

from patcher.checks.triton_installs import is_triton_project
from patcher.checks.pip_installs import dockerfile_runs, logical_lines, pip_installs, project_name


def _triton(script: str, environment: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """Return (line, operand) of each Triton build the script pip-installs."""
    return pip_installs(logical_lines(script), is_triton_project, environment)


def _everything(script: str) -> list[tuple[int, str]]:
    return pip_installs(logical_lines(script), lambda project: bool(project))


def test_a_vendor_style_script_names_each_operand_at_its_line() -> None:
    script = ("#!/bin/bash\r\n"
              "cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py\r\n"
              "pip install transformers==4.57.1 --no-deps  # the tokenizer needs it\r\n"
              "python3 ./patch_qwen.py\r\n"
              "pip3 install -U triton==2.1.0 \\\r\n"
              "    ./wheels/xformers-0.0.27-cp310-cp310-linux_x86_64.whl\r\n")
    assert _everything(script) == [(3, "transformers==4.57.1"), (5, "triton==2.1.0"),
                                   (5, "./wheels/xformers-0.0.27-cp310-cp310-linux_x86_64.whl")]
    assert _triton(script) == [(5, "triton==2.1.0")]


def test_variables_assigned_exported_and_from_the_environment() -> None:
    script = ("VERSION=2.1.0\n"
              "export WHEEL=./triton-${VERSION}-cp310-cp310-linux_x86_64.whl\n"
              "pip install $WHEEL\n"
              "pip install ${EXTRA}\n"
              "pip install $UNSET_ONE\n")
    assert _triton(script, {"EXTRA": "pytorch-triton"}) == [
        (3, "./triton-2.1.0-cp310-cp310-linux_x86_64.whl"), (4, "pytorch-triton")]


def test_an_environment_value_can_itself_be_expanded_by_a_later_assignment() -> None:
    assert _triton("PKG=$NAME-nightly\npip install $PKG\n", {"NAME": "triton"}) == [(2, "triton-nightly")]


def test_a_script_without_an_environment_keeps_unknown_variables_as_written() -> None:
    assert _everything("pip install $PKG ${OTHER}\n") == []
    assert pip_installs(logical_lines("pip install $PKG\n"), lambda p: True) == [(1, "$PKG")]


def test_an_assignment_only_counts_alone_or_exported_alone() -> None:
    script = ("PKG=triton echo hi\n"  # a variable for one command, not for the script
              "export A=1 PKG=triton\n"  # two at once: not followed
              "export\n"
              "pip install $PKG\n")
    assert _triton(script) == []
    assert pip_installs(logical_lines(script), lambda p: True) == [(4, "$PKG")]


def test_several_commands_on_a_line() -> None:
    script = ("set -e; PKG=triton && pip install $PKG || echo failed | tee log & wait\n"
              "cd /tmp&&pip install triton-nightly;echo done\n")
    assert _triton(script) == [(1, "triton"), (2, "triton-nightly")]


def test_comments_and_quotes() -> None:
    script = ("# pip install triton\n"
              "echo 'pip install triton'  # pip install triton\n"
              "echo \"don't\n"  # a quote the reader cannot close: that line is left out, not the rest
              "pip install \"triton==2.1.0\" 'pytorch-triton'\n")
    assert _triton(script) == [(4, "triton==2.1.0"), (4, "pytorch-triton")]


@pytest.mark.parametrize("command", [
    "sudo pip install triton",
    "env PIP_NO_CACHE_DIR=1 pip install triton",
    "command pip3 install triton",
    "exec /usr/bin/pip3.10 install triton",
    "PIP_INDEX_URL=http://mirror/simple pip install triton",
    "python3 -m pip install triton",
    "/usr/bin/python3.10 -m pip install triton",
    "python -m pip install --upgrade triton",
    "sudo env A=1 python3 -m pip install triton",
])
def test_prefixes_and_ways_to_run_pip(command: str) -> None:
    assert _triton(f"set -e\n{command}\n") == [(2, "triton")]


@pytest.mark.parametrize("command", [
    "python3 -m pipx install triton",
    "python3 -c 'import pip' install triton",
    "python3 install triton",
    "pip download triton",
    "pip uninstall -y triton",
    "pipenv install triton",
    "conda install triton",
    "sudo",
    "echo pip install triton",
])
def test_what_is_not_a_pip_install(command: str) -> None:
    assert _triton(f"{command}\n") == []


@pytest.mark.parametrize("option", ["-r", "-c", "--requirement", "--constraint", "-i", "--index-url",
                                    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix",
                                    "--root"])
def test_an_option_value_is_not_a_package(option: str) -> None:
    # Each of these options takes the next word as its value: a file, URL or folder, never a package.
    assert _everything(f"pip install {option} triton transformers\n") == [(1, "transformers")]


def test_flags_without_a_value_are_skipped_and_the_operand_after_them_is_read() -> None:
    assert _everything("pip install --no-deps -U --force-reinstall triton -q vllm\n") == [
        (1, "triton"), (1, "vllm")]


def test_an_option_written_with_its_value_is_never_an_operand() -> None:
    assert _everything("pip install --no-index --find-links=/wheels/triton-2.1.0.tar.gz vllm\n") == [(1, "vllm")]


def test_options_before_install_do_not_count() -> None:
    assert _everything("pip -q --disable-pip-version-check install triton\n") == [(1, "triton")]


@pytest.mark.parametrize("word, project", [
    ("triton", "triton"),
    ("Triton==2.1.0", "triton"),
    ("triton[tests]>=2.1", "triton"),
    ("pytorch_triton.rocm~=3.0", "pytorch-triton-rocm"),
    ("triton ; python_version >= '3.8'", "triton"),
    ("triton@https://example.com/triton-2.1.0.tar.gz", "triton"),
    ("./wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl", "triton"),
    ("https://mirror/triton-2.1.0.tar.gz?token=a-b?c#sha256=x-y#z", "triton"),
    ("https://mirror/get?name=triton-2.1.0.whl", ""),
    ("./triton-2.1.0-cp310-cp310-linux_x86_64.whl#sha256=ab#egg=triton", "triton"),
    ("/tmp/pytorch_triton-3.0.0.zip", "pytorch-triton"),
    ("file:///wheels/Triton-Nightly-3.0.whl#egg=x", "triton"),
    (".", ""),
    ("git+https://github.com/triton-lang/triton", ""),
])
def test_project_name(word: str, project: str) -> None:
    assert project_name(word) == project


def test_dockerfile_runs_in_shell_and_exec_form() -> None:
    dockerfile = ("FROM registry/bi100-py3.10:v1.2.3\r\n"
                  "RUN mkdir /workspace\r\n"
                  "run pip install triton==2.1.0 \\\r\n"
                  "    && rm -rf /root/.cache\r\n"
                  "RUN [\"pip3\", \"install\", \"pytorch triton\"]\r\n"
                  "RUN [\"pip3\", 1]\r\n"
                  "RUN [not json\r\n"
                  "RUN pip install vllm\r\n"
                  "RUN\r\n"
                  "# RUN pip install triton\r\n"
                  "ENV RUN=1\r\n")
    runs = [(line, " ".join(command.split()) if line == 3 else command) for line, command in dockerfile_runs(dockerfile)]
    assert runs == [
        (2, "mkdir /workspace"),
        (3, "pip install triton==2.1.0 && rm -rf /root/.cache"),
        (5, "pip3 install 'pytorch triton'"),
        (6, '["pip3", 1]'),
        (8, "pip install vllm"),
    ]
