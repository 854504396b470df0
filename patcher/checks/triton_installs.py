"""Find Triton installed by the image's install steps: the Dockerfile's ``RUN`` lines and the scripts it runs.

Each ``pip install`` operand (a requirement, a wheel, a URL to one; read
by ``pip_installs``) is judged by the project it names: a Triton build
(``triton``, ``triton-nightly``, ``pytorch-triton``), not a package that
only shares the word (``tritonclient``).
"""

from __future__ import annotations

from typing import Iterator, Mapping

from .base import BuildContext, Settings, Violation
from .pip_installs import dockerfile_runs, logical_lines, pip_installs
from .triton_names import TRITON

DOCKERFILE = "Dockerfile"


def is_triton_project(project: str) -> bool:
    """Tell whether a pip project is a Triton build: triton, triton-nightly, pytorch-triton (not tritonclient)."""
    return project == TRITON or project.startswith(TRITON + "-") or project.endswith("-" + TRITON) \
        or f"-{TRITON}-" in project


def triton_installs(build: BuildContext, settings: Settings) -> Iterator[Violation]:
    """Flag each pip install of a Triton project in the Dockerfile's ``RUN`` lines and the install scripts."""
    environments = {run.line: run.environment for run in build.plan.dockerfile.runs}
    texts: list[tuple[str, str, Mapping[str, str]]] = [(DOCKERFILE, build.text(DOCKERFILE), {})]
    texts += [(s.path, build.text(s.path), environments.get(s.run_line, {})) for s in build.plan.scripts]
    for path, text, environment in texts:
        if TRITON not in text.lower() and not any(TRITON in v.lower() for v in environment.values()):
            continue  # installing Triton spells its name somewhere: a requirement, a wheel, a variable
        lines = dockerfile_runs(text) if path == DOCKERFILE else logical_lines(text)
        for line, what in pip_installs(lines, is_triton_project, environment):
            yield settings.violation(path, line, (
                f"installs Triton (`{what}`) in the image; Triton's kernels hang the BI-V100 "
                f"(its runtime does not support the PTX Triton compiles)"))
