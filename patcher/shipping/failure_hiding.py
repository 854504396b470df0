"""What hides a command's failure from the build: ``|| true``, an ``&&`` list, a pipe, ``2>/dev/null``.

A failure followed by ``|| exit 1`` (or ``|| false``, or a group ending so)
still ends the script; one followed by another command is hidden, and named
with the copy it hid. A redirection of standard error hides the message only.
"""

from __future__ import annotations

from .shell_nodes import Group, Pipeline, Redirect, Simple, exit_status, plain_text


def and_or_hides(pipes: list[Pipeline], ops: list[str]) -> list[list[str]]:
    """What hides each pipeline's failure: ``&&`` after it, ``|| cmd`` anywhere after it unless CMD fails too."""
    hides: list[list[str]] = [[] for _ in pipes]
    for index, op in enumerate(ops):
        following = pipes[index + 1].commands[0].node
        word = plain_text(following.words[0]) if isinstance(following, Simple) and following.words else None
        if op == "&&":
            hides[index].append("&& ...")
        elif _fails(pipes[index + 1]):
            continue  # '|| exit 1', '|| { echo failed; exit 1; }': the failure still ends the build
        elif word in ("true", ":"):
            for earlier in hides[:index + 1]:
                earlier.append("|| true")
        else:
            said = " ".join(plain_text(w) or "..." for w in following.words[:2]) \
                if isinstance(following, Simple) and word in ("exit", "return") else word
            for earlier in hides[:index + 1]:
                earlier.append(f"|| {said or '...'}")
    return hides


def _fails(pipeline: Pipeline) -> bool:
    """Whether PIPELINE, run after a failure (``|| PIPELINE``), surely ends in failure itself.

    ``exit``/``return`` with no status repeat the failure's, and a status
    that is not a literal (``exit $?``, ``exit $rc``) is taken to be one; a
    group fails when its first ``exit`` does or, without one, its last command.
    """
    if pipeline.negated or len(pipeline.commands) != 1:
        return False
    node = pipeline.commands[0].node
    if isinstance(node, Group):
        items = node.body.items
        for item in items:
            exits = None if item.rest or item.background else _exits(item.first)
            if exits is not None:
                return exits
        return bool(items) and not items[-1].rest and not items[-1].background and _fails(items[-1].first)
    status = _exits(pipeline)
    return bool(status) or (isinstance(node, Simple) and bool(node.words) and plain_text(node.words[0]) == "false")


def _exits(pipeline: Pipeline) -> bool | None:
    """For ``exit``/``return``: whether its status is a failure; None for any other command."""
    node = pipeline.commands[0].node
    if pipeline.negated or len(pipeline.commands) != 1 or not isinstance(node, Simple) or not node.words \
            or plain_text(node.words[0]) not in ("exit", "return"):
        return None
    if len(node.words) < 2:
        return True  # the status of the command that failed
    status = plain_text(node.words[1])
    code = exit_status(status) if status is not None else None
    if code is None:
        return True  # '$?', '$rc': not known here, taken to be the failure's
    return code != 0


def redirect_hides(redirects: tuple[Redirect, ...]) -> list[str]:
    """``2>/dev/null``, ``&>/dev/null`` or ``>/dev/null 2>&1``: the error message goes nowhere."""
    found: list[str] = []
    stdout_null = False
    for redirect in redirects:
        target = "".join(getattr(p, "text", "?") for p in redirect.target)
        if redirect.op in ("&>", "&>>") and target == "/dev/null":
            found.append("&>/dev/null")
        elif redirect.op in (">", ">>", ">|") and target == "/dev/null":
            if redirect.fd == 2:
                found.append("2>/dev/null")
            elif redirect.fd in (None, 1):
                stdout_null = True
        elif redirect.op == ">&" and redirect.fd == 2 and target == "1" and stdout_null:
            found.append(">/dev/null 2>&1")
    return found
