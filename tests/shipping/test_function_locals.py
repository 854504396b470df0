"""``local`` in a shell function: the variable is the function's own until it returns.

sh and bash scope dynamically: the functions it calls see the local value,
and the value it had outside comes back on return. An install script that
loops over candidate roots with a helper function (``install_to() { local
VLLM=$1; cp ... "$VLLM/..."; }``) must not leave the helper's root behind
for the lines after it. ``local NAME`` with no value differs by shell: bash
leaves NAME unset, dash keeps what it held, and under ``sh`` the image's
shell decides.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, placed_and_noted, run_script


def test_a_local_value_is_gone_when_the_function_returns() -> None:
    script = ("VLLM=/usr/local/corex/vllm\n"
              "install_to() {\n  local VLLM=$1\n  mkdir -p \"$VLLM/ops\"\n  cp x.py \"$VLLM/ops/x.py\"\n}\n"
              "install_to /usr/lib/python3/dist-packages/vllm\n"
              "mkdir -p \"$VLLM/ops\"\ncp x.py \"$VLLM/ops/y.py\"\n")
    assert placed_and_noted(script) == (["/usr/lib/python3/dist-packages/vllm/ops/x.py", "/usr/local/corex/vllm/ops/y.py"],
                              [])


def test_a_function_called_from_another_sees_its_locals() -> None:
    script = "outer() { local D=/opt/in; inner; }\ninner() { mkdir -p $D; cp x.py $D/x.py; }\nD=/opt/out\nouter\n" \
             "mkdir -p $D\ncp x.py $D/y.py\n"
    assert placed_and_noted(script) == (["/opt/in/x.py", "/opt/out/y.py"], [])


def test_a_variable_made_local_and_exported_is_back_as_it_was() -> None:
    script = "X=/a\nf() { local X=/b; export X; sh -c 'mkdir -p $X; cp x.py $X/in.py'; }\nf\n" \
             "sh -c 'cp x.py /child$X.py'\nmkdir -p $X\ncp x.py $X/out.py\n"
    # After f, X is /a again and no longer exported: the child shell does not see it.
    assert placed_and_noted(script)[0] == ["/a/out.py", "/b/in.py"]


@pytest.mark.parametrize(("shebang", "inside", "notes"), [
    ("#!/bin/bash\n", "/f.py", []),  # bash: unset
    ("#!/bin/dash\n", "/f/keep.py", []),  # dash: the value it had
    ("", None, [("unread", 2, "cp x.py /f$X.py")]),  # sh: either
])
def test_local_without_a_value_is_what_the_shell_makes_of_it(shebang: str, inside: str | None,
                                                             notes: list[tuple[str, int, str]]) -> None:
    offset = 1 if shebang else 0
    paths, found = placed_and_noted(f"{shebang}X=/keep\nf() {{ local X; cp x.py /f$X.py; }}\nf\ncp x.py /g$X.py\n")
    assert paths == sorted([p for p in (inside, "/g/keep.py") if p])
    assert found == [(kind, line + offset, text) for kind, line, text in notes]


def test_local_succeeds_so_set_e_reads_on() -> None:
    script = ("set -e\ninstall_to() {\n  local dest=\"$1\"\n  local ops\n  mkdir -p \"$dest/ops\"\n"
              "  cp x.py \"$dest/ops/x.py\"\n}\ninstall_to /opt/vllm\ncp x.py /opt/after.py\n")
    assert placed_and_noted(script) == (["/opt/after.py", "/opt/vllm/ops/x.py"], [])


def test_an_exported_variable_made_local_is_exported_again_after_the_function() -> None:
    script = "export X=/a\nf() { local X=/b; mkdir -p $X; cp x.py $X/in.py; }\nf\n" \
             "sh -c 'mkdir -p $X; cp x.py $X/child.py'\n"
    # After f, X is /a and still exported: the child shell sees it.
    assert placed_and_noted(script)[0] == ["/a/child.py", "/b/in.py"]


@pytest.mark.parametrize(("run", "placed"), [("bash i.sh", ["/dest/no.py"]), ("dash i.sh", []),
                                             ("sh i.sh", ["/dest/no.py"])])
def test_local_outside_a_function_assigns_nothing(run: str, placed: list[str]) -> None:
    # bash 5.2: "local: can only be used in a function" (status 1, X stays unset); dash 0.5.12: "local: not in a
    # function", and the script ends (status 2). Under sh the reader reads on, as bash does, and says so.
    plan = run_script("local X=/dest\ncp x.py ${X:-/dest/no}.py\n", run)
    assert in_dest(plan) == placed and [n.kind for n in plan.notes][0] == "fails"


# A second local of one name inside a function keeps the value the caller's name gets back (checked under
# bash 5.2.15 and dash 0.5.12).
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_second_local_of_a_name_keeps_the_callers_value_for_the_return(run: str) -> None:
    plan = run_script('f() { local v=in; local v=again; cp x.py "/dest/$v"; }\nv=out\nf\ncp x.py "/dest/$v"\n',
                      run=run)
    assert in_dest(plan) == ["/dest/again", "/dest/out"]
    assert notes(plan) == []
