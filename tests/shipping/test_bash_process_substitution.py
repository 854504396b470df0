"""bash's process substitution, ``<(...)`` and ``>(...)``, and ``mapfile``/``readarray``.

A process substitution is a word of its own: its command runs (what it
copies is placed) and the word names the pipe, ``/dev/fd/63``. It stopped
the reading before (``done < <(find ...)``, ``diff <(a) <(b)`` are common in
bash scripts). ``mapfile``/``readarray`` fill an array from their input: its
lines where the reader knows it (a here-document or here-string, the pipe or
loop around it) and ``-t`` is the only option, else unknown, and a path built
from it is unread. For dash the
form is a syntax error, and the script is not read on.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest as placed
from tests.shipping.conftest import run_script as read




@pytest.mark.parametrize(("script", "files"), [
    ("diff <(cat x.py) <(cat sub/y.py) || true\ncp x.py /dest/after.py\n", ["/dest/after.py"]),
    ("cat <(cp x.py /dest/side.py) > /dev/null\ncp x.py /dest/after.py\n", ["/dest/after.py", "/dest/side.py"]),
    ("tee >(cp x.py /dest/side.py) < x.py > /dev/null\ncp x.py /dest/after.py\n", ["/dest/after.py", "/dest/side.py"]),
    ("while read -r f; do\n  echo \"$f\"\ndone < <(find . -name '*.py')\ncp x.py /dest/after.py\n", ["/dest/after.py"]),
    ("readarray -d '' -t files < <(printf '%s\\0' x.py)\ncp x.py /dest/after.py\n", ["/dest/after.py"]),
])
def test_a_process_substitution_runs_its_command_and_the_script_reads_on(script: str, files: list[str]) -> None:
    plan = read(script)
    assert placed(plan) == files and plan.notes == ()


def test_a_process_substitution_names_a_pipe() -> None:
    plan = read('P=<(true)\ncase "$P" in /dev/fd/*) cp x.py /dest/pipe.py ;; esac\n')
    assert placed(plan) == ["/dest/pipe.py"]


@pytest.mark.parametrize("made", ["mapfile -t files < <(ls *.py)", "readarray files < /etc/vendor/list.txt",
                                  "mapfile -n 2 -O 0 -- files < <(ls)"])
def test_mapfile_fills_an_array_the_reader_cannot_know(made: str) -> None:
    plan = read(f'{made}\nfor f in "${{files[@]}}"; do cp "$f" /dest/; done\ncp x.py /dest/after.py\n')
    assert placed(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


@pytest.mark.parametrize(("made", "files"), [
    ("mapfile -t files <<EOF\nx.py\nsub/y.py\nEOF", ["/dest/x.py", "/dest/y.py"]),
    ("printf 'x.py\\nsub/y.py\\n' | { mapfile -t files; for f in \"${files[@]}\"; do cp \"$f\" /dest/; done; }",
     ["/dest/x.py", "/dest/y.py"]),
    ("readarray -t files <<< x.py", ["/dest/x.py"]),
    ("mapfile files <<< x.py", []),  # without -t each element keeps its newline: 'x.py\n' is no file
])
def test_mapfile_of_known_lines_fills_its_array_with_them(made: str, files: list[str]) -> None:
    plan = read(f'{made}\nfor f in "${{files[@]}}"; do cp "$f" /dest/ 2>/dev/null; done\n')
    assert placed(plan) == files


def test_mapfile_replaces_what_its_array_held() -> None:
    # The array named after the options is refilled from the input: its old elements are gone.
    plan = read('files=(x.py)\nmapfile -t files < <(ls *.py)\ncp "${files[0]}" /dest/one.py\ncp x.py /dest/after.py\n')
    assert placed(plan) == ["/dest/after.py"] and [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]


@pytest.mark.parametrize("made", ["mapfile", "mapfile -t", "readarray -t -s 1"])
def test_mapfile_without_a_name_fills_mapfile(made: str) -> None:
    # The options (and the values -s, -n, -d... take) are no name: what is left is none, so MAPFILE.
    plan = read(f'{made} < <(ls)\ncp "${{MAPFILE[0]}}" /dest/one.py\ncp x.py /dest/after.py\n')
    assert placed(plan) == ["/dest/after.py"] and [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


def test_under_sh_mapfile_is_noted_as_bash_only() -> None:
    plan = read("mapfile files < /etc/vendor/list.txt\ncp x.py /dest/after.py\n", run="sh i.sh")
    assert placed(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, "mapfile is bash's: under the base image's sh it may not exist")]


def test_under_dash_a_process_substitution_is_a_syntax_error() -> None:
    plan = read("diff <(cat x.py) <(cat sub/y.py) || true\ncp x.py /dest/after.py\n", run="dash i.sh")
    assert placed(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("stop", 1)]


def test_mapfile_with_an_option_it_does_not_have_leaves_mapfile_as_it_was() -> None:
    # bash 5.2: "mapfile: -X: invalid option" (status 2); the word after -X is no option value, and MAPFILE,
    # which no name took the place of, still holds what it held.
    plan = read("MAPFILE=(a)\nmapfile -X lines <<< x.py\ncp x.py \"/dest/${MAPFILE[0]}.py\"\n")
    assert placed(plan) == ["/dest/a.py"]
