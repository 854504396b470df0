"""A redirection to a file opens it before the command runs: ``>`` creates or empties it, on any descriptor.

``cmd > FILE``, ``cmd 4> FILE`` and ``exec 3> FILE`` all empty a file the
build placed there (the image then holds what the command wrote, not the
context file); ``>>`` keeps it and adds to it, and ``1<>`` writes over its
start, which the reader notes.
Checked with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

BOTH = ["bash i.sh", "dash i.sh"]


@pytest.mark.parametrize("redirect", ["echo hi > /dest/a.py", "echo hi 4>/dest/a.py", "exec 3>/dest/a.py",
                                      "true >| /dest/a.py", "exec 5> /dest/a.py 6>/dev/null"])
@pytest.mark.parametrize("run", BOTH)
def test_a_placed_file_opened_for_writing_on_any_descriptor_no_longer_holds_it(redirect: str, run: str) -> None:
    plan = run_script(f"cp x.py /dest/a.py\n{redirect}\n", run)
    assert in_dest(plan) == [] and plan.notes == ()


@pytest.mark.parametrize("redirect", ["echo hi >> /dest/a.py", "exec 3>>/dest/a.py"])
def test_an_append_on_any_descriptor_keeps_the_placed_file_and_says_it_changes(redirect: str) -> None:
    plan = run_script(f"cp x.py /dest/a.py\n{redirect}\n")
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, "appends to /dest/a.py, which holds s/x.py: the image gets it changed")]


def test_a_redirection_on_another_descriptor_into_a_missing_folder_fails_the_command() -> None:
    plan = run_script("echo hi 3>/dest/none/a.py || cp x.py /dest/failed.py\n")
    assert in_dest(plan) == ["/dest/failed.py"]


@pytest.mark.parametrize("run", BOTH)
def test_command_refusing_an_option_that_names_cat_copies_nothing_into_the_file(run: str) -> None:
    # bash: "command: -/: invalid option"; dash: "Illegal option -/": the shell opened a.py, cat never ran.
    plan = run_script("command -/bin/cat x.py > /dest/a.py || cp x.py /dest/failed.py\n", run)
    assert in_dest(plan) == ["/dest/failed.py"]


@pytest.mark.parametrize("run", BOTH)
def test_a_redirection_after_a_here_document_still_empties_the_file(run: str) -> None:
    # bash 5.2 and dash 0.5.12: 'cat <<EOF >FILE' writes the here-document into FILE, so it no longer holds x.py.
    plan = run_script("cp x.py /dest/x.py\ncat <<EOF >/dest/x.py\nhi\nEOF\n", run)
    assert in_dest(plan) == []


@pytest.mark.parametrize("redirect", ["echo hi > 2", "echo hi 1>2", "true >| 2"])
@pytest.mark.parametrize("run", BOTH)
def test_a_target_of_digits_is_a_file_name(redirect: str, run: str) -> None:
    # Only '>&2' duplicates a descriptor; '> 2' creates (or empties) the file ./2.
    assert in_dest(run_script(f"cp x.py /dest/2\ncd /dest\n{redirect}\n", run)) == []


# (script, what bash 5.2 keeps under /dest and whether the RUN fails, the same for dash 0.5.12), each checked by
# running them: '>&WORD' duplicates when WORD is digits or '-'; else bash opens the file for both outputs (or, with
# a descriptor named, fails the command: "ambiguous redirect") and dash ends the script ("Bad fd number").
@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("echo hi >& /dest/o", ([], False), (["/dest/o"], True)),
    ("echo hi 2>& /dest/o || cp x.py /dest/failed", (["/dest/failed", "/dest/o"], False), (["/dest/o"], True)),
    ("echo hi >&2\necho b 2>&1 >&- 1>&2", (["/dest/o"], False), (["/dest/o"], False)),
    ("F=2\necho hi >&$F", (["/dest/o"], False), (["/dest/o"], False)),
    ("ls >& /dev/null; cp x.py /dest/after", (["/dest/after", "/dest/o"], False), (["/dest/o"], True)),
    # Digits other than ASCII are a word to both: the reader took '٣' for descriptor 3 (str.isdigit()).
    ("cp x.py /dest/٣\ncd /dest\necho hi >&٣", (["/dest/o"], False), (["/dest/o", "/dest/٣"], True)),
    ("echo hi 2>&٣ || cp x.py /dest/failed", (["/dest/failed", "/dest/o"], False), (["/dest/o"], True)),
])
def test_a_duplication_to_a_word_not_a_descriptor_opens_a_file_in_bash_and_ends_dash(
        script: str, bash: tuple[list[str], bool], dash: tuple[list[str], bool]) -> None:
    for run, (kept, run_fails) in (("bash i.sh", bash), ("dash i.sh", dash)):
        plan = run_script(f"cp x.py /dest/o\n{script}\n", run)
        assert (in_dest(plan), any(n.kind == "fails" and n.text.startswith("RUN ") for n in plan.notes)) == (
            kept, run_fails), run


def test_a_duplication_to_a_file_is_an_assumption_under_sh() -> None:
    plan = run_script("cp x.py /dest/o\necho hi >& /dest/o\n", "sh i.sh")
    assert in_dest(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("assumed", 2)]


@pytest.mark.parametrize("redirect", ['echo hi > ""', "E=\necho hi >| \"$E\"", 'echo hi >& ""'])
def test_a_redirection_to_an_empty_word_fails_the_command(redirect: str) -> None:
    # bash: ": No such file or directory" (status 1), and for '>&""' "Bad file descriptor"; the command never runs.
    plan = run_script(f"cp x.py /dest/o\n{redirect} || cp x.py /dest/failed\n")
    assert in_dest(plan) == ["/dest/failed", "/dest/o"]


@pytest.mark.parametrize(("script", "run", "dest"), [
    # A redirection that cannot open its file: bash fails the command (1), dash too (2).
    ("echo hi > /dest/no/f\ncp x.py /dest/after$?.py\n", "bash i.sh", ["/dest/after1.py"]),
    ("echo hi > /dest/no/f\ncp x.py /dest/after$?.py\n", "dash i.sh", ["/dest/after2.py"]),
    # On a special builtin it ends dash's script, and bash's in POSIX mode.
    (": > /dest/no/f\ncp x.py /dest/after$?.py\n", "bash i.sh", ["/dest/after1.py"]),
    (": > /dest/no/f\ncp x.py /dest/after$?.py\n", "dash i.sh", []),
    (": > /dest/no/f\ncp x.py /dest/after$?.py\n", "bash --posix i.sh", []),
    ("echo hi > /dest/no/f\ncp x.py /dest/after$?.py\n", "bash --posix i.sh", ["/dest/after1.py"]),
])
def test_a_redirection_that_cannot_open_its_file_fails_with_the_shells_status(script: str, run: str,
                                                                            dest: list[str]) -> None:
    assert in_dest(run_script(script, run)) == dest


@pytest.mark.parametrize("run", BOTH)
@pytest.mark.parametrize("noclobber", ["set -C", "set -o noclobber", "set -eC\nset +e"])
def test_under_noclobber_a_redirection_does_not_empty_a_file_that_exists(noclobber: str, run: str) -> None:
    """bash 5.2 and dash 0.5.12: "cannot overwrite existing file"; the command does not run and fails."""
    script = f"{noclobber}\ncp x.py /dest/a.py\necho hi > /dest/a.py || cp x.py /dest/failed.py\n"
    assert in_dest(run_script(script, run)) == ["/dest/a.py", "/dest/failed.py"]


@pytest.mark.parametrize("redirect", ["echo hi >| /dest/a.py", "echo hi >> /dest/a.py", "echo hi > /dest/new.py"])
def test_under_noclobber_a_forced_append_or_new_file_is_written(redirect: str) -> None:
    plan = run_script(f"set -C\ncp x.py /dest/a.py\n{redirect} && cp x.py /dest/ok.py\n")
    assert "/dest/ok.py" in in_dest(plan)
    assert ("/dest/a.py" in in_dest(plan)) == (">>" in redirect or "new" in redirect)


def test_noclobber_is_off_again_after_set_plus_c_and_holds_in_a_subshell() -> None:
    script = ("set -C\n(cp x.py /dest/a.py; echo hi > /dest/a.py) || cp x.py /dest/sub.py\n"
              "set +C\necho hi > /dest/a.py && cp x.py /dest/off.py\n")
    assert in_dest(run_script(script)) == ["/dest/off.py", "/dest/sub.py"]


@pytest.mark.parametrize("run", BOTH)
def test_a_placed_file_opened_to_read_and_write_on_output_is_changed_in_place(run: str) -> None:
    # bash 5.2 and dash 0.5.12: '1<>' neither empties nor appends; 'echo HI 1<> a' turns "hello world" into
    # "HI\nlo world". The file stays where it was, holding something else at its start.
    plan = run_script("cp x.py /dest/a.py\necho hi 1<> /dest/a.py\n", run)
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, "writes over the start of /dest/a.py, which holds s/x.py: the image gets it changed")]


@pytest.mark.parametrize("run", BOTH)
def test_a_file_opened_to_read_and_write_on_standard_input_is_kept(run: str) -> None:
    plan = run_script("cp x.py /dest/a.py\ncat <> /dest/a.py\n: 0<>/dest/a.py\n", run)
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


@pytest.mark.parametrize("run", BOTH)
def test_read_and_write_makes_a_missing_file_and_fails_in_a_missing_folder(run: str) -> None:
    script = (": <> /dest/new.py\n[ -f /dest/new.py ] && cp x.py /dest/made.py\n"
              "echo hi 1<> /dest/no/f || cp x.py /dest/failed$?.py\n")
    status = "2" if run.startswith("dash") else "1"
    assert in_dest(run_script(script, run)) == [f"/dest/failed{status}.py", "/dest/made.py"]


@pytest.mark.parametrize("run", BOTH)
def test_output_sent_to_a_read_write_file_is_not_heard_by_a_command_substitution(run: str) -> None:
    # D=$(echo hi 1<>o.txt): hi goes into o.txt, D is empty; a new file read on standard input gives nothing.
    script = 'D=$(echo hi 1<>/dest/o.txt)\nE=$(cat <> /dest/new.txt)\ncp x.py "/dest/<$D$E>.py"\n'
    assert in_dest(run_script(script, run)) == ["/dest/<>.py"]


@pytest.mark.parametrize("script", [
    "cat < /dest/none.txt || cp x.py /dest/failed$?.py\n",
    "cat 3< /dest/none.txt || cp x.py /dest/failed$?.py\n",
    'cat < "" || cp x.py /dest/failed$?.py\n',
    "while read l; do cp x.py /dest/read.py; done < /dest/none.txt || cp x.py /dest/failed$?.py\n",
])
@pytest.mark.parametrize("run", BOTH)
def test_input_from_a_file_the_build_never_made_fails_the_command(script: str, run: str) -> None:
    # bash 5.2: status 1; dash 0.5.12: 2. The command (or the loop) never runs.
    status = "2" if run.startswith("dash") else "1"
    assert in_dest(run_script(script, run)) == [f"/dest/failed{status}.py"]


@pytest.mark.parametrize("run", BOTH)
def test_input_from_an_empty_word_is_noted_as_a_failure_of_its_command(run: str) -> None:
    # bash 5.2: ": No such file or directory"; dash 0.5.12: "cannot open : No such file". cat never runs.
    plan = run_script('cat < ""\n', run)
    assert [(n.kind, n.line, n.reason) for n in plan.notes][0] == (
        "fails", 1, "the redirection names no file (an empty word), so the command does not run")


@pytest.mark.parametrize("run", BOTH)
def test_a_compound_command_whose_output_cannot_be_opened_fails_with_the_shells_status(run: str) -> None:
    plan = run_script("{ cp x.py /dest/ran.py; } > /dest/no/o.txt || cp x.py /dest/failed$?.py\n", run)
    assert in_dest(plan) == ["/dest/failed2.py" if run.startswith("dash") else "/dest/failed1.py"]


def test_input_from_a_file_the_build_placed_or_the_image_may_hold_is_read() -> None:
    plan = run_script("cat < x.py && cp x.py /dest/ok.py\ncat < /etc/os-release > /dev/null\n")
    assert in_dest(plan) == ["/dest/ok.py"] and plan.notes == ()
