"""``RUN --mount=type=bind,from=STAGE,source=FILE``: a single file of an earlier stage mounted at the target.

BuildKit mounts that file itself at the target path for the RUN. Pins: a file the stage placed from the
context is what the RUN sees there, so a copy of it places that context file, and its way through the build
(COPY in the stage, the mount, the cp) is kept; the mount is gone after the RUN.
"""

from __future__ import annotations

from tests.shipping.conftest import plan_of


def test_a_file_of_a_stage_mounted_alone_is_the_context_file_that_stage_placed() -> None:
    plan = plan_of({"Dockerfile": "FROM base AS build\nCOPY x.py /app/x.py\nFROM base\nRUN mkdir /dest\n"
                                  "RUN --mount=type=bind,from=build,source=/app/x.py,target=/m/x.py "
                                  "cp /m/x.py /dest/x.py\n",
                    "x.py": ""})
    assert {path: placed.source for path, placed in plan.image.items()} == {"/dest/x.py": "x.py"}
    steps = plan.image["/dest/x.py"].steps
    assert [(s.line, s.command, s.stage, s.path) for s in steps] == [
        (2, "COPY", "build", "/app/x.py"), (5, "RUN --mount", "stage 1", "/m/x.py"), (5, "cp", "stage 1", "/dest/x.py")]
    assert plan.dockerfile.stages[1].uses == (0,) and plan.notes == ()
