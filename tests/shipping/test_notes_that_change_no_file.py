"""Which of the reader's notes say a command could change a file of the image (``Note.could_change``).

A failure the reader follows ("fails") or a branch it follows both ways
("assumed") changes no file it does not already account for; an unread
command with a scope could change the paths of its scope only, one without
a scope any path.
"""

from __future__ import annotations

from tests.shipping.conftest import run_script


def test_only_unread_commands_could_change_a_file_and_within_their_scope() -> None:
    plan = run_script("cp none /dest/b\nif [ -e /etc/foo ]; then cp x.py /dest/c; fi\nset -C\ntrue > /etc/app.conf\n"
                      "eval \"$(python3 -c 'print(1)')\"\n")
    assert [(n.kind, n.scope, n.could_change("/etc/app.conf"), n.could_change("/dest/c")) for n in plan.notes] == [
        ("fails", None, False, False),
        ("assumed", None, False, False),
        ("unread", ("/etc/app.conf",), True, False),
        ("unread", None, True, True),
    ]
