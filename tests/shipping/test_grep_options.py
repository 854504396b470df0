"""Which of grep's options the reader follows when it works out grep's status from a text it knows.

``grep --ignore-case``, ``fgrep``, ``grep --regexp=P``, ``-x``, ``-w``
(with ``-i``) and a pattern of several lines decide the status as GNU grep
3.8 does; a text whose last line has no newline is read to its end. What
the reader cannot settle the same way — the last of ``-i`` and
``--no-ignore-case`` (it keeps no order), an extended regular expression
(``egrep``, ``--extended-regexp``), ``-i`` with a non-ASCII pattern (the
image's locale folds it or not), or a search whose backtracking would cost
more than the reader spends — is left to the image. Each row was run through
GNU grep 3.8 (bash 5.2).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

FILES = {
    "s/paged_attn.py": "import torch\nHAS_TRITON = False\n",
    "s/unended.txt": "x\nabc",  # no newline after the last line
    "s/spaced.txt": "a b",
    "s/two.txt": "a\nb",
    "s/accented.txt": "é\n",
    "s/sharp_s.txt": "ß\n",
    "s/a_e_b.txt": "aéb\n",
    "s/kelvin.txt": "\u212a\n",  # the Kelvin sign, which Unicode folds to 'k'
    "s/e_foo.txt": "éfoo\n",
    "s/long_line.txt": "a" * 5000 + "\n",  # 5,000 steps to search, whatever ** 2 would make of it
    "s/short_lines.txt": ("a" * 50 + "\n") * 100,  # 100 lines of 50: 12.5M steps for '.*.*x', the whole 132G
    "s/at_the_bound.txt": ("a" * 100 + "\n") * 20,  # 20 lines of 100: 20M steps for '.*.*x', what it spends
    "s/wide_line.txt": "a" * 250 + "\n",  # 15.6M steps for '.*.*x', 31M for it and one other pattern
    "s/spaced_line.txt": "a " * 150 + "\n",  # one line of 300 (27M steps for '.*.*x'), of words of one
}


def status_of(line: str) -> str:
    return f"{line}\ncp x.py /dest/s$?.py\n"


@pytest.mark.parametrize(("script", "placed"), [
    (status_of("grep --ignore-case -q triton paged_attn.py"), ["/dest/s0.py"]),
    (status_of("grep -q --no-ignore-case TRITON paged_attn.py"), ["/dest/s0.py"]),
    (status_of("fgrep -q a.c <<EOF\nabc\nEOF"), ["/dest/s1.py"]),  # '.' is only a dot
    (status_of("grep -q --regexp=HAS_TRITON paged_attn.py"), ["/dest/s0.py"]),
    (status_of("grep -q 'nothere\nHAS_TRITON' paged_attn.py"), ["/dest/s0.py"]),  # one pattern a line
    (status_of("grep -q 'a+b' <<EOF\na+b\nEOF"), ["/dest/s0.py"]),  # '+' is itself in a BRE
    (status_of("grep -qwF a.b <<EOF\nx a.b y\nEOF"), ["/dest/s0.py"]),
    (status_of("grep -q 'é' <<EOF\ncafé\nEOF"), ["/dest/s0.py"]),
    (status_of("grep -q 'a.*b.*c' <<EOF\nxabcx\nEOF"), ["/dest/s0.py"]),
    (status_of("grep -qiw TRITON <<EOF\nuse triton now\nEOF"), ["/dest/s0.py"]),
    (status_of("grep -qw TRITON <<EOF\nuse triton now\nEOF"), ["/dest/s1.py"]),
    (status_of("grep -qx HAS paged_attn.py"), ["/dest/s1.py"]),
    (status_of("grep -q abc unended.txt"), ["/dest/s0.py"]),
    (status_of("grep -qx 'a b' spaced.txt"), ["/dest/s0.py"]),
    (status_of("grep -qx b two.txt"), ["/dest/s0.py"]),
    (status_of("grep -q b long_line.txt"), ["/dest/s1.py"]),
    (status_of("grep -q '.*.*x' short_lines.txt"), ["/dest/s1.py"]),
    (status_of("grep -q '.*.*x' at_the_bound.txt"), ["/dest/s1.py"]),
    ("grep || cp x.py /dest/usage.py\n", ["/dest/usage.py"]),  # no pattern: a usage error (status 2)
])
def test_the_options_grep_reads_decide_its_status(script: str, placed: list[str]) -> None:
    plan = run_script(script, files=FILES)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("line", [
    "grep -q -i --no-ignore-case triton paged_attn.py",  # the last one counts: GNU grep finds nothing
    "grep -q --extended-regexp 'a+b' two.txt",
    "egrep -q 'a+b' two.txt",
    # Past ASCII the image's locale decides (GNU grep 3.8 under LC_ALL=C, then C.UTF-8):
    "grep -qi 'É' accented.txt",  # 1, then 0
    "grep -q 'a.b' a_e_b.txt",  # 1 ('.' is one byte of 'é'), then 0
    "grep -qi k kelvin.txt",  # 1 in both, where Python's IGNORECASE folds the Kelvin sign to 'k'
    "grep -qw foo e_foo.txt",  # 0 ('é' is no letter in C), then 1
    "grep -qwi ss sharp_s.txt",
    "grep -q 'a.*b.*c.*' unended.txt",  # three stars
    "grep -q -e '.*.*x' -e y wide_line.txt",
    "grep -q '.*.*x' spaced_line.txt",
])
def test_what_the_reader_cannot_read_as_grep_does_leaves_the_status_to_the_image(line: str) -> None:
    plan = run_script(f"{line} && cp x.py /dest/u.py\n", files=FILES)
    assert in_dest(plan) == ["/dest/u.py"] and [n.kind for n in plan.notes] == ["assumed"]
