"""bash's ERR trap runs when a command fails, and the lines after it still see that command's failure in ``$?``.

An installer that logs its failures with ``trap '...' ERR`` and then tests
``$?`` itself (``if [ $? -ne 0 ]; then ...``) takes the branch for the
failed command, not for the trap's own ``echo``. Checked with bash 5.2.
"""

from __future__ import annotations

from tests.shipping.conftest import in_dest, run_script


def test_the_status_after_an_err_trap_is_the_failed_commands() -> None:
    script = ("trap 'echo \"install step failed\" >&2' ERR\n"
              "cp missing.py /dest/\n"
              "if [ $? -ne 0 ]; then cp x.py /dest/fallback.py; fi\n")
    plan = run_script(script)
    assert in_dest(plan) == ["/dest/fallback.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 2)]
