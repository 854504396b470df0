"""How a ``pip install`` operand's shell variables are expanded: assigned or exported alone, from the environment
(the Dockerfile's ``ENV``/``ARG``), and the ``${VAR:-default}`` forms (``-``, ``=``, ``+``, with or without ``:``), whose
default may name another variable. A variable nothing sets is kept as written."""

from __future__ import annotations

from patcher.checks.pip_installs import logical_lines, pip_installs

from tests.fixtures_rules import all_installs, triton_installs


def test_variables_assigned_exported_and_from_the_environment() -> None:
    script = ("VERSION=2.1.0\n"
              "export WHEEL=./triton-${VERSION}-cp310-cp310-linux_x86_64.whl\n"
              "pip install $WHEEL\n"
              "pip install ${EXTRA}\n"
              "pip install $UNSET_ONE\n")
    assert triton_installs(script, {"EXTRA": "pytorch-triton"}) == [
        (3, "./triton-2.1.0-cp310-cp310-linux_x86_64.whl"), (4, "pytorch-triton")]


def test_an_environment_value_can_itself_be_expanded_by_a_later_assignment() -> None:
    assert triton_installs("PKG=$NAME-nightly\npip install $PKG\n", {"NAME": "triton"}) == [(2, "triton-nightly")]


def test_a_script_without_an_environment_keeps_unknown_variables_as_written() -> None:
    assert all_installs("pip install $PKG ${OTHER}\n") == []
    assert pip_installs(logical_lines("pip install $PKG\n"), lambda p: True) == [(1, "$PKG")]


def test_an_assignment_only_counts_alone_or_exported_alone() -> None:
    script = ("PKG=triton echo hi\n"  # a variable for one command, not for the script
              "export A=1 PKG=triton\n"  # two at once: not followed
              "export\n"
              "pip install $PKG\n")
    assert triton_installs(script) == []
    assert pip_installs(logical_lines(script), lambda p: True) == [(4, "$PKG")]


def test_a_default_names_triton_when_the_variable_is_unset() -> None:
    script = ("#!/bin/bash\r\n"
              "# the other card family's build; override with TRITON_PKG\r\n"
              "pip install ${TRITON_PKG:-triton==2.1.0} --no-deps 2>/dev/null || true\r\n"
              "pip3 install \"${PKG:-triton}\"\r\n"
              "python3 -m pip install '${NOT_EXPANDED:-triton}'x\r\n")
    assert triton_installs(script) == [(3, "triton==2.1.0"), (4, "triton")]


def test_colon_dash_takes_the_default_when_empty_plain_dash_only_when_unset() -> None:
    script = ("PKG=\n"
              "pip install ${PKG:-triton}\n"
              "pip install ${PKG-triton}\n"
              "pip install ${OTHER-pytorch-triton}\n")
    assert triton_installs(script) == [(2, "triton"), (4, "pytorch-triton")]


def test_a_set_variable_wins_over_its_default() -> None:
    script = "pip install ${PKG:-triton} ${PKG2-triton}\n"
    assert triton_installs(script, {"PKG": "transformers==4.57.1", "PKG2": ""}) == []
    assert triton_installs("PKG=xformers\npip install ${PKG:=triton}\npip install $PKG\n") == []


def test_colon_equals_assigns_the_default_for_later_lines() -> None:
    script = (": \"${TRITON_WHEEL:=./triton-2.1.0-cp310-cp310-linux_x86_64.whl}\"\n"
              "echo installing $TRITON_WHEEL\n"
              "pip3 install \"$TRITON_WHEEL\" || true\n"
              "pip install ${PKG:=triton}; pip install --no-deps $PKG\n")
    assert triton_installs(script) == [(3, "./triton-2.1.0-cp310-cp310-linux_x86_64.whl"), (4, "triton"), (4, "triton")]


def test_a_default_that_names_another_variable_is_expanded_too() -> None:
    script = ("WHEELS=/opt/wheels\n"
              "pip install ${TRITON_WHEEL:-${WHEELS}/triton-2.1.0-cp310-cp310-linux_x86_64.whl}\n"
              "pip install ${TRITON_WHEEL:-$WHEELS/triton-2.1.0-cp310-cp310-linux_x86_64.whl}\n")
    wheel = "/opt/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl"
    assert triton_installs(script) == [(2, wheel), (3, wheel)]


def test_colon_plus_gives_its_word_only_when_set_and_not_empty() -> None:
    script = "pip install transformers ${WITH_TRITON:+triton}\n"
    assert triton_installs(script, {"WITH_TRITON": "1"}) == [(1, "triton")]
    assert triton_installs(script, {"WITH_TRITON": ""}) == []
    assert triton_installs(script) == []
