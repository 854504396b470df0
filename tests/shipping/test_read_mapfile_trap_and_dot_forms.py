"""Less common forms of ``read``, ``mapfile``, ``trap`` and ``.``, read as bash 5.2 and dash 0.5.12 run them.

``read -n N`` inside a pipe takes part of a line: what the next ``read``
gets is then unknown to the reader (bash gives it the rest of the input).
``read -a ARRAY`` with an option the reader does not follow leaves ARRAY
unknown, never the elements it held before. ``read``'s options take a
value attached (``-d,``, ``-rd,``) or from the next word (``-d ,``), as
bash's parser reads them; dash's ``read`` has only ``-p`` and ``-r``, and fails
(status 2) at any other letter. ``mapfile`` on the script's own standard input
(not a pipe, a here-document or a loop's) gives an unknown array. ``trap -- ACTION EXIT`` sets the trap as ``trap ACTION
EXIT`` does; ``trap``, ``trap -p`` and ``trap -l`` print what only the
image's shell knows, and succeed. ``.`` with no file is dash's no-op
(status 0); bash fails it, and ``source`` with no file, with status 2
("filename argument required") and reads on; dash has no ``source`` (status
127). ``. FILE ARGS`` gives FILE ARGS in bash, which puts the script's own
back after it unless FILE replaced them with ``set`` outside a function;
dash ignores ARGS, and what FILE does to the script's own stays (as it does
in both without ARGS). Each expected result was checked by running the script under
bash 5.2.15 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script

UNWORKED = "a path that depends on a value the reader cannot work out"


def test_a_read_n_in_a_pipe_leaves_what_the_next_read_gets_unknown() -> None:
    # bash: read -n 2 takes "a" and the newline, the next read takes "b" (/dest/l-b).
    plan = run_script('printf "a\\nb\\n" | { read -n 2 c; read l; cp x.py "/dest/l-$l"; }\n')
    assert in_dest(plan) == []  # never /dest/l-a, the line the reader would take next
    assert notes(plan) == [("unread", 1, 'cp x.py "/dest/l-$l"', f"cp /dest/l-$(read l): {UNWORKED}")]


def test_read_a_with_an_option_not_followed_leaves_the_array_unknown() -> None:
    # bash: read -a arr -n 3 takes "new": arr=(new), so the copy lands at /dest/new.
    plan = run_script('arr=(old)\nread -a arr -n 3 <<< "new b"\ncp x.py "/dest/${arr[0]}"\n')
    assert in_dest(plan) == []  # never /dest/old
    assert notes(plan) == [("unread", 3, 'cp x.py "/dest/${arr[0]}"', f"cp /dest/${{arr[0]}}: {UNWORKED}")]


def test_mapfile_on_the_scripts_own_input_gives_an_unknown_array() -> None:
    plan = run_script('arr=(old)\nmapfile -t arr\ncp x.py "/dest/${arr[0]}-n${#arr[@]}"\n')
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 3, 'cp x.py "/dest/${arr[0]}-n${#arr[@]}"',
                            f"cp /dest/${{arr[0]}}-n${{#arr[@]}}: {UNWORKED}")]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_trap_double_dash_sets_the_exit_trap(run: str) -> None:
    plan = run_script('trap -- "cp x.py /dest/t" EXIT\ncp x.py /dest/a\n', run=run)
    assert in_dest(plan) == ["/dest/a", "/dest/t"]
    assert notes(plan) == []


@pytest.mark.parametrize("listing", ["trap -l", "trap -p", "trap"])
def test_a_trap_listing_prints_what_only_the_image_knows_and_succeeds(listing: str) -> None:
    plan = run_script(f'V=$({listing})\ncp x.py "/dest/a$V"\n{listing} > /dev/null && cp x.py /dest/ok\n')
    assert in_dest(plan) == ["/dest/ok"]
    assert notes(plan) == [("unread", 2, 'cp x.py "/dest/a$V"', f"cp /dest/a$({listing}): {UNWORKED}")]


def test_a_dot_with_no_file_does_nothing_in_dash() -> None:
    plan = run_script(". || cp x.py /dest/failed\ncp x.py /dest/after\n", run="dash i.sh")
    assert in_dest(plan) == ["/dest/after"]
    assert notes(plan) == []


@pytest.mark.parametrize("command", [".", "source"])
def test_a_dot_or_source_with_no_file_fails_in_bash(command: str) -> None:
    plan = run_script(f"{command} || cp x.py /dest/failed\ncp x.py /dest/after\n")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]


@pytest.mark.parametrize(("command", "run", "placed"), [
    (". --", "bash i.sh", ["/dest/after", "/dest/failed2"]),  # '--' ends the options: still no file
    (". --", "dash i.sh", ["/dest/after"]),
    ("source", "dash i.sh", ["/dest/after", "/dest/failed127"]),  # dash has no 'source': "not found"
])
def test_a_dot_or_source_with_no_file_after_double_dash_or_in_dash(command: str, run: str, placed: list[str]) -> None:
    plan = run_script(f"{command} || cp x.py /dest/failed$?\ncp x.py /dest/after\n", run=run)
    assert in_dest(plan) == placed


@pytest.mark.parametrize("options", ["-d ,", "-t 5", "-n 9"])
def test_read_a_after_an_option_with_a_value_replaces_the_whole_array(options: str) -> None:
    # bash: arr=(a): ${arr[1]} is empty, so the copy lands at /dest/[] (or the reader cannot say).
    plan = run_script(f'arr=(x y)\nread {options} -a arr <<< "a,b"\ncp x.py "/dest/[${{arr[1]}}]"\n')
    assert "/dest/[y]" not in in_dest(plan)


@pytest.mark.parametrize("options", ["-d,", "-rd,", "-rd ,", "-p '> '", "-rp ''"])
def test_read_takes_an_options_value_attached_or_from_the_next_word(options: str) -> None:
    # bash: -a arr after the option is read as an option, never as names; with -p alone arr=(a,b c), known to the reader.
    plan = run_script(f'arr=(x y z)\nread {options} -a arr <<< "a,b c"\ncp x.py "/dest/[${{arr[2]}}]"\n')
    assert "/dest/[z]" not in in_dest(plan)
    if "-p" in options:
        assert in_dest(plan) == ["/dest/[]"]



@pytest.mark.parametrize("run", ["dash i.sh", "sh i.sh"])
@pytest.mark.parametrize("option", ["-a", "-s", "-e", "-t 1", "-d ,", "-n 1", "-rs"])
def test_a_read_option_dash_lacks_leaves_the_value_and_status_unknown(option: str, run: str) -> None:
    # dash 0.5.12: "read: Illegal option -a", status 2, A unset; bash reads "1 2". Under the image's sh either.
    plan = run_script(f"read {option} A <<EOF\n1 2\nEOF\ncp x.py /dest/s$?.py\ncp x.py /dest/a$A.py\n", run)
    assert in_dest(plan) == []
    assert [(kind, line) for kind, line, _, _ in notes(plan)] == [("unread", 4), ("unread", 5)]
    assert all(reason.endswith(UNWORKED) for _, _, _, reason in notes(plan))


@pytest.mark.parametrize("options", ["-r", "-p '> '", "-rp ''"])
def test_the_options_dash_has_read_the_line(options: str) -> None:
    plan = run_script(f"read {options} A <<EOF\n1 2\nEOF\ncp x.py /dest/s$?.py\ncp x.py \"/dest/a$A.py\"\n", "dash i.sh")
    assert in_dest(plan) == ["/dest/a1 2.py", "/dest/s0.py"]


@pytest.mark.parametrize("form", ["read -a A N M", "read -n 3 -a A N M <<< '1 2 3'", "read -t 1 -a A N M <<< '1 2 3'"])
def test_read_a_leaves_the_names_after_the_array_as_they_were(form: str) -> None:
    # bash 5.2.15 prints "N=old M=unset" for each form (the script's own input, or an option the reader does not
    # follow): the fields go to A only, and the NAMEs after it are neither set nor unset.
    plan = run_script(f'N=old\nunset M\n{form}\ncp x.py "/dest/$N-${{M-unset}}"\n')
    assert in_dest(plan) == ["/dest/old-unset"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["dash i.sh", "sh i.sh"])
def test_read_a_leaves_the_names_as_they_were_in_dash_and_the_images_sh(run: str) -> None:
    # dash 0.5.12: "read: Illegal option -a", nothing set, prints "N=old"; bash (as sh too) ignores N: "N=old".
    plan = run_script('N=old\nread -a A N <<EOF\n1 2\nEOF\ncp x.py "/dest/$N"\n', run)
    assert in_dest(plan) == ["/dest/old"]
    assert notes(plan) == []


# Files a script dots in the tests below: each copies to a name that shows the positional parameters it sees
# ($#, $1, $2; u: unset), then changes them, or not.
DOTTED = {"s/plain.sh": 'cp x.py "/dest/plain-$#-${1-u}-${2-u}"\n',
          "s/set.sh": 'cp x.py "/dest/set-$#-${1-u}-${2-u}"\nset -- changed\n',
          "s/shift.sh": 'cp x.py "/dest/shift-$#-${1-u}-${2-u}"\nshift\n'}
AFTER = 'cp x.py "/dest/after-$#-${1-u}-${2-u}"\n'


def test_dash_gives_a_dotted_file_the_scripts_own_arguments_not_those_after_it() -> None:
    # dash 0.5.12 ignores A B: plain-2-s1-s2, after-2-s1-s2 (bash: plain-2-A-B, after-2-s1-s2).
    plan = run_script(". ./plain.sh A B\n" + AFTER, "dash i.sh s1 s2", files=DOTTED)
    assert in_dest(plan) == ["/dest/after-2-s1-s2", "/dest/plain-2-s1-s2"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh s1 s2", "dash i.sh s1 s2", "sh i.sh s1 s2"])
@pytest.mark.parametrize(("dotted", "after"), [("set.sh", "/dest/after-1-changed-u"), ("shift.sh", "/dest/after-1-s2-u")])
def test_what_a_file_dotted_without_arguments_does_to_the_scripts_own_stays(dotted: str, after: str, run: str) -> None:
    # bash 5.2.15 and dash 0.5.12 alike: set.sh leaves "changed" (after-1-changed-u), shift.sh "s2" (after-1-s2-u).
    plan = run_script(f". ./{dotted}\n" + AFTER, run, files=DOTTED)
    assert in_dest(plan) == sorted([after, f"/dest/{dotted[:-3]}-2-s1-s2"])
    assert notes(plan) == []


@pytest.mark.parametrize(("run", "placed"), [
    # bash 5.2.15: shift.sh sees A B and the script's own come back (after1-2-s1-s2); in a function, set.sh's
    # "changed" goes too (fn-2-fa); at the top, it stays (after2-1-changed).
    ("bash i.sh s1 s2", ["/dest/after1-2-s1-s2", "/dest/after2-1-changed", "/dest/fn-2-fa", "/dest/set-1-X-u",
                         "/dest/set-2-A-B", "/dest/shift-2-A-B"]),
    # dash 0.5.12: each file sees the arguments of the script or function and what it does to them stays.
    ("dash i.sh s1 s2", ["/dest/after1-1-s2-u", "/dest/after2-1-changed", "/dest/fn-1-changed", "/dest/set-1-s2-u",
                         "/dest/set-2-fa-fb", "/dest/shift-2-s1-s2"]),
])
def test_after_a_dot_with_arguments_bash_puts_back_the_scripts_own_unless_set_replaced_them_outside_a_function(
        run: str, placed: list[str]) -> None:
    script = ('. ./shift.sh A B\ncp x.py "/dest/after1-$#-${1-u}-${2-u}"\n'
              'f() { . ./set.sh X; cp x.py "/dest/fn-$#-${1-u}"; }\nf fa fb\n'
              '. ./set.sh A B\ncp x.py "/dest/after2-$#-${1-u}"\n')
    plan = run_script(script, run, files=DOTTED)
    assert in_dest(plan) == placed
    assert notes(plan) == []


@pytest.mark.parametrize(("dot", "placed", "unread"), [
    # bash: plain-2-A-B, dash: plain-2-s1-s2; after it, both have s1 s2 again.
    (". ./plain.sh A B", ["/dest/after-2-s1-s2"], [1]),
    # bash: shift-2-s1-s2 then after-2-s1-s2 (put back), dash: the same file sees the same, then after-1-s2-u.
    ('. ./shift.sh "$@"', ["/dest/shift-2-s1-s2"], [2]),
    # bash: set-2-A-B, dash: set-2-s1-s2; after it, both have "changed": after-1-changed-u.
    (". ./set.sh A B", ["/dest/after-1-changed-u"], [1]),
])
def test_under_the_images_sh_the_arguments_of_a_dot_are_unknown_where_bash_and_dash_differ(
        dot: str, placed: list[str], unread: list[int]) -> None:
    plan = run_script(f"{dot}\n" + AFTER, "sh i.sh s1 s2", files=DOTTED)
    assert in_dest(plan) == placed
    assert [(kind, line) for kind, line, _, _ in notes(plan)] == [("unread", line) for line in unread]
    assert all(reason.endswith(UNWORKED) for _, _, _, reason in notes(plan))
