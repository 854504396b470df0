"""What a loop or group reads: the here-document, here-string or placed file it is given, or what a pipe feeds it.

``while read -r src dst; do cp "$src" "$dst"; done <<EOF`` is how an
install script lists its files: each ``read`` takes the next line, and the
loop ends when the input does. ``printf '%s\\n' a b | while read f`` feeds
the loop what the part before printed (nothing, when that part prints
nothing or writes elsewhere; unknown, when it runs a program the reader
does not follow, such as ``ls``). The verbose file commands (``cp -v``,
``mkdir -v``) print. Each answer was checked with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

BOTH = ["bash i.sh", "dash i.sh"]


@pytest.mark.parametrize(("script", "placed"), [
    ("while IFS= read -r f; do cp \"$f\" /dest/; done <<EOF\nx.py\nsub/y.py\nEOF\n", ["/dest/x.py", "/dest/y.py"]),
    ("while read -r src dst; do cp \"$src\" \"/dest/$dst\"; done <<'EOF'\nx.py a.py\nsub/y.py b.py\nEOF\n",
     ["/dest/a.py", "/dest/b.py"]),
    ("n=0; while read l; do n=$((n+1)); done <<EOF\na\nb\nc\nEOF\ncp x.py /dest/$n.py\n", ["/dest/3.py"]),
    ("while read a; do while read b; do cp x.py /dest/$a$b.py; done <<E2\n1\n2\nE2\ndone <<E1\np\nq\nE1\n",
     ["/dest/p1.py", "/dest/p2.py", "/dest/q1.py", "/dest/q2.py"]),  # each loop reads its own input
    ("{ read a; read b; cp x.py /dest/$a$b.py; } <<EOF\n1\n2\nEOF\n", ["/dest/12.py"]),
    ("while read f; do cp x.py /dest/c.py; done < list.txt\n", ["/dest/c.py"]),  # a file the build placed
    # A subshell or $(...) in the loop reads the same input on: what it takes, the loop's next read does not get.
    ("while read a; do (read b; cp x.py /dest/s$b.py); cp x.py /dest/t$a.py; done <<EOF\n1\n2\n3\n4\nEOF\n",
     ["/dest/s2.py", "/dest/s4.py", "/dest/t1.py", "/dest/t3.py"]),
    ("while read a; do v=$(read b; echo $b); cp x.py /dest/$a-$v.py; done <<EOF\n1\n2\n3\n4\nEOF\n",
     ["/dest/1-2.py", "/dest/3-4.py"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_each_read_of_a_loop_takes_the_next_line_of_its_input(script: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(script, run, {"s/list.txt": "x.py\n"})) == placed


@pytest.mark.parametrize(("script", "placed"), [
    ("printf '%s\\n' x.py sub/y.py | while read f; do cp \"$f\" /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    ("printf 'x.py' | while read f; do cp $f /dest/n.py; done\n", []),  # no newline: read fails at once
    ("printf 'x.py' | { read f; cp $f /dest/n.py; }\n", ["/dest/n.py"]),  # ...though it set f
    ("while read f; do echo $f; done <<EOF | while read g; do cp x.py /dest/$g.py; done\none\ntwo\nEOF\n",
     ["/dest/one.py", "/dest/two.py"]),
    ("printf 'a\\\\\\nb\\n' | while read f; do cp x.py \"/dest/$f.py\"; done\n", ["/dest/ab.py"]),  # \\newline joins
    ("printf 'a\\\\\\nb\\n' | while read -r f; do cp x.py \"/dest/r$f.py\"; done\n", ["/dest/ra\\.py", "/dest/rb.py"]),
    ("cp x.py /dest/q.py | while read l; do cp x.py /dest/never.py; done\n", ["/dest/q.py"]),  # cp prints nothing
    ("echo x.py > /tmp/l | while read l; do cp x.py /dest/never.py; done\n", []),  # its output goes to the file
    ("cp -v x.py /dest/v.py | while read l; do cp x.py /dest/l.py; done\n", ["/dest/l.py", "/dest/v.py"]),
    ("mkdir -v /dest/m | while read l; do cp x.py /dest/ml.py; done\n", ["/dest/ml.py"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_a_pipe_feeds_a_loop_what_its_part_before_printed(script: str, placed: list[str], run: str) -> None:
    assert in_dest(run_script(script, run)) == placed


def test_a_here_string_feeds_a_loop() -> None:
    assert in_dest(run_script("while read l; do cp x.py /dest/$l.py; done <<< \"z\"\n")) == ["/dest/z.py"]


def test_a_pipe_from_a_program_the_reader_does_not_follow_gives_unknown_lines() -> None:
    plan = run_script("ls | while read f; do cp x.py \"/dest/$f\"; done\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize(("line", "heard"), [
    ("cp -v x.py /dest/v.py", True), ("cp x.py /dest/v.py", False), ("mkdir --verbose /dest/m", True),
    ("rsync -a --progress x.py /dest/", True), ("rsync -a x.py /dest/", False), ("touch /dest/t", False),
])
def test_a_verbose_file_command_prints(line: str, heard: bool) -> None:
    # What it prints is not spelled out: a $(...) around it is unknown.
    plan = run_script(f"V=$({line})\ncp x.py \"/dest/[$V].py\"\n")
    assert ("/dest/[].py" in in_dest(plan)) is not heard


@pytest.mark.parametrize(("line", "placed"), [
    ("sh < inner.sh", ["/dest/s.py"]),  # a script the build placed, read by sh from standard input
    ("bash < inner.sh", ["/dest/s.py"]),
    ("python3 < fix.py", ["/dest/x.py"]),  # a Python helper that removes nothing the reader tracks
    ("sh < /dev/null", ["/dest/x.py"]),
])
def test_a_shell_or_python_reads_its_program_from_a_file_it_is_given(line: str, placed: list[str]) -> None:
    plan = run_script(f"cp x.py /dest/x.py\n{line}\n",
                      files={"s/inner.sh": "rm /dest/x.py\ncp x.py /dest/s.py\n", "s/fix.py": "print('fixed')\n"})
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("line", ["sh < /etc/profile.d/extra.sh", "python3 < /etc/fix.py"])
def test_a_program_read_from_a_file_of_the_base_image_is_not_followed(line: str) -> None:
    (note,) = run_script(f"{line}\n").notes
    assert note.kind == "program" and note.reason.startswith(f"runs {line.split()[0]} reading $(< /etc/")


@pytest.mark.parametrize(("script", "placed"), [
    ("while read f; do cp $f /dest/; done <<EOF\nx.py\nsub/y.py\n", ["/dest/x.py", "/dest/y.py"]),
    ("while read f; do cp $f /dest/; done <<EOF\nx.py\nsub/y.py", ["/dest/x.py", "/dest/y.py"]),
    ("cp x.py /dest/a.py\ncat <<EOF", ["/dest/a.py"]),  # the body is empty; the command still runs
    ("cp x.py /dest/a.py <<EOF\nhello\n", ["/dest/a.py"]),
    ("cat <<A <<B\na\nA\nb\ncp x.py /dest/a.py\n", []),  # B's body takes the rest of the script
    ("cat <<-'END'\n\tabc\n END\ncp x.py /dest/a.py\n", []),  # ' END' is not END: the body runs to the end
])
@pytest.mark.parametrize("run", BOTH)
def test_a_here_document_never_closed_takes_the_rest_of_the_script(script: str, placed: list[str], run: str) -> None:
    # bash warns ("delimited by end-of-file") and dash says nothing; both run the command with that body.
    plan = run_script(script, run)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize(("script", "placed"), [
    ("echo 'cp x.py /dest/pipe.py' | sh\n", ["/dest/pipe.py"]),
    ("printf 'cp x.py /dest/p1.py\\ncp x.py /dest/p2.py\\n' | sh -s\n", ["/dest/p1.py", "/dest/p2.py"]),
    ("printf 'cp $1 /dest/a1.py\\n' | sh -s x.py\n", ["/dest/a1.py"]),  # -s: the words after are $1...
    ("cat sub/y.py | sh\ncp x.py /dest/after.py\n", ["/dest/after.py"]),  # y.py is empty: sh runs nothing
    # Each line fed to its own sh: the loop's read takes one, the sh in the loop has only its echo's.
    ("while read l; do echo \"$l\" | sh; done <<EOF\ncp x.py /dest/w1.py\ncp x.py /dest/w2.py\nEOF\n",
     ["/dest/w1.py", "/dest/w2.py"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_a_script_piped_into_sh_is_run(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed and plan.notes == ()


def test_sh_fed_what_a_program_prints_is_a_program_the_reader_does_not_follow() -> None:
    plan = run_script("vendor_tool --emit-install | sh\ncp x.py /dest/after.py\n")
    assert in_dest(plan) == ["/dest/after.py"]
    assert [(n.kind, n.reason) for n in plan.notes][-1] == (
        "program", "runs sh reading what the pipe feeds it, which the reader does not follow: it could change any file")


@pytest.mark.parametrize(("script", "placed"), [
    ("V=$(cat <<EOF\nhello\nEOF\n)\ncp x.py /dest/$V.py\n", ["/dest/hello.py"]),
    ("V=$(cat <<'EOF'\nq1\nEOF\n)\ncp x.py /dest/$V.py\n", ["/dest/q1.py"]),
    ("V=$(echo piped | cat -)\ncp x.py /dest/$V.py\n", ["/dest/piped.py"]),
    ("echo x.py | cat | while read f; do cp $f /dest/c_$f; done\n", ["/dest/c_x.py"]),
    # cat reads the loop's input to its end: the loop's next read finds nothing.
    ("while read a; do V=$(cat); cp x.py /dest/$a.py; done <<EOF\nfirst\nsecond\nEOF\ncp x.py /dest/v$V.py\n",
     ["/dest/first.py", "/dest/vsecond.py"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_cat_without_a_file_prints_its_known_input(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed and plan.notes == ()
