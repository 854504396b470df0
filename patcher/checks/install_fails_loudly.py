"""Rule install-fails-loudly: a failed copy of a patched file fails the image build."""

from __future__ import annotations

from typing import Iterator, Sequence

from ..shipping.plan import DOCKERFILE, Installed
from .base import BuildContext, Invalid, Settings, TreeRule, Valid, Violation

# The examples are install scripts; the tests put each one in this tree.
EXAMPLE_SCRIPT = "qwen3_6_scripts/patch_ops.sh"
EXAMPLE_TARGET = "qwen3_6_scripts/paged_attn.py"
EXAMPLE_FILES = {
    "Dockerfile": "FROM base\nWORKDIR /workspace/\nCOPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\n"
                  "RUN cd ./qwen3_6_scripts && ./patch_ops.sh\n",
    EXAMPLE_TARGET: "x = 1\n",
    "qwen3_6_scripts/other.py": "y = 2\n",
}
# Redirections that hide a failed copy's message, not the failure itself.
_QUIET = ("/dev/null", "2>&1")
_OPS = "/usr/local/lib/python3.10/dist-packages/vllm/attention/ops"
_SHIPPED = "/workspace/qwen3_6_scripts/paged_attn.py"


def _dockerfile(run: str) -> str:
    """The examples' Dockerfile with RUN as its last line: a copy made by the Dockerfile itself."""
    return ("FROM base\nWORKDIR /workspace/\nCOPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\n"
            f"{run}\n")


class InstallFailsLoudly(TreeRule):
    """The install script stops on a failed copy of a file the patch set changes.

    Without ``set -e`` (or with ``|| true`` / ``2>/dev/null`` on the copy) a
    failed ``cp`` lets the build succeed with the vendor's unpatched file
    still in the image. Files the Dockerfile ``COPY``s itself fail loudly.
    A ``cp`` written in a Dockerfile ``RUN`` line is judged as Docker runs
    it: ``/bin/sh -c`` without ``set -e``, the build failing only on the
    whole line's exit status; so ``RUN cp a b`` (or ``... && cp a b``, or
    ``cp a b && ...``) fails loudly, ``RUN cp a b || true`` and
    ``RUN cp a b; echo done`` do not.
    """

    ID = "install-fails-loudly"
    DESCRIPTION = __doc__ or ""
    VALID = (
        Valid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py\n"),
        Valid(f"#!/bin/bash\nset -euo pipefail\nVLLM={_OPS}\ncp ./paged_attn.py \"$VLLM/paged_attn.py\"\n"),
        # Hiding the failure of a file no patch changes is not this rule's concern.
        Valid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py\ncp ./other.py /tmp/other.py || true\n"),
        # The vendor's own Dockerfile: the copy is in the script its RUN line runs, judged there.
        Valid(_dockerfile("RUN cd ./qwen3_6_scripts && ./patch_ops.sh"), path=DOCKERFILE,
              files={"qwen3_6_scripts/patch_ops.sh": f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py\n"}),
        # A RUN line's exit status fails the build: the copy decides it, alone, last, or left of `&&`.
        Valid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py"), path=DOCKERFILE),
        Valid(_dockerfile(f"RUN mkdir -p {_OPS} && cp {_SHIPPED} {_OPS}/paged_attn.py"), path=DOCKERFILE),
        Valid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py \\\n    && echo installed"), path=DOCKERFILE),
        Valid(_dockerfile(f'RUN ["cp", "{_SHIPPED}", "{_OPS}/paged_attn.py"]'), path=DOCKERFILE),
        Valid(_dockerfile(f"RUN cp /workspace/qwen3_6_scripts/other.py /tmp/o.py || true; cp {_SHIPPED} /tmp/p.py"),
              path=DOCKERFILE),
    )
    INVALID = (
        Invalid(f"echo start\ncp ./paged_attn.py {_OPS}/paged_attn.py\necho done\n", line=2,
                found="runs without `set -e`"),
        Invalid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py || true\n", line=2, found="`|| true`"),
        Invalid("set -e\nfor ROOT in /usr/local/lib/python3.10 /usr/lib/python3; do\n"
                "  cp ./paged_attn.py $ROOT/dist-packages/vllm/attention/ops/paged_attn.py 2>/dev/null\n"
                "done\n", line=3, found="`2>/dev/null`"),
        Invalid(f"cp ./paged_attn.py {_OPS}/paged_attn.py\nset -e\n", line=1, found="runs without `set -e`"),
        Invalid(f"set -e\nset +e\ncp ./paged_attn.py {_OPS}/paged_attn.py\n", line=3, found="runs without `set -e`"),
        # `set -e` ignores a failure on the left of && (and in a pipe, without pipefail).
        Invalid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py && echo copied\n", line=2, found="`&& ...`"),
        Invalid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py || echo 'copy failed'\n", line=2,
                found="`|| echo`"),
        # The same forms on a Dockerfile RUN line.
        Invalid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py || true"), path=DOCKERFILE, line=4,
                found="`|| true`"),
        Invalid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py; echo done"), path=DOCKERFILE, line=4,
                found="does not decide its RUN line's exit status"),
        Invalid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py 2>/dev/null; echo done"), path=DOCKERFILE,
                line=4, found="does not decide its RUN line's exit status"),
        Invalid(_dockerfile(f"RUN cp {_SHIPPED} {_OPS}/paged_attn.py 2>/dev/null"), path=DOCKERFILE, line=4,
                found="`2>/dev/null`: the RUN line still fails the build"),
    )

    def check_tree(self, build: BuildContext, settings: Settings) -> Iterator[Violation]:
        """Yield each install of a patched file whose failure the script would hide."""
        plan, targets = build.plan, build.targets
        scripts = {script.path: script for script in plan.scripts}
        seen = set()
        for installed in plan.installed:
            if installed.path not in targets or installed.script not in (*scripts, DOCKERFILE):
                continue
            key = (installed.script, installed.line)
            if key in seen:
                continue  # one line copying to several candidate roots is one finding
            seen.add(key)
            if installed.script == DOCKERFILE:
                message = _run_line(installed)
                if message is not None:
                    yield settings.violation(installed.script, installed.line, message)
                continue
            what = f"the copy of {installed.path} to {installed.image_path}"
            quiet = [h for h in installed.hides_failure if h.endswith(_QUIET)]
            hiding = [h for h in installed.hides_failure if h not in quiet]
            if hiding:
                message = f"{what} {_list(hiding)}, so a failed copy goes unnoticed and the build succeeds"
            elif not installed.stops_on_error:
                message = f"{what} runs without `set -e`, so the script goes on after a failed copy"
            elif quiet:
                message = (f"{what} {_list(quiet)}: `set -e` still stops the build if it fails, "
                           f"but the log will not say why")
            else:
                continue
            yield settings.violation(installed.script, installed.line, message)


def _run_line(installed: Installed) -> str | None:
    """Judge a copy a Dockerfile RUN line makes itself, as ``/bin/sh -c`` runs it; None when its failure fails the build.

    No ``set -e`` is needed there: Docker fails the build on the line's exit
    status. The shipping reader says whether a failed copy decides it
    (``stops_on_error``): a copy left of ``&&`` does, as the last command.
    """
    what = f"the copy of {installed.path} to {installed.image_path}"
    quiet = [h for h in installed.hides_failure if h.endswith(_QUIET)]
    if not installed.stops_on_error:
        hiding = [h for h in installed.hides_failure if h not in quiet]
        how = _list(hiding) if hiding else "does not decide its RUN line's exit status (a later command does)"
        return f"{what} {how}, so a failed copy goes unnoticed and the build succeeds"
    if quiet:
        return f"{what} {_list(quiet)}: the RUN line still fails the build if it fails, but the log will not say why"
    return None


def _list(hides: Sequence[str]) -> str:
    """``is followed by `|| true` and `2>/dev/null``` for a message."""
    return "is followed by " + " and ".join(f"`{h}`" for h in hides)
