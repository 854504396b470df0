"""The lines ``apply`` prints on stderr about what it did to the build context, word for word.

A user reads them to learn why a file they did not patch changed: where the
Dockerfile copies the whole context root, apply adds the manifest to
``.dockerignore``, and says so, and why, in one line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fixtures_cli import copy_the_context_root


def test_apply_says_in_one_line_that_it_kept_the_manifest_out_of_an_image_copying_the_context_root(
        cli: Any, vendor_copy: Path, make_zip: Any) -> None:
    copy_the_context_root(vendor_copy)
    # The stale root copies must stay out too, or the safety rules refuse them.
    (vendor_copy / ".dockerignore").write_text("/__init__.py\n/attention.py\n/prefix_prefill.py\n/paged_attn.py\n")
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar")
    assert result.exit_code == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if ".dockerignore" in line]
    assert said == ["the Dockerfile copies the context root: added patcher-manifest.json to .dockerignore "
                    "so the manifest stays out of the image"]


def test_apply_says_nothing_of_dockerignore_when_the_image_copies_only_its_scripts(
        cli: Any, vendor_zip: Path) -> None:
    result = cli("apply", vendor_zip, "-o", "ctx.tar")
    assert result.exit_code == 0, result.stderr
    assert ".dockerignore" not in result.stderr and "context root" not in result.stderr
