"""Rule install-fails-loudly: a failed copy of a patched file fails the image build."""

from __future__ import annotations

from typing import Iterator, Sequence

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


class InstallFailsLoudly(TreeRule):
    """The install script stops on a failed copy of a file the patch set changes.

    Without ``set -e`` (or with ``|| true`` / ``2>/dev/null`` on the copy) a
    failed ``cp`` lets the build succeed with the vendor's unpatched file
    still in the image. Files the Dockerfile ``COPY``s itself fail loudly.
    """

    ID = "install-fails-loudly"
    DESCRIPTION = __doc__ or ""
    VALID = (
        Valid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py\n"),
        Valid(f"#!/bin/bash\nset -euo pipefail\nVLLM={_OPS}\ncp ./paged_attn.py \"$VLLM/paged_attn.py\"\n"),
        # Hiding the failure of a file no patch changes is not this rule's concern.
        Valid(f"set -e\ncp ./paged_attn.py {_OPS}/paged_attn.py\ncp ./other.py /tmp/other.py || true\n"),
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
    )

    def check_tree(self, build: BuildContext, settings: Settings) -> Iterator[Violation]:
        """Yield each install of a patched file whose failure the script would hide."""
        plan, targets = build.plan, build.targets
        scripts = {script.path: script for script in plan.scripts}
        seen = set()
        for installed in plan.installed:
            if installed.path not in targets or installed.script not in scripts:
                continue
            key = (installed.script, installed.line)
            if key in seen:
                continue  # one line copying to several candidate roots is one finding
            seen.add(key)
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


def _list(hides: Sequence[str]) -> str:
    """``is followed by `|| true` and `2>/dev/null``` for a message."""
    return "is followed by " + " and ".join(f"`{h}`" for h in hides)
