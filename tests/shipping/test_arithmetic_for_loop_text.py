"""A bash ``for ((...))`` loop that never ends is stopped; the note shows the loop as written, up to its
``done`` and no further."""

from __future__ import annotations

from tests.shipping.conftest import run_script


def test_the_note_on_an_endless_arithmetic_for_shows_the_loop_only() -> None:
    plan = run_script("for ((;;)); do :; done; echo after\n")
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("stop", 1, "for ((;;)); do :; done")]
