"""What ``printf FORMAT ARGS...`` prints, built only up to what the reader keeps of a word.

``printf_output`` gives the exact text POSIX printf prints, or None when the
reader cannot say it exactly. Past ``shell_words.MAX_WORD`` characters the
text is not built at all (None): every character the format prints counts
toward that, the ``%`` of a ``%%`` as much as a padded argument.
"""

from __future__ import annotations

import pytest

from patcher.shipping.printf_format import printf_output
from patcher.shipping.shell_words import MAX_WORD
from tests.shipping.conftest import in_dest, run_script


def test_percent_percent_prints_one_percent_sign() -> None:
    # An install script's progress line: 'printf "%d%%\n" 50' prints "50%" and a newline, as sh's printf does.
    assert printf_output("%d%%\\n", ["50"]) == "50%\n"
    assert printf_output("%s%%|", ["10", "20"]) == "10%|20%|"


def test_output_up_to_the_limit_is_built_and_the_percent_sign_counts_toward_it() -> None:
    # A padded field exactly one under the limit, then '%%': the whole text is the limit, still built.
    assert printf_output(f"%{MAX_WORD - 1}s%%", ["x"]) == " " * (MAX_WORD - 2) + "x%"
    # The field at the limit itself: the '%' after it is one character past, so printf's text is not built.
    assert printf_output(f"%{MAX_WORD}s%%", ["x"]) is None
    assert printf_output(f"%{MAX_WORD}s" + "%%" * 100, ["x"]) is None


@pytest.mark.parametrize("fmt", ["%" + "9" * 5000 + "s", "%." + "9" * 5000 + "s", "%0" + "0" * 5000 + "9" * 5000 + "d"],
                         ids=["width", "precision", "zeros-then-width"])
def test_a_width_or_precision_of_thousands_of_digits_is_past_the_limit(fmt: str) -> None:
    # bash 5.2 and dash 0.5.12 fail to print it (dash: "xvsnprintf failed"); the reader builds none of it.
    assert printf_output(fmt, ["1"]) is None


def test_zeros_before_a_width_are_flags() -> None:
    assert printf_output("%" + "0" * 100_000 + "5d|%0005s", ["7", "x"]) == "00007|    x"


def test_an_octal_escape_ends_at_the_first_character_that_is_not_an_octal_digit() -> None:
    # bash, dash and coreutils' printf: '\18' is \1 then an '8', '\1A' is \1 then an 'A'; in a %b argument too.
    assert printf_output("\\18|\\1A|\\0779", []) == "\x018|\x01A|?9"
    assert printf_output("%b", ["\\018|\\0101A"]) == "\x018|AA"


@pytest.mark.parametrize("argument", ["abc", "12abc", "'12 '", "1.5"])
@pytest.mark.parametrize("shell", ["bash i.sh", "dash i.sh"])
def test_a_number_printf_cannot_read_fails_it(argument: str, shell: str) -> None:
    """bash 5.2 and dash 0.5.12: "invalid number" (status 1), though each prints something (0, or the digits)."""
    plan = run_script(f"printf '%d' {argument} >/dev/null 2>&1 || cp x.py /dest/failed$?.py\n", shell)
    assert in_dest(plan) == ["/dest/failed1.py"]


def test_a_format_printf_reads_but_the_reader_does_not_is_taken_to_succeed() -> None:
    plan = run_script("printf '%q' 'a b' >/dev/null && cp x.py /dest/ok.py\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/ok.py"]


@pytest.mark.parametrize(("fmt", "printed"), [
    ("%05s|", "  xyz|"), ("%+s|", "xyz|"), ("% s|", "xyz|"), ("%#s|", "xyz|"), ("%0-5s|", "xyz  |"),
    ("%05.1s|", "    x|"), ("%+ #.2s|", "xy|"), ("%05.0s|", "     |"),
    ("%05b|", "  xyz|"), ("%#-4b|", "xyz |"),
    ("%05c|", "    x|"), ("% c|", "x|"), ("%.0c|", "x|"), ("%-3.0c|", "x  |"),
])
def test_flags_but_minus_change_nothing_on_strings_and_c_takes_no_precision(fmt: str, printed: str) -> None:
    # bash 5.2.15 and dash 0.5.12 print these alike (status 0), for the argument xyz: 0, +, space and # are
    # ignored on %s, %b and %c (padding is spaces, never zeros), - pads on the right; '%.0c' still prints x.
    assert printf_output(fmt, ["xyz"]) == printed


@pytest.mark.parametrize("shell", ["bash i.sh", "dash i.sh", "sh i.sh"])
def test_a_zero_padded_or_signed_string_is_what_both_shells_print(shell: str) -> None:
    # bash and dash: printf '[%05s][%+s][%-5s][% s][%#s][%.2s][%05.1s]' 7 x x x x xyz xyz prints
    # [    7][x][x    ][x][x][xy][    x].
    script = "cp x.py \"/dest/$(printf '[%05s][%+s][%-5s][% s][%#s][%.2s][%05.1s]' 7 x x x x xyz xyz).py\"\n"
    plan = run_script(script, shell)
    assert in_dest(plan) == ["/dest/[    7][x][x    ][x][x][xy][    x].py"] and not plan.notes


@pytest.mark.parametrize(("line", "bash", "dash"), [
    ("printf '%#%'", 1, 2),  # bash: "`%': invalid format character" (1); dash: "%#%: invalid directive" (2)
    ("printf '%#x' abc", 1, 1),  # both: abc is no number (bash "invalid number", dash "expected numeric value")
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_the_hash_flag_on_a_percent_sign_or_on_a_word_that_is_no_number_fails_printf(
        line: str, bash: int, dash: int, shell: str) -> None:
    plan = run_script(f"{line} >/dev/null 2>&1 || cp x.py /dest/failed$?.py\n", f"{shell} i.sh")
    assert in_dest(plan) == [f"/dest/failed{bash if shell == 'bash' else dash}.py"]


@pytest.mark.parametrize("fmt", ["%c", "%.1s", "%5s", "%-4b", "%3c"])
def test_a_width_precision_or_c_of_a_character_past_ascii_is_unknown(fmt: str) -> None:
    # bash 5.2 and dash 0.5.12 count bytes: printf '[%c][%.1s][%5s][%-4b]' é é é é prints [\303][\303][   é][é  ]
    # (é is 2 bytes in UTF-8), not what counting characters gives; the reader does not know the bytes of its text.
    assert printf_output(fmt, ["é"]) is None
    assert printf_output("%s|", ["é"]) == "é|"  # printed whole, the text is what it is
