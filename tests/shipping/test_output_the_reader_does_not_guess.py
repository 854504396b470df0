"""What ``printf``, dash's ``echo``, ``readlink`` and ``realpath`` print where the reader does not say it exactly.

Pins: each form below prints something the reader leaves unknown rather
than guess (a path built from it is unread, scoped to the folder it is in,
and nothing is placed), and the command is taken to succeed: ``%%`` with a
width, the ``#`` flag on a number (``%#x``), ``\\c`` in a ``%b`` with a
width, ``%c`` of nothing (a NUL), ``%d`` of an unknown value, of the code of
a character past ASCII (bash 5.2 prints 233 for 'é, dash 0.5.12 195), a
backslash escape dash's echo has no meaning for, bash's ``printf -v`` into a
name the reader cannot know, ``readlink`` of a base image's path, and
``realpath --relative-base``. Where the shell that runs a printf fails it
(an option-like format, ``%%`` with a width, dash and a number past 64 bits,
which both shells print as the limit), the reader fails it too.
"""

from __future__ import annotations

import pytest

from patcher.shipping.printf_format import Failure, printf_outcome
from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("fmt", "args"), [
    ("%#x", ["255"]),  # both print 0xff
    ("%#o", ["8"]),  # both print 010
    ("%5b|", ["a\\c"]),  # both print '    a' and stop there
    ("%c", [""]),  # both print a NUL
    ("%d", ["'\u00e9"]),  # bash 233, dash 195
    ("%d", ["'"]),  # a quote and no character: both print 0
])
def test_printf_output_the_reader_cannot_say_exactly_is_none_and_no_sure_failure(fmt: str, args: list[str]) -> None:
    assert printf_outcome(fmt, args) == (None, None)


@pytest.mark.parametrize(("fmt", "args", "outcome"), [
    ("%5%", [], (None, Failure(bash=1, dash=2))),  # bash: "invalid format character", dash: "invalid directive"
    ("a%-%", [], (None, Failure(bash=1, dash=2))),
    # Past 64 bits both print the limit strtoimax/strtoumax give; bash only warns, dash fails (1).
    ("%d", ["99999999999999999999"], ("9223372036854775807", Failure(bash=None, dash=1))),
    ("%d", ["-99999999999999999999"], ("-9223372036854775808", Failure(bash=None, dash=1))),
    ("%5d|", ["99999999999999999999"], ("9223372036854775807|", Failure(bash=None, dash=1))),
    ("%x", ["18446744073709551616"], ("ffffffffffffffff", Failure(bash=None, dash=1))),
    ("%x", ["-99999999999999999999"], ("ffffffffffffffff", Failure(bash=None, dash=1))),
    ("%u", ["99999999999999999999"], ("18446744073709551615", Failure(bash=None, dash=1))),
    ("%d", ["9223372036854775807"], ("9223372036854775807", None)),  # the limit itself fits
    ("%d", ["abc"], (None, Failure(bash=1, dash=1))),
])
def test_printf_that_a_shell_fails_says_how_each_shell_fails_it(fmt: str, args: list[str],
                                                               outcome: tuple[str | None, Failure | None]) -> None:
    assert printf_outcome(fmt, args) == outcome


@pytest.mark.parametrize(("command", "shell"), [
    ("printf 'a%5%'", "bash i.sh"),
    ("printf '%#x' 255", "bash i.sh"),
    ("printf '%5b' 'a\\c'", "dash i.sh"),
    ("printf 'a%c'", "bash i.sh"),
    ("printf '%d' \"$(cat /opt/n)\"", "bash i.sh"),
    ("printf '%d' \"'\u00e9\"", "sh i.sh"),
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


@pytest.mark.parametrize("command", ["printf '%#x' 255", "printf -v \"$NAME\" '%s' a", "echo 'a\\x41b'"])
def test_a_command_printing_what_the_reader_does_not_guess_succeeds(command: str) -> None:
    # bash 5.2 (printf -v with NAME=foo sets foo) and dash 0.5.12: status 0, so set -e reads on.
    for shell in ("bash i.sh", "dash i.sh") if "-v" not in command else ("bash i.sh",):
        plan = run_script(f"set -e\n{command} >/dev/null\ncp x.py /dest/\n", shell)
        assert in_dest(plan) == ["/dest/x.py"]
        assert plan.notes == ()


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


@pytest.mark.parametrize(("command", "shell", "placed"), [
    ('printf "-%s-" a', "bash i.sh", "/dest/s2.py"),
    ('printf "-%s-" a', "dash i.sh", "/dest/s2.py"),
    ("printf -x", "bash i.sh", "/dest/s2.py"),
    ("printf -v V", "bash i.sh", "/dest/s2.py"),  # -v NAME and no format: bash's usage line, status 2
    ("printf -v V %s a", "dash i.sh", "/dest/s2.py"),  # dash's printf has no -v
    ("printf -- -x", "dash i.sh", "/dest/s0.py"),  # after --, -x is the format: it prints '-x'
    ("printf 'a%5%'", "bash i.sh", "/dest/s1.py"),
    ("printf 'a%5%'", "dash i.sh", "/dest/s2.py"),
    ("printf '%d' 99999999999999999999", "dash i.sh", "/dest/s1.py"),
    ("printf '%d' 99999999999999999999", "bash i.sh", "/dest/s0.py"),  # bash only warns
])
def test_a_printf_ends_with_the_status_its_shell_gives(command: str, shell: str, placed: str) -> None:
    # bash 5.2 and dash 0.5.12, run on each line.
    plan = run_script(f"{command} >/dev/null\ncp x.py /dest/s$?.py\n", shell)
    assert in_dest(plan) == [placed]


def test_a_number_past_64_bits_prints_as_the_limit() -> None:
    # bash 5.2 and dash 0.5.12 both print 9223372036854775807 (dash then fails, so it is left of ||).
    plan = run_script("v=$(printf '%d' 99999999999999999999 || true)\ncp x.py \"/dest/$v\"\n", "dash i.sh")
    assert in_dest(plan) == ["/dest/9223372036854775807"]
