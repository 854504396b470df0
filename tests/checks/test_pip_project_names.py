"""Which project a ``pip install`` operand names: a requirement (extras, markers, ``@ URL``) or a wheel or sdist by path
or URL; an operand that names none (a folder, a VCS URL, a query string) gives ""."""

from __future__ import annotations

import pytest

from patcher.checks.requirement_files import project_name


@pytest.mark.parametrize("word, project", [
    ("triton", "triton"),
    ("Triton==2.1.0", "triton"),
    ("triton[tests]>=2.1", "triton"),
    ("pytorch_triton.rocm~=3.0", "pytorch-triton-rocm"),
    ("triton ; python_version >= '3.8'", "triton"),
    ("triton@https://example.com/triton-2.1.0.tar.gz", "triton"),
    ("./wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl", "triton"),
    ("https://mirror/triton-2.1.0.tar.gz?token=a-b?c#sha256=x-y#z", "triton"),
    ("https://mirror/get?name=triton-2.1.0.whl", ""),
    ("./triton-2.1.0-cp310-cp310-linux_x86_64.whl#sha256=ab#egg=triton", "triton"),
    ("/tmp/pytorch_triton-3.0.0.zip", "pytorch-triton"),
    ("file:///wheels/Triton-Nightly-3.0.whl#egg=x", "triton"),
    (".", ""),
    ("git+https://github.com/triton-lang/triton", ""),
])
def test_the_project_an_operand_names(word: str, project: str) -> None:
    assert project_name(word) == project
