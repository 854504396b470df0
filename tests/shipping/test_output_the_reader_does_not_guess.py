"""What ``printf``, dash's ``echo``, ``readlink`` and ``realpath`` print where the reader does not say it exactly.

Pins: each form below prints something the reader leaves unknown rather
than guess (a path built from it is unread, scoped to the folder it is in,
and nothing is placed), and the command is taken to succeed: ``%%`` with a
width, a flag C leaves undefined for ``%s``, ``\\c`` in a ``%b`` with a
width, ``%c`` of nothing (a NUL), ``%d`` of an unknown value, of the code of
a character past ASCII (bash 5.2 prints 233 for 'é, dash 0.5.12 195) or of a
number past 64 bits (both print the limit; bash succeeds, dash fails), a
backslash escape dash's echo has no meaning for, bash's ``printf -v`` into a
name the reader cannot know, ``readlink`` of a base image's path, and
``realpath --relative-base``. Where the shell that runs such a printf fails
it (an option-like format, ``%%`` with a width, dash past 64 bits), the
reader still takes it to succeed: those are reader bugs, kept as xfail.
"""

from __future__ import annotations

import pytest

from patcher.shipping.printf_format import printf_outcome
from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("fmt", "args"), [
    ("%5%", []),  # bash: "invalid format character" (1), dash: "invalid directive" (2)
    ("%05s", ["a"]),  # both print '    a'
    ("%+s", ["a"]),  # both print 'a'
    ("%5b|", ["a\\c"]),  # both print '    a' and stop there
    ("%c", [""]),  # both print a NUL
    ("%d", ["'\u00e9"]),  # bash 233, dash 195
    ("%d", ["'"]),  # a quote and no character: both print 0
    ("%d", ["99999999999999999999"]),  # both 9223372036854775807: bash succeeds (a warning), dash fails (1)
    ("%d", ["-99999999999999999999"]),  # both -9223372036854775808
])
def test_printf_output_the_reader_cannot_say_exactly_is_none_and_no_sure_failure(fmt: str, args: list[str]) -> None:
    assert printf_outcome(fmt, args) == (None, False)


@pytest.mark.parametrize(("command", "shell"), [
    ("printf 'a%5%'", "bash i.sh"),
    ("printf '%05s' a", "bash i.sh"),
    ("printf '%5b' 'a\\c'", "dash i.sh"),
    ("printf 'a%c'", "bash i.sh"),
    ("printf '%d' \"$(cat /opt/n)\"", "bash i.sh"),
    ("printf '%d' \"'\u00e9\"", "sh i.sh"),
    ("printf '%d' 99999999999999999999", "bash i.sh"),
    ("echo 'a\\x41b'", "dash i.sh"),  # dash 0.5.12 prints 'a\x41b'
    ("readlink /usr/bin/python3", "bash i.sh"),  # the base image's link, if it is one
    ("realpath --relative-base=/w/s /w/s/x.py", "bash i.sh"),  # coreutils 9.1: x.py
])
def test_a_path_built_from_output_the_reader_does_not_guess_is_unread(command: str, shell: str) -> None:
    plan = run_script(f'v=$({command})\ncp x.py "/dest/a$v"\n', shell)
    assert in_dest(plan) == []
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 2, f"cp /dest/a$({command}): a path that depends on a value the reader cannot work out",
         ("/dest",))]


@pytest.mark.parametrize("command", ["printf '%05s' a", "printf -v \"$NAME\" '%s' a", "echo 'a\\x41b'"])
def test_a_command_printing_what_the_reader_does_not_guess_succeeds(command: str) -> None:
    # bash 5.2 (printf -v with NAME=foo sets foo) and dash 0.5.12: status 0, so set -e reads on.
    for shell in ("bash i.sh", "dash i.sh") if "-v" not in command else ("bash i.sh",):
        plan = run_script(f"set -e\n{command} >/dev/null\ncp x.py /dest/\n", shell)
        assert in_dest(plan) == ["/dest/x.py"]
        assert plan.notes == ()


@pytest.mark.xfail(strict=True, reason="reader bug: printf is taken to succeed where the shell running it fails it")
@pytest.mark.parametrize(("command", "shell"), [
    ('printf "-%s-" a', "bash i.sh"),  # bash 5.2: "-%: invalid option", status 2
    ('printf "-%s-" a', "dash i.sh"),  # dash 0.5.12: "Illegal option -%", status 2
    ("printf 'a%5%'", "bash i.sh"),  # bash 5.2: "`%': invalid format character", status 1
    ("printf 'a%5%'", "dash i.sh"),  # dash 0.5.12: "%5%: invalid directive", status 2
    ("printf '%d' 99999999999999999999", "dash i.sh"),  # dash 0.5.12: "Numerical result out of range", status 1
])
def test_a_printf_the_shell_refuses_ends_a_set_e_script(command: str, shell: str) -> None:
    plan = run_script(f"set -e\n{command} >/dev/null\ncp x.py /dest/\n", shell)
    assert in_dest(plan) == []
