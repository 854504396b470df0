"""``basename``, ``dirname``, ``realpath`` and ``readlink -f`` print a path the reader works out, as GNU
coreutils 9.1 prints it: their options read by getopt's rules (``-s SUFFIX`` takes a value, ``-a`` many names,
``--relative-to=DIR``), every operand printed, and what a value the reader cannot know decides left unknown.

Each row was run with coreutils 9.1 on the same paths (``tr / _`` keeps what they print one file name).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


def printed(command: str, setup: str = "") -> list[str]:
    return in_dest(run_script(f"{setup}X=$({command} | tr / _)\ncp x.py \"/dest/<$X>.py\"\n"))


@pytest.mark.parametrize(("command", "output"), [
    ("basename -s .py /a/b.py", "b,"), ("basename --suffix=.py /a/b.py /c/d.py", "b,d,"),
    ("basename /a/b.py .py", "b,"), ("basename -a /a/b /c/d", "b,d,"), ("basename --multiple x/y", "y,"),
    ("basename /a/b/", "b,"), ("basename /", "_,"), ("basename ''", ","), ("basename .py .py", ".py,"),
    ("basename -- -x", "-x,"),
    ("dirname /a/b/c.py", "_a_b,"), ("dirname /a/b/ /c", "_a,_,"), ("dirname //", "_,"), ("dirname a/", ".,"),
    ("realpath --relative-to=/w /w/s/x.py", "s_x.py,"), ("realpath --relative-to /w/s/sub /w/s/x.py", ".._x.py,"),
    ("realpath -s sub/../x.py", "_w_s_x.py,"), ("realpath x.py sub", "_w_s_x.py,_w_s_sub,"),
    ("readlink -f x.py", "_w_s_x.py,"), ("readlink -e x.py", "_w_s_x.py,"),
    ("realpath -m /w/s/none/../x.py", "_w_s_x.py,"),
])
def test_a_path_printer_prints_what_coreutils_prints(command: str, output: str) -> None:
    # Each line it prints, its newline made a comma.
    assert printed(f"{command} | tr '\\n' ,") == [f"/dest/<{output}>.py"]


@pytest.mark.parametrize(("command", "output"), [
    ("realpath --relative-to=l x.py", ".._w_s_x.py,"),
    ("realpath -s --relative-to=l x.py", ".._x.py,"), ("realpath --strip --relative-to=l x.py", ".._x.py,"),
    ("realpath --no-symlinks --relative-to=l x.py", ".._x.py,"),
])
def test_realpath_measures_from_a_linked_folder_itself_where_told_not_to_follow_links(command: str, output: str) -> None:
    # coreutils 9.1, l a link to /dest: from /dest, x.py is ../w/s/x.py; with -s (--strip, --no-symlinks) l stays
    # /w/s/l and x.py is ../x.py.
    assert printed(f"{command} | tr '\\n' ,", "ln -s /dest l\n") == [f"/dest/<{output}>.py"]


@pytest.mark.parametrize("command", ['dirname "$VENDOR_HOME"', 'dirname "/opt/${V}x"', 'dirname "$VENDOR_HOME/"',
                                     'realpath --relative-to="$VENDOR_HOME" x.py'])
def test_a_folder_that_hangs_on_an_unknown_last_component_is_unknown(command: str) -> None:
    # $VENDOR_HOME may hold '/opt/vendor': its dirname is '/opt', not '.'; '/opt/${V}x' with V=a/b is '/opt/a'.
    plan = run_script(f"X=$({command})\ncp x.py \"/dest/<$X>.py\"\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_a_folder_above_an_unknown_value_is_known_up_to_it() -> None:
    plan = run_script('cp x.py "$(dirname "$VENDOR_HOME/lib/x.py")/y.py"\n')
    assert [n.reason for n in plan.notes] == [
        "cp $VENDOR_HOME/lib/y.py: a path that depends on a value the reader cannot work out"]


@pytest.mark.parametrize(("command", "status"), [("basename", "1"), ("dirname", "1"), ("basename a b c", "1")])
def test_a_path_printer_without_its_operands_fails(command: str, status: str) -> None:
    # coreutils 9.1: "missing operand" / "extra operand 'c'", status 1.
    assert in_dest(run_script(f"{command}\ncp x.py /dest/after$?.py\n")) == [f"/dest/after{status}.py"]


@pytest.mark.parametrize("command", ["basename -z /a/b", "basename --zero /a/b", "dirname -z a/b", "realpath -z x.py"])
def test_a_path_printer_that_ends_its_lines_with_nul_succeeds(command: str) -> None:
    # coreutils 9.1: status 0 (what it prints, NUL-ended, the reader leaves unknown).
    assert in_dest(run_script(f"{command}\ncp x.py /dest/after$?.py\n")) == ["/dest/after0.py"]


@pytest.mark.parametrize("command", ["dirname --zero a/b", "basename --zero /a/b", "realpath --zero x.py",
                                     "readlink --zero -f x.py", "dirname --ze a/b"])
def test_a_path_printer_given_the_long_zero_option_does_not_print_a_newline_ended_line(command: str) -> None:
    # coreutils 9.1 with bash 5.2: X=$(dirname --zero a/b; echo z) is 'az' ("a", a NUL bash drops, "z"),
    # not 'a' and 'z' on two lines; the reader leaves what --zero prints unknown.
    plan = run_script(f"X=$({command}; echo z)\ncp x.py \"/dest/<$X>.py\"\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize(("command", "status"), [
    ("realpath /dest/none/x", "1"), ("realpath -e /dest/new", "1"), ("readlink -f /dest/none/x", "1"),
    ("readlink -e x.py/y", "1"), ("realpath x.py/y", "1"), ("readlink x.py", "1"),  # a file, not a link
    ("realpath /dest/new", "0"), ("realpath -m /dest/none/x", "0"), ("readlink -f /dest/new", "0"),
    ("realpath /opt/vendor/none/x", "0"),  # the base image may have /opt/vendor/none
])
def test_a_path_printer_fails_where_coreutils_cannot_name_the_path(command: str, status: str) -> None:
    # coreutils 9.1: realpath and readlink -f want the folder the path is in, -e the path itself, -m nothing;
    # readlink alone wants a link.
    assert in_dest(run_script(f"{command} > /dev/null\ncp x.py /dest/after$?.py\n")) == [f"/dest/after{status}.py"]
