"""How ``xargs`` reads its own command line, as GNU xargs 4.9 (findutils) reads it.

Options come first: flags (``-0 -r -t -x -p``), letters that take a value in the same word or the next
(``-n 2``, ``-n2``, ``-I {}``), clusters of them (``-rtn1``), long names with ``=`` or a separate value
(``--max-args=2``, ``--max-args 2``); ``-i``, ``-l`` and ``-e`` take a value in the same word only (``-iX``;
bare ``-i`` means ``-I {}``). ``--`` ends them, and so does the first word that does not start with ``-``
(``-`` itself is such a word): that word is the command, ``echo`` where there is none. What the reader does
not follow (``-a``, ``-E``, ``-p``, ``--open-tty``, ``-s``, ``-L``, a delimiter of more than one character,
a count that is not a number) or what xargs itself refuses (an unknown option, a missing value) is noted.
Each end-to-end row was run with bash 5.2 and GNU xargs 4.9 in a temp dir with the same outcome.
"""

from __future__ import annotations

import pytest

from patcher.shipping.xargs_program import read_xargs
from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("args", "options", "command"), [
    (["-r"], {"r": ""}, ["echo"]),  # options only: the command is echo
    (["-r", "-t", "cp"], {"r": "", "t": ""}, ["cp"]),
    (["-rtx0", "cp"], {"r": "", "t": "", "x": "", "0": ""}, ["cp"]),
    (["-", "x"], {}, ["-", "x"]),  # a lone dash is the command
    (["--", "-r"], {}, ["-r"]),  # after --, the command, even one that looks like an option
    (["-r", "--", "rm", "-f"], {"r": ""}, ["rm", "-f"]),
    (["--no-run-if-empty", "--verbose", "rm"], {"r": "", "t": ""}, ["rm"]),
    (["--null", "--exit", "rm"], {"0": "", "x": ""}, ["rm"]),
    (["--max-args", "2", "rm", "x"], {"n": "2"}, ["rm", "x"]),
    (["--max-args=2", "rm"], {"n": "2"}, ["rm"]),
    (["--replace=F", "cp", "F", "/d"], {"I": "F"}, ["cp", "F", "/d"]),
    (["--delimiter", ",", "rm"], {"d": ","}, ["rm"]),
    (["-n", "2", "rm", "x"], {"n": "2"}, ["rm", "x"]),
    (["-n2", "rm"], {"n": "2"}, ["rm"]),
    (["-rtn1", "rm"], {"r": "", "t": "", "n": "1"}, ["rm"]),  # the valued letter takes the rest of the word
    (["-0n", "3", "rm"], {"0": "", "n": "3"}, ["rm"]),  # or, at its end, the next word
    (["-I", "{}", "cp", "{}", "/d"], {"I": "{}"}, ["cp", "{}", "/d"]),
    (["-i", "cp", "{}", "/d"], {"I": "{}"}, ["cp", "{}", "/d"]),  # bare -i: -I {}
    (["-iFILE", "cp", "FILE", "/d"], {"I": "FILE"}, ["cp", "FILE", "/d"]),
    (["-riX", "cp", "X", "/d"], {"r": "", "I": "X"}, ["cp", "X", "/d"]),
    (["-ir", "cp", "r", "/d"], {"I": "r"}, ["cp", "r", "/d"]),  # -i takes the rest of its word as its string
    (["-P", "1", "rm"], {"P": "1"}, ["rm"]),
])
def test_xargs_reads_its_options_up_to_the_command(args: list[str], options: dict[str, str],
                                                   command: list[str]) -> None:
    line = read_xargs(args)
    assert not isinstance(line, str), line
    assert (line.options, line.command) == (options, command)


@pytest.mark.parametrize(("script", "placed"), [
    ("echo x.py | xargs | xargs cp -t /dest\n", ["/dest/x.py"]),  # no command: xargs echoes
    ("echo x.py | xargs -r | xargs cp -t /dest\n", ["/dest/x.py"]),
    ("echo x.py | xargs -i cp {} /dest/i.py\n", ["/dest/i.py"]),
    ("echo x.py | xargs -riF cp F /dest/F\n", ["/dest/x.py"]),
    ("echo x.py | xargs -iFILE cp FILE /dest/FILE.bak\n", ["/dest/x.py.bak"]),
    ("echo x.py sub/y.py | xargs --max-args 1 cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("echo x.py sub/y.py | xargs -rn 1 cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("echo x.py | xargs -- cp -t /dest/\n", ["/dest/x.py"]),
    ("printf x.py | xargs -0rn1 cp -t /dest\n", ["/dest/x.py"]),
    ("printf 'x.py,sub/y.py' | xargs --delimiter=, cp -t /dest\n", ["/dest/x.py", "/dest/y.py"]),
    ("echo x.py | xargs --show-limits cp -t /dest\n", ["/dest/x.py"]),  # its limits go to standard error
    # GNU xargs 4.9 takes an -n past any count (5,000 digits): one command for all the items.
    pytest.param("echo x.py sub/y.py | xargs -n " + "9" * 5000 + " cp -t /dest\n", ["/dest/x.py", "/dest/y.py"],
                 id="an -n of 5000 digits"),
])
def test_the_command_after_xargs_options_runs_on_its_input(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed
    assert not plan.notes


@pytest.mark.parametrize(("xargs", "said"), [
    # Options real xargs has that the reader does not follow.
    ("xargs -a list.txt cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs --arg-file=list.txt cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -E END cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -eEND cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -p cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs --interactive cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs --open-tty cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -s 100 cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -L 1 cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -l cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs -d ab cp -t /dest", "xargs with an option the reader does not follow"),  # xargs: invalid delimiter
    ("xargs -n abc cp -t /dest", "xargs -n abc"),  # xargs: invalid number "abc" for -n option
    ("xargs --max-args=x cp -t /dest", "xargs -n x"),
    ("xargs --process-slot-var=V cp -t /dest", "xargs with an option the reader does not follow"),
    ("xargs --process-slot-var V cp -t /dest", "xargs with an option the reader does not follow"),
    # What real xargs refuses (status 1, runs nothing).
    ("xargs -n", "xargs -n without its value"),
    ("xargs --max-args", "xargs --max-args without its value"),
    ("xargs -y cp -t /dest", "xargs -y"),
    ("xargs -ry cp -t /dest", "xargs -y"),
    ("xargs --null-x cp -t /dest", "xargs --null-x"),
    ("xargs --verbose=1 cp -t /dest", "xargs --verbose=1"),
    ("xargs -n 0 cp -t /dest", "xargs -n 0"),  # "value 0 for -n option should be >= 1"
    ("xargs --max-args=00 cp -t /dest", "xargs -n 00"),
])
def test_xargs_options_the_reader_does_not_follow_are_noted(xargs: str, said: str) -> None:
    plan = run_script(f"echo x.py | {xargs}\n", files={"s/list.txt": "x.py\n"})
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("program", f"runs {said}, which the reader does not follow: it could change any file")]
