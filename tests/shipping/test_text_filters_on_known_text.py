"""What ``head``, ``tail``, ``cut`` and ``tr`` print where the reader knows the text they read.

``V=$(printf '%s\n' $LIST | head -n 1)`` and ``N=$(echo "$F" | cut -d. -f1)``
name paths from text the build holds: a pipe, a here-document, a placed
file. The table's outputs are what GNU coreutils 9.1 printed for the same
command line on the same text; a line coreutils refuses prints nothing and
fails. Where the input is unknown, or the command line holds what the reader
does not follow (several files, ``-z``, a ``1K`` count), what it prints is
unknown.
"""

from __future__ import annotations

import pytest

from patcher.shipping.text_filters import Filtered, filter_text
from tests.shipping.conftest import in_dest, run_script

TEXT = "a:b:c\nnodelim\nx:y\nlast"


@pytest.mark.parametrize(("program", "args", "printed", "ok"), [
    ('head', [], 'a:b:c\nnodelim\nx:y\nlast', True),
    ('head', ['-n', '2'], 'a:b:c\nnodelim\n', True),
    ('head', ['-2'], 'a:b:c\nnodelim\n', True),
    ('head', ['-n', '-1'], 'a:b:c\nnodelim\nx:y\n', True),
    ('head', ['-c', '5'], 'a:b:c', True),
    ('head', ['-c-3'], 'a:b:c\nnodelim\nx:y\nl', True),
    ('head', ['--lines=1'], 'a:b:c\n', True),
    ('head', ['-n', '0'], '', True),
    ('tail', ['-n', '1'], 'last', True),
    ('tail', ['-1'], 'last', True),
    ('tail', ['+2'], 'nodelim\nx:y\nlast', True),
    ('tail', ['-n', '+3'], 'x:y\nlast', True),
    ('tail', ['-c', '3'], 'ast', True),
    ('tail', ['-n', '9'], 'a:b:c\nnodelim\nx:y\nlast', True),
    ('tail', ['-n', '0'], '', True),
    ('tail', ['--lines=+1'], 'a:b:c\nnodelim\nx:y\nlast', True),
    ('cut', ['-d:', '-f2'], 'b\nnodelim\ny\nlast\n', True),
    ('cut', ['-d', ':', '-f', '1,3'], 'a:c\nnodelim\nx\nlast\n', True),
    ('cut', ['-d:', '-s', '-f2-'], 'b:c\ny\n', True),
    ('cut', ['-c2-3'], ':b\nod\n:y\nas\n', True),
    ('cut', ['-c', '-2'], 'a:\nno\nx:\nla\n', True),
    ('cut', ['-d:', '--complement', '-f1'], 'b:c\nnodelim\ny\nlast\n', True),
    ('cut', ['-d:', '-f3,1', '--output-delimiter=+'], 'a+c\nnodelim\nx\nlast\n', True),
    ('cut', ['--delimiter=:', '--fields=2'], 'b\nnodelim\ny\nlast\n', True),
    ('cut', ['-b1'], 'a\nn\nx\nl\n', True),
    ('cut', ['-f1'], 'a:b:c\nnodelim\nx:y\nlast\n', True),
    ('cut', ['-d::', '-f1'], '', False),
    ('cut', ['-f0'], '', False),
    ('cut', ['-f3-2'], '', False),
    ('cut', ['-d:'], '', False),
    ('cut', ['-c1', '-f1'], '', False),
    ('head', ['-n', 'x'], '', False),
    ('cut', ['-f', ''], '', False),
    ('head', ['-1'], 'a:b:c\n', True),  # the obsolete count keeps its meaning: the first line, not all but one
    ('head', ['-q', '-n', '1'], 'a:b:c\n', True),
    ('head', ['--quiet', '-n', '1'], 'a:b:c\n', True),
    ('tail', ['-n1', '--silent'], 'last', True),
    ('head', ['--bytes=5'], 'a:b:c', True),
    ('head', ['-n', '-9'], '', True),  # all but more lines than there are: nothing
    ('cut', ['--bytes=1'], 'a\nn\nx\nl\n', True),
    ('cut', ['--characters=2'], ':\no\n:\na\n', True),
    ('cut', ['--only-delimited', '-d:', '-f1'], 'a\nx\n', True),
    ('cut', ['-c1,3', '--output-delimiter=+'], 'a+b\nn+d\nx+y\nl+s\n', True),
    ('cut', ['-f-'], '', False),  # "invalid range with no endpoint"
    ('cut', ['-fx'], '', False),  # "invalid field value"
])
def test_head_tail_and_cut_print_what_coreutils_prints(program: str, args: list[str], printed: str, ok: bool) -> None:
    result = filter_text(program, args, lambda operand: TEXT if operand == "-" else None)
    assert (result.text, result.ok) == (printed, ok)


TR_TEXT = "Hello World-1.2\naab\\bcc..x\n"


@pytest.mark.parametrize(("args", "printed", "ok"), [
    (['[:upper:]', '[:lower:]'], 'hello world-1.2\naab\\bcc..x\n', True),
    (['a-z', 'A-Z'], 'HELLO WORLD-1.2\nAAB\\BCC..X\n', True),
    (['.', '_'], 'Hello World-1_2\naab\\bcc__x\n', True),
    (['-s', 'a-c'], 'Hello World-1.2\nab\\bc..x\n', True),
    (['-d', 'l'], 'Heo Word-1.2\naab\\bcc..x\n', True),
    (['el', 'x'], 'Hxxxo Worxd-1.2\naab\\bcc..x\n', True),
    (['\\\\', '/'], 'Hello World-1.2\naab/bcc..x\n', True),
    (['-d', '\\n'], 'Hello World-1.2aab\\bcc..x', True),
    (['-s', 'l', 'L'], 'HeLo WorLd-1.2\naab\\bcc..x\n', True),
    (['-', '_'], 'Hello World_1.2\naab\\bcc..x\n', True),
    ([' ', '\\n'], 'Hello\nWorld-1.2\naab\\bcc..x\n', True),
    (['a-c', 'x'], 'Hello World-1.2\nxxx\\xxx..x\n', True),
    (['-d', 'a-'], 'Hello World1.2\nb\\bcc..x\n', True),
    (['[:alpha:]', '*'], '***** *****-1.2\n***\\***..*\n', True),
    (['-ds', 'o', 'l'], 'Hel Wrld-1.2\naab\\bcc..x\n', True),
    (['-ds', 'o', ''], 'Hell Wrld-1.2\naab\\bcc..x\n', True),  # an empty set squeezes nothing
    (['-s', ''], 'Hello World-1.2\naab\\bcc..x\n', True),
    (['-t', 'abc', 'xy'], 'Hello World-1.2\nxxy\\ycc..x\n', True),
    (['abc', 'xy'], 'Hello World-1.2\nxxy\\yyy..x\n', True),
    (['-s', 'o'], 'Hello World-1.2\naab\\bcc..x\n', True),
    (['--delete', 'o'], 'Hell Wrld-1.2\naab\\bcc..x\n', True),
    (['a'], '', False),
    ([], '', False),
    (['-d'], '', False),
    (['-d', 'a', 'b'], '', False),
    (['abc', ''], '', False),
    (['\\101', 'z'], 'Hello World-1.2\naab\\bcc..x\n', True),
    (['a', 'b', 'c'], '', False),
    (['lo', '\\n\\t'], 'He\n\n\t W\tr\nd-1.2\naab\\bcc..x\n', True),
    (['[:space:]', '_'], 'Hello_World-1.2_aab\\bcc..x_', True),
    (['[:digit:][:punct:]', '#'], 'Hello World####\naab#bcc##x\n', True),
])
def test_tr_prints_what_coreutils_prints(args: list[str], printed: str, ok: bool) -> None:
    result = filter_text("tr", args, lambda operand: TR_TEXT if operand == "-" else None)
    assert (result.text, result.ok) == (printed, ok)


@pytest.mark.parametrize("args", [["-c", "a", "x"], ["[=a=]", "x"], ["[a*2]", "x"], ["z-a", "x"], ["é", "e"]])
def test_tr_sets_the_reader_does_not_follow_print_an_unknown_text(args: list[str]) -> None:
    assert filter_text("tr", args, lambda operand: TR_TEXT).text is None


@pytest.mark.parametrize(("program", "args"), [
    ("head", ["-z"]), ("tail", ["-f"]), ("head", ["-n", "1K"]), ("head", ["a", "b"]), ("cut", ["-z", "-f1"]),
    ("head", ["-n"]),  # coreutils refuses it ("option requires an argument"): left unknown
    ("cut", ["-d:", "-f1", "a", "unknown"]),
    ("head", ["-n", "1k"]), ("cut", ["--zero-terminated", "-f1"]),
])
def test_what_the_reader_does_not_follow_prints_an_unknown_text(program: str, args: list[str]) -> None:
    assert filter_text(program, args, lambda operand: TEXT if operand in ("-", "a", "b") else None).text is None


@pytest.mark.parametrize(("program", "args", "text", "printed"), [
    ("head", ["-c", "1"], "é\n", None),  # bytes of a text past ASCII are unknown
    ("cut", ["-b1"], "é\n", None),
    ("cut", ["--bytes=1"], "é\n", None),
    ("head", ["-n", "1"], "é\n", "é\n"),  # its lines and fields are known
    ("cut", ["-d:", "-f1"], "é:x\n", "é\n"),
    ("cut", ["-c2-"], "y" + "x" * 100 + "\n", "x" * 100 + "\n"),  # an open range runs to the end of a long line
])
def test_a_given_text_prints_what_coreutils_prints(program: str, args: list[str], text: str, printed: str | None,
                                                    ) -> None:
    assert filter_text(program, args, lambda operand: text if operand == "-" else None).text == printed


FILES = {"-": TEXT, "f": "f1\nf2\n", "+1": "file\n", "a": "a:1\n", "b": "b:2\n"}


@pytest.mark.parametrize(("program", "args", "printed"), [
    ("head", ["-1", "f"], "f1\n"),
    ("tail", ["-1", "f"], "f2\n"),
    ("head", ["+1"], "file\n"),  # head has no '+N' count: '+1' names a file
    ("cut", ["-d:", "-f1", "a", "b"], "a\nb\n"),
])
def test_operands_name_the_files_read(program: str, args: list[str], printed: str) -> None:
    assert filter_text(program, args, FILES.get) == Filtered(printed)


@pytest.mark.parametrize(("script", "placed"), [
    ("D=$(printf '%s\\n' /dest/l1 /dest/l2 | head -1)\ncp x.py \"$D.py\"\n", ["/dest/l1.py"]),
    ("D=$(printf '%s\\n' /dest/l1 /dest/l2 /dest/l3 | tail -n +2 | head -n -1)\ncp x.py \"$D.py\"\n", ["/dest/l2.py"]),
    ("D=$(echo /dest/a.b.c | cut -d. -f1)\ncp x.py \"$D.py\"\n", ["/dest/a.py"]),
    ("D=$(cut -d/ -f3 <<EOF\n/dest/hd/x\nEOF\n)\ncp x.py \"/dest/$D.py\"\n", ["/dest/hd.py"]),
    ("V=$(printf 'a\\tb\\n' | cut -f2)\ncp x.py \"/dest/$V.py\"\n", ["/dest/b.py"]),
    ("D=$(head -n 1 sub/list.txt)\ncp x.py \"/dest/$D.py\"\n", ["/dest/first.py"]),  # a file the context holds
    ("echo abc | cut -f0 || cp x.py /dest/refused.py\n", ["/dest/refused.py"]),
    ("D=$(echo 'a:/dest/b' | cut -sd: -f2)\ncp x.py \"$D.py\"\n", ["/dest/b.py"]),  # options clustered, as getopt
    ("D=$(echo /dest/A.B | cut -d. -f1 --complement)\ncp x.py \"/dest/$D.py\"\n", ["/dest/B.py"]),  # permuted
    ("echo a | tr a b -d || cp x.py /dest/extra.py\n", ["/dest/extra.py"]),  # tr's options come first
    ("N=$(echo VLLM-Ops | tr '[:upper:]' '[:lower:]' | tr - _)\ncp x.py \"/dest/$N.py\"\n", ["/dest/vllm_ops.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_path_made_by_head_tail_or_cut_of_known_text_is_known(script: str, placed: list[str], shell: str) -> None:
    plan = run_script(script, f"{shell} i.sh", files={"s/sub/list.txt": "first\nsecond\n"})
    assert in_dest(plan) == placed and plan.notes == ()


def test_head_of_unknown_text_is_an_unknown_value() -> None:
    plan = run_script("D=$(uname -m | head -n 1)\ncp x.py \"/dest/$D.py\"\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


# Each checked with GNU cut 9.1 ('refused': it prints nothing and exits 1; None: not known to the reader).
@pytest.mark.parametrize(("args", "text", "printed"), [
    # the output delimiter goes between the runs of selected bytes: overlapping ranges are one run
    (["-c1-2,3", "--output-delimiter=+"], "abcdef\n", "ab+c\n"),
    (["-c1-3,2-4,6", "--output-delimiter=+"], "abcdef\n", "abcd+f\n"),
    (["-c5-,1-2", "--output-delimiter=+"], "abcdef\n", "ab+ef\n"),
    (["-c1,5", "--output-delimiter=+"], "ab\n", "a\n"),
    (["-c2", "--complement", "--output-delimiter=+"], "abcdef\n", "a+cdef\n"),
    (["-c1,3", "--complement", "--output-delimiter=+"], "abcdef\n", "b+def\n"),
    (["-c3-", "--complement", "--output-delimiter=+"], "abcdef\n", "ab\n"),
    (["-b1", "-b2"], "ab\n", "refused"),  # "only one list may be specified"
    (["-c1", "--characters=2"], "ab\n", "refused"),
    (["-d:", "-f1,3", "--output-delimiter="], "a:b:c\n", None),  # an empty delimiter is a NUL byte
    (["-c1"], "é\n", None),  # -c counts bytes, as -b does
])
def test_cut_prints_what_gnu_cut_prints(args: list[str], text: str, printed: str | None) -> None:
    result = filter_text("cut", args, lambda operand: text if operand == "-" else None)
    assert (result.text, result.ok) == (("", False) if printed == "refused" else (printed, True))


def test_each_file_cut_reads_ends_its_last_line() -> None:
    files = {"a": "a:1\nlast", "b": "b:2\n"}
    assert filter_text("cut", ["-d:", "-f1", "a", "b"], files.get) == Filtered("a\nlast\nb\n")
