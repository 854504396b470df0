"""A RUN in exec form whose program is a shell's builtin that some images ship as a program (``command``, ``cd``).

Debian and Ubuntu have no /usr/bin/command or /usr/bin/cd (BuildKit: "executable file not found in $PATH",
the RUN fails); RHEL-likes ship them as scripts that run the builtin in a shell of their own
(``builtin command "$@"``). Pins: ``["command", "exit", "3"]`` fails either way, and the reader says the RUN
fails; ``["cd", FILE]`` fails either way too (cd into a file: "Not a directory"), and the reader stops reading
the RUN there (``stop``), as it does for a cd into a file in a shell RUN.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, plan_of


@pytest.mark.parametrize("argv", ['["command", "exit", "3"]', '["command", "exec", "false"]'])
def test_an_exec_form_command_that_exits_with_a_failure_fails_the_run(argv: str) -> None:
    context = {"Dockerfile": f"FROM base\nCOPY x.py /x.py\nRUN {argv}\n", "x.py": ""}
    assert image_of(context) == {"/x.py": "x.py"}
    assert [(n.kind, n.file, n.line, n.text, n.reason) for n in plan_of(context).notes] == [
        ("fails", "Dockerfile", 3, f"RUN {argv}", "this RUN fails, so 'docker build' stops here")]


def test_an_exec_form_cd_into_a_file_stops_the_reading_of_the_run() -> None:
    context = {"Dockerfile": 'FROM base\nCOPY x.py /x.py\nRUN ["cd", "/x.py"]\n', "x.py": ""}
    assert image_of(context) == {"/x.py": "x.py"}
    assert [(n.kind, n.line, n.reason) for n in plan_of(context).notes] == [
        ("stop", 3, "cd into /x.py, which is not a folder at this point of the build: the rest of this RUN "
                    "(Dockerfile line 3) is not read")]
