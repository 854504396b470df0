"""Which commands a Dockerfile runs: each ``RUN`` (any case, continued over lines) in shell or exec form, at its line."""

from __future__ import annotations

from patcher.checks.dockerfile_lines import dockerfile_runs


def test_each_run_is_read_in_shell_and_exec_form_at_its_line() -> None:
    dockerfile = ("FROM registry/bi100-py3.10:v1.2.3\r\n"
                  "RUN mkdir /workspace\r\n"
                  "run pip install triton==2.1.0 \\\r\n"
                  "    && rm -rf /root/.cache\r\n"
                  "RUN [\"pip3\", \"install\", \"pytorch triton\"]\r\n"
                  "RUN [\"pip3\", 1]\r\n"
                  "RUN [not json\r\n"
                  "RUN pip install vllm\r\n"
                  "RUN\r\n"
                  "# RUN pip install triton\r\n"
                  "ENV RUN=1\r\n")
    runs = [(line, " ".join(command.split()) if line == 3 else command) for line, command in dockerfile_runs(dockerfile)]
    assert runs == [
        (2, "mkdir /workspace"),
        (3, "pip install triton==2.1.0 && rm -rf /root/.cache"),
        (5, "pip3 install 'pytorch triton'"),
        (6, '["pip3", 1]'),
        (8, "pip install vllm"),
    ]
