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
