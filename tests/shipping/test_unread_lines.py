"""A line the reader does not understand is noted, with its line, and never guessed at.

Each note says what the line could change (an image path, a package's
folder, or anything); ``ShipPlan.caveats`` keeps those that could change a
shipped file: run after the file got there, or, for a line that could
change the shell's own state (``eval``, a command named by an unknown
variable), at any time.
"""

from __future__ import annotations

import pytest

from patcher.shipping.shell_records import MAX_DEPTH, MAX_ITERATIONS
from tests.shipping.conftest import notes_of, plan_of, script_context

TARGET_IMAGE = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"
COPY = f"cp x.py {TARGET_IMAGE}"


def test_eval_of_an_unknown_string_is_unread_and_the_rest_is_still_read() -> None:
    plan = plan_of(script_context(f'echo start\neval "$CMD"\n{COPY}\n'))
    assert notes_of(plan, "unread") == [("s/i.sh", 2, 'eval "$CMD"')]
    assert plan.image[TARGET_IMAGE].source == "s/x.py"
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [2]  # it could have sent the copy elsewhere


def test_a_script_with_crlf_line_endings_is_a_caveat_for_what_it_copies() -> None:
    # sh keeps the carriage return: 'cp x.py DEST\r' writes 'DEST\r', and the shipped path keeps the base image's file.
    plan = plan_of(script_context(f"cd /w/s\r\n{COPY}\r\n"))
    assert [(n.file, n.line) for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [("s/i.sh", 1)]


def test_eval_of_a_known_string_is_followed() -> None:
    plan = plan_of(script_context(f'CMD="{COPY}"\neval "$CMD"\n'))
    assert plan.image[TARGET_IMAGE].source == "s/x.py" and not plan.notes


def test_a_command_string_only_the_image_knows_is_unread_and_the_rest_is_still_read() -> None:
    plan = plan_of(script_context(f'sh -c "$POST_INSTALL"\n{COPY}\n'))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("unread", 1, 'sh -c "$POST_INSTALL"', "runs the command string $POST_INSTALL, which the reader cannot work out")]
    assert plan.image[TARGET_IMAGE].source == "s/x.py"
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [1]  # it could have sent the copy elsewhere


def test_a_command_named_by_an_unknown_variable_is_unread() -> None:
    plan = plan_of(script_context(f"$INSTALLER x.py {TARGET_IMAGE}\n"))
    assert notes_of(plan, "unread") == [("s/i.sh", 1, f"$INSTALLER x.py {TARGET_IMAGE}")]
    assert TARGET_IMAGE not in plan.image


def test_a_sourced_file_of_the_context_is_read_and_a_missing_one_is_not() -> None:
    plan = plan_of(script_context(f". ./lib.sh\nsource /etc/profile.d/site.sh\ninstall_it\n",
                                  files={"s/lib.sh": f"install_it() {{\n  {COPY}\n}}\n"}))
    assert plan.image[TARGET_IMAGE].source == "s/x.py"
    assert notes_of(plan, "unread") == [("s/i.sh", 2, "source /etc/profile.d/site.sh")]


def test_a_program_the_reader_does_not_follow_is_noted() -> None:
    plan = plan_of(script_context(f"{COPY}\n/opt/src/configure --prefix=/usr\nmake install\n"))
    assert notes_of(plan, "program") == [("s/i.sh", 2, "/opt/src/configure --prefix=/usr"), ("s/i.sh", 3, "make install")]
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [2, 3]


def test_a_program_run_before_the_file_arrives_cannot_change_it() -> None:
    context = script_context(f"{COPY}\n")
    context["Dockerfile"] = f"FROM base\nRUN apt-get install -y gcc\nRUN mkdir /w\nCOPY s /w/s\nRUN cd /w/s && ./i.sh\n"
    plan = plan_of(context)
    assert notes_of(plan, "program") == [("Dockerfile", 2, "apt-get install -y gcc")]
    assert plan.caveats("s/x.py", (TARGET_IMAGE,)) == ()


def test_an_unread_copy_to_its_own_folder_before_the_file_arrives_cannot_change_it() -> None:
    # Only a line that could change the shell's own state counts before a step; this one writes under /opt/vendor.
    context = script_context(f"{COPY}\n")
    context["Dockerfile"] = ("FROM base\nRUN mkdir -p /opt/vendor && cp /etc/vendor.conf /opt/vendor/$VENDOR_ARCH/\n"
                             "RUN mkdir /w\nCOPY s /w/s\nRUN cd /w/s && ./i.sh\n")
    plan = plan_of(context)
    assert notes_of(plan, "unread") == [("Dockerfile", 2, "cp /etc/vendor.conf /opt/vendor/$VENDOR_ARCH/")]
    assert plan.caveats("s/x.py", (TARGET_IMAGE,)) == ()


def test_a_program_run_between_two_steps_could_change_the_file_on_its_way() -> None:
    # make runs after COPY put x.py in /w/s and before cp takes it on: it could rewrite it there.
    plan = plan_of(script_context(f"make\n{COPY}\n"))
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [1]


def test_pip_install_of_the_package_that_holds_the_file_is_a_caveat() -> None:
    plan = plan_of(script_context(f"{COPY}\npip install --no-deps transformers==4.57.1\n"
                                  "pip install --force-reinstall vllm==0.6.3\n"))
    assert notes_of(plan, "unread") == [("s/i.sh", 3, "pip install --force-reinstall vllm==0.6.3")]
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [3]


@pytest.mark.parametrize("line", ["pip --no-cache-dir install vllm==0.6.3", "pip3 -q install --upgrade vllm",
                                  "python3 -m pip --disable-pip-version-check install vllm",
                                  "pip --log /tmp/pip.log --timeout 60 install vllm", "pip install --log /tmp/l vllm"])
def test_pip_options_before_or_among_the_packages_are_read_as_pip_reads_them(line: str) -> None:
    # pip takes its general options before the command too; an option's value is not a package or a path.
    plan = plan_of(script_context(f"{COPY}\n{line}\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("unread", 2, "pip install vllm replaces those "
                                                                              "packages' files")]
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [2]


def test_find_running_cp_into_the_shipped_files_folder_is_a_caveat_for_it() -> None:
    # Which files of the base image's find lists is not known: one named paged_attn.py would replace the copy.
    folder = TARGET_IMAGE.rsplit("/", 1)[0]
    plan = plan_of(script_context(f"{COPY}\nfind /opt/extra -name '*.py' -exec cp {{}} {folder}/ \\;\n"))
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [2]
    quiet = plan_of(script_context(f"{COPY}\nfind . -name '*.pyc' -exec rm -f {{}} +\n"))
    assert quiet.caveats("s/x.py", (TARGET_IMAGE,)) == ()
    # Over the build's own tree the reader knows what find lists: here, the one y.py that replaces it.
    known = plan_of(script_context(f"{COPY}\nfind sub -name 'y.py' -exec cp {{}} {folder}/paged_attn.py \\;\n"))
    assert known.image[TARGET_IMAGE].source == "s/sub/y.py" and known.notes == ()


def test_pip_without_an_install_changes_nothing() -> None:
    plan = plan_of(script_context(f"{COPY}\npip --version\npip list --format freeze\npip -q download vllm -d /w\n"))
    assert plan.notes == () and plan.image[TARGET_IMAGE].source == "s/x.py"


def test_pip_install_of_a_requirements_file_could_change_anything() -> None:
    plan = plan_of(script_context(f"{COPY}\npip install -r requirements.txt\n"))
    assert notes_of(plan, "program") == [("s/i.sh", 2, "pip install -r requirements.txt")]


def test_an_in_place_edit_or_an_append_of_the_shipped_file_is_a_caveat() -> None:
    plan = plan_of(script_context(f"{COPY}\nsed -i 's/a/b/' {TARGET_IMAGE}\necho '# tail' >> {TARGET_IMAGE}\n"))
    assert [(n.line, n.scope) for n in plan.notes] == [(2, (TARGET_IMAGE,)), (3, (TARGET_IMAGE,))]
    assert len(plan.caveats("s/x.py", (TARGET_IMAGE,))) == 2


def test_a_file_overwritten_by_a_redirection_no_longer_holds_the_context_file() -> None:
    plan = plan_of(script_context(f"{COPY}\necho 'x = 2' > {TARGET_IMAGE}\n"))
    assert TARGET_IMAGE not in plan.image and not plan.notes


def test_a_subshell_redirected_to_an_unknown_file_is_noted_with_the_subshell_as_written() -> None:
    plan = plan_of(script_context(f'(cd sub && cp ../x.py {TARGET_IMAGE}) >> "$BUILD_LOG"\n'))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("unread", 1, f"(cd sub && cp ../x.py {TARGET_IMAGE})",
         "writes to $BUILD_LOG, which the reader cannot work out")]


def test_a_script_that_does_not_parse_is_read_up_to_the_error() -> None:
    plan = plan_of(script_context(f"{COPY}\nif [ -d /x ]; then\n  echo unclosed\n"))
    (note,) = plan.notes
    assert (note.kind, note.file) == ("stop", "s/i.sh")
    assert "cannot be parsed as shell" in note.reason
    assert TARGET_IMAGE in plan.image  # the copy on the line before the 'if' left open ran, as in sh


def test_an_unknown_flag_of_a_copy_is_a_caveat_for_what_it_could_write() -> None:
    plan = plan_of(script_context(f"{COPY}\nrsync -a --exclude=tests ./ /usr/lib/python3/dist-packages/\n"))
    assert [n.line for n in plan.caveats("s/x.py", (TARGET_IMAGE,))] == [2]


# -- hostile scripts: the reader must end, and say where it stopped ----------------

def self_calling_script() -> str:
    """A script that runs itself: sh would never end; the reader stops at its nesting limit."""
    return f"{COPY}\n./i.sh\n"


def endless_loop_script() -> str:
    """A loop whose condition stays true."""
    return f"{COPY}\nwhile true; do\n  cp x.py /tmp/again.py\ndone\n"


def recursive_function_script() -> str:
    """A function that calls itself."""
    return f"f() {{\n  f\n}}\n{COPY}\nf\n"


def test_a_script_that_runs_itself_is_read_to_a_limit() -> None:
    plan = plan_of(script_context(self_calling_script()))
    assert plan.image[TARGET_IMAGE].source == "s/x.py"
    (note,) = plan.notes
    assert note.kind == "unread" and f"more than {MAX_DEPTH} deep" in note.reason
    (script,) = plan.scripts  # each run of it is the same script, run from the same RUN line
    assert 1 < len(script.body.copies) <= MAX_DEPTH


def test_an_endless_loop_stops_the_reading() -> None:
    plan = plan_of(script_context(endless_loop_script()))
    (note,) = plan.notes
    assert (note.kind, note.line) == ("stop", 2) and f"more than {MAX_ITERATIONS:,} times" in note.reason


@pytest.mark.parametrize("loop", [f"i=0\nwhile [ $i -lt {MAX_ITERATIONS} ]; do i=$((i + 1)); done\n",
                                  f"for ((i=0; i<{MAX_ITERATIONS}; i++)); do :; done\n"])
def test_a_loop_of_exactly_the_limit_is_read_to_its_end(loop: str) -> None:
    plan = plan_of(script_context("#!/bin/bash\n" + loop + "cp x.py /after.py\n"))
    assert "/after.py" in plan.image and plan.notes == ()


def test_a_function_that_calls_itself_is_read_to_a_limit() -> None:
    plan = plan_of(script_context(recursive_function_script()))
    assert plan.image[TARGET_IMAGE].source == "s/x.py"
    assert [n.kind for n in plan.notes] == ["unread"]


# -- limits and how notes read -----------------------------------------------------

@pytest.mark.parametrize(("script", "files", "note"), [
    ("f() { f; }\nf\n", {}, ("s/i.sh", 1, "f", "calls nest more than 16 deep; the reader does not follow this one")),
    ("X='eval \"$X\"'\neval \"$X\"\n", {},
     ("s/i.sh", 2, 'eval "$X"', "eval nests more than 16 deep; the reader does not follow this one")),
    (". ./lib.sh\n", {"s/lib.sh": ". ./lib.sh\n"},
     ("s/lib.sh", 1, ". ./lib.sh", "reads ./lib.sh into the shell, which the reader cannot follow")),
    ("./i.sh\n", {}, ("s/i.sh", 1, "./i.sh", "scripts nest more than 16 deep; the reader does not follow this one")),
])
def test_what_nests_past_the_limit_is_one_note_where_it_stopped(script: str, files: dict[str, str],
                                                                 note: tuple[str, int, str, str]) -> None:
    plan = plan_of(script_context(script, files=files))
    assert [(n.file, n.line, n.text, n.reason) for n in plan.notes] == [note]
    assert plan.notes[0].kind == "unread" and plan.notes[0].stage == "stage 0"


def test_a_line_read_several_times_is_noted_once() -> None:
    plan = plan_of(script_context("for i in 1 2 3; do eval \"$U\"; done\nf() { make; }\nf; f\n"))
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("unread", 1, 'eval "$U"'), ("program", 2, "make")]
    assert plan.notes[0].order < plan.notes[1].order


def test_a_note_is_one_line_clipped_to_its_limits() -> None:
    long_path = "/" + "d" * 400
    plan = plan_of(script_context(f"cp x.py {long_path}/$U/x.py\nmake  \\\n   all\n"))
    (first, second) = plan.notes
    assert first.text == f"cp x.py {long_path}"[:117] + "..."
    assert first.reason == f"cp {long_path}/$U/x.py: a path that depends on a value the reader cannot work out"[:297] + "..."
    assert (second.text, second.line) == ("make all", 2)

