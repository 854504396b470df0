"""The caveats of a placed file: an unread command with no scope that ran before the file's only step.

Such a command (``eval`` of a value the reader cannot work out) could have changed anything the RUN's shell
had, links included: a later COPY or cp in the same stage may then land elsewhere (COPY writes through a link
at its destination). Pins: it is a caveat of a file whose only step comes after it, in its stage, and of no
file of another stage.
"""

from __future__ import annotations

from tests.shipping.conftest import plan_of

EVAL = 'evaluates $X, which the reader cannot work out'


def test_an_unscoped_unread_command_before_a_files_only_step_is_its_caveat() -> None:
    plan = plan_of({"Dockerfile": 'FROM base\nARG X\nRUN eval "$X"\nCOPY x.py /dest/x.py\n', "x.py": ""})
    assert {path: placed.source for path, placed in plan.image.items()} == {"/dest/x.py": "x.py"}
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [("unread", 3, EVAL, None)]
    assert [(n.line, n.reason) for n in plan.caveats("x.py")] == [(3, EVAL)]


def test_an_unscoped_unread_command_of_another_stage_is_no_caveat() -> None:
    plan = plan_of({"Dockerfile": 'FROM base AS other\nARG X\nRUN eval "$X"\nFROM base\nCOPY x.py /dest/x.py\n',
                    "x.py": ""})
    assert {path: placed.source for path, placed in plan.image.items()} == {"/dest/x.py": "x.py"}
    assert plan.caveats("x.py") == ()
