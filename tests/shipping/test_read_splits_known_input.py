"""``read`` splits a line it can know (a here-document's, bash's here-string's, a placed file's) by IFS, as sh does.

IFS white space around fields is dropped and runs of it separate; another
IFS character separates once; the last name gets the rest of the line,
less one delimiter that ends it when it holds no other. Input the reader
does not know (what a program prints, a file of unknown text) or an option
it does not follow (-d, -n, -t, -u) gives unknown values. bash's
``printf -v NAME`` keeps what printf would print.
"""

from __future__ import annotations

import pytest

from patcher.shipping import ShipPlan
from patcher.shipping.shell_builtins import split_fields
from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script


# Each row is what bash 5.2 and dash 0.5.12 gave for 'IFS=$IFS read -r v0 v1 ... <<EOF\nLINE\nEOF'.
@pytest.mark.parametrize(("line", "ifs", "count", "fields"), [
    ("a b  c", " \t\n", 2, ["a", "b  c"]), ("  a b  c  ", " \t\n", 3, ["a", "b", "c"]),
    ("x.py,y", ",", 2, ["x.py", "y"]), ("a,,b", ",", 3, ["a", "", "b"]), ("a , b ,c", ", ", 3, ["a", "b", "c"]),
    ("a,b,c,d", ",", 2, ["a", "b,c,d"]), ("a b c", " ", 1, ["a b c"]), (" a ", " \t\n", 1, ["a"]),
    ("a,", ",", 2, ["a"]), ("a:b:c", ":", 5, ["a", "b", "c"]), ("", " ", 2, []),
    ("a,b,", ",", 2, ["a", "b"]), ("a,b,,", ",", 2, ["a", "b,,"]), ("a  b , ", ", ", 2, ["a", "b"]),
    ("  :, :", ":,", 1, ["  :, :"]), ("a:,: :", ":,", 2, ["a", ",: :"]), ("a b", "", 2, ["a b"]),
    ("XaXXb", "X", 5, ["", "a", "", "b"]),  # a letter in IFS is no white space: each one separates
])
def test_a_line_splits_into_fields_as_sh_splits_it(line: str, ifs: str, count: int, fields: list[str]) -> None:
    assert split_fields(line, ifs, count) == fields


def read(script: str, run: str = "bash i.sh") -> ShipPlan:
    return run_script(script, run, {"s/list.txt": "x.py\n"})


@pytest.mark.parametrize(("script", "files"), [
    ("IFS=, read -r a b <<< 'x.py,y'\ncp \"$a\" /dest/$b.py\n", ["/dest/y.py"]),
    ("IFS=,\nread -r a b <<< 'x.py,y'\ncp \"$a\" /dest/$b.py\n", ["/dest/y.py"]),  # the shell's IFS splits too
    ("read -r name rest <<EOF\nx.py  and more\nEOF\ncp \"$name\" \"/dest/${rest// /_}.py\"\n", ["/dest/and_more.py"]),
    ("read -r -a parts <<< 'one two'\ncp x.py /dest/${parts[1]}.py\n", ["/dest/two.py"]),
    ("read <<< 'a\\b c'\ncp x.py \"/dest/$REPLY.py\"\n", ["/dest/ab c.py"]),  # without -r a backslash escapes
    ("read -r <<< 'a\\b'\ncp x.py \"/dest/$REPLY.py\"\n", ["/dest/a\\b.py"]),
    ("read -r a <<< ''\ncp x.py \"/dest/[$a].py\"\n", ["/dest/[].py"]),
    ("read -r -p 'Install to: ' dir <<< 'opt'\ncp x.py /dest/$dir.py\n", ["/dest/opt.py"]),  # -p takes a prompt
])
def test_read_from_a_here_string_or_document_gives_its_fields(script: str, files: list[str]) -> None:
    plan = read(script)
    assert placed(plan) == files and plan.notes == ()


@pytest.mark.parametrize("script", [
    "read -r a < /etc/os-release\ncp x.py \"/dest/$a\"\n",  # a file of the base image's
    "ls | { read -r a; cp x.py \"/dest/$a\"; }\n",
    "read -r -d '' a <<< 'x.py'\ncp x.py \"/dest/$a\"\n",  # an option the reader does not follow
    "read -X a <<< 'x.py'\ncp x.py \"/dest/$a\"\n",  # an option read does not have (bash fails it)
    "REPLY=x.py\nread < /etc/os-release\ncp x.py \"/dest/$REPLY\"\n",  # no name: REPLY gets the line
])
def test_read_from_input_the_reader_cannot_know_gives_unknown_values(script: str) -> None:
    plan = read(script)
    assert placed(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_read_from_a_file_the_build_placed_gives_its_first_line() -> None:
    plan = read("read -r a < list.txt\ncp x.py \"/dest/$a\"\n")
    assert placed(plan) == ["/dest/x.py"] and plan.notes == ()


def test_read_fails_at_the_end_of_input_without_a_newline() -> None:
    plan = read("if read -r a <<EOF\nEOF\nthen cp x.py /dest/line.py; else cp x.py /dest/none.py; fi\n"
                "read -r b <<EOF\nx.py\nEOF\ncp x.py /dest/$b\n")
    assert placed(plan) == ["/dest/none.py", "/dest/x.py"]


def test_bash_printf_v_keeps_what_printf_prints() -> None:
    plan = read("printf -v DEST '%s/%s' /dest sub\nmkdir \"$DEST\"\ncp x.py \"$DEST/x.py\"\n")
    assert placed(plan) == ["/dest/sub/x.py"] and plan.notes == ()


def test_bash_printf_v_reads_its_format_after_a_double_dash() -> None:
    plan = read("printf -v DEST -- '%s/%s' /dest sub\nmkdir \"$DEST\"\ncp x.py \"$DEST/x.py\"\n")
    assert placed(plan) == ["/dest/sub/x.py"] and plan.notes == ()


def test_read_after_unset_ifs_splits_at_blanks() -> None:
    # bash 5.2 and dash 0.5.12 both print x-y.py for: unset IFS; read a b <<EOF / x  y.py / EOF; echo "$a-$b"
    plan = read("unset IFS\nread a b <<EOF\nx  y.py\nEOF\ncp x.py \"/dest/$a-$b\"\n")
    assert placed(plan) == ["/dest/x-y.py"] and plan.notes == ()


def test_a_line_of_millions_of_blanks_is_split_in_one_pass() -> None:
    # Whether a delimiter ends the last field was a search that began again at each blank: this line took
    # about twenty minutes to read; now it is read at once.
    line = "a" + " " * 2_000_000 + "b"
    assert split_fields(line, " ,", 1) == [line]
    assert split_fields(line + " , ", " ,", 1) == [line]
    assert split_fields("a" + " " * 2_000_000 + ", ", " ,", 1) == ["a"]
