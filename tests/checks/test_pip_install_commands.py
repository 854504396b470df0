"""How install scripts are read for ``pip install``: which commands install, and each operand at its line.

The shapes are the ones install scripts take (VENDOR.md): several
commands a line, continuations, ``sudo``/``env`` prefixes, ``python3 -m
pip``, options that take a value, comments and quotes, CRLF.
"""

from __future__ import annotations

import pytest

from tests.fixtures_rules import all_installs, triton_installs


def test_a_vendor_style_script_names_each_operand_at_its_line() -> None:
    script = ("#!/bin/bash\r\n"
              "cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py\r\n"
              "pip install transformers==4.57.1 --no-deps  # the tokenizer needs it\r\n"
              "python3 ./patch_qwen.py\r\n"
              "pip3 install -U triton==2.1.0 \\\r\n"
              "    ./wheels/xformers-0.0.27-cp310-cp310-linux_x86_64.whl\r\n")
    assert all_installs(script) == [(3, "transformers==4.57.1"), (5, "triton==2.1.0"),
                                   (5, "./wheels/xformers-0.0.27-cp310-cp310-linux_x86_64.whl")]
    assert triton_installs(script) == [(5, "triton==2.1.0")]


def test_each_command_of_a_line_is_read() -> None:
    script = ("set -e; PKG=triton && pip install $PKG || echo failed | tee log & wait\n"
              "cd /tmp&&pip install triton-nightly;echo done\n")
    assert triton_installs(script) == [(1, "triton"), (2, "triton-nightly")]


def test_comments_and_quoted_words_are_not_commands() -> None:
    script = ("# pip install triton\n"
              "echo 'pip install triton'  # pip install triton\n"
              "echo \"don't\n"  # a quote the reader cannot close: that line is left out, not the rest
              "pip install \"triton==2.1.0\" 'pytorch-triton'\n")
    assert triton_installs(script) == [(4, "triton==2.1.0"), (4, "pytorch-triton")]


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
def test_pip_run_through_a_prefix_or_python_m_is_read(command: str) -> None:
    assert triton_installs(f"set -e\n{command}\n") == [(2, "triton")]


@pytest.mark.parametrize("command", [
    "if [ ! -f /tmp/done ]; then pip install triton; fi",
    "if true; then :; else pip install triton; fi",
    "for i in 1; do pip3 install triton; done",
    "while false; do :; done; ! pip install triton",
    "{ pip install triton; }",
    "time pip install triton",
    "uv pip install --system triton",
    "bash -c 'pip install triton'",
    "/bin/sh -ec \"python3 -m pip install triton\"",
])
def test_pip_run_inside_a_one_line_compound_command_or_a_shell_string_is_read(command: str) -> None:
    assert triton_installs(f"set -e\n{command}\n") == [(2, "triton")]


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
def test_other_commands_are_not_pip_installs(command: str) -> None:
    assert triton_installs(f"{command}\n") == []


@pytest.mark.parametrize("option", ["-r", "-c", "--requirement", "--constraint", "-i", "--index-url",
                                    "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix",
                                    "--root"])
def test_an_option_value_is_not_a_package(option: str) -> None:
    # Each of these options takes the next word as its value: a file, URL or folder, never a package.
    assert all_installs(f"pip install {option} triton transformers\n") == [(1, "transformers")]


def test_flags_without_a_value_are_skipped_and_the_operand_after_them_is_read() -> None:
    assert all_installs("pip install --no-deps -U --force-reinstall triton -q vllm\n") == [
        (1, "triton"), (1, "vllm")]


def test_an_option_written_with_its_value_is_never_an_operand() -> None:
    assert all_installs("pip install --no-index --find-links=/wheels/triton-2.1.0.tar.gz vllm\n") == [(1, "vllm")]


def test_options_before_install_do_not_count() -> None:
    assert all_installs("pip -q --disable-pip-version-check install triton\n") == [(1, "triton")]
