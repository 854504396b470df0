"""A hint that names a patcher command names the input as given, shell-quoted: pasted, it does what it says.

The core raising the error does not know the input; the CLI names it (and
the run's --patches), so the command works on that very input.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from tests.fixtures_cli import SHIPPED
from tests.fixtures_hostile_inputs import deep_manifest


def _hinted(stderr: str) -> list[str]:
    """The patcher command the one error line's hint names, split as a shell would."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert "'patcher " in line, line
    parts = shlex.split(line[line.index("'patcher ") + 1:line.rindex("'")])  # the hint's command, its quotes kept
    assert parts[0] == "patcher"
    return parts[1:]


@pytest.fixture
def spaced(vendor_copy: Path, tmp_path: Path) -> Path:
    """The vendor tree in a folder whose name needs quoting."""
    tree = tmp_path / "my drop" / vendor_copy.name
    shutil.copytree(vendor_copy, tree)
    return tree


def test_a_target_that_does_not_ship_hints_inspect_on_the_input(cli, spaced: Path) -> None:  # type: ignore[no-untyped-def]
    script = spaced / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"paged_attn.py" not in line))
    for command in ("apply", "diff", "verify-sync"):
        result = cli(command, spaced)
        assert result.exit_code == 2, result.stderr
        assert f"(run 'patcher inspect {shlex.quote(str(spaced))}' to see what the build copies where)" \
            in result.stderr, result.stderr
    shown = cli(*_hinted(cli("apply", spaced).stderr))
    assert shown.exit_code == 0, shown.stderr
    assert "  vllm/attention/ops/paged_attn.py: NOT SHIPPED: nothing the image ships lands at" in shown.stdout


def test_a_series_that_does_not_apply_hints_apply_for_the_full_report(cli, spaced: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    shipped = spaced / SHIPPED
    shipped.write_bytes(shipped.read_bytes().replace(b"use_v1 = True", b"use_v1 = False"))
    result = cli("verify-numerics", spaced)
    assert result.exit_code == 2
    hinted = _hinted(result.stderr)
    assert hinted == ["apply", str(spaced)]
    report = cli(*hinted)
    assert report.exit_code == 2
    assert any(line.strip().startswith("failed") and "three-tier-decode" in line for line in report.stderr.splitlines()), \
        report.stderr


def test_an_unreadable_recorded_override_hints_apply_on_the_input(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tree = deep_manifest(tmp_path / "my drop")
    result = cli("check", tree)
    assert result.exit_code == 2
    hinted = _hinted(result.stderr)
    assert hinted == ["apply", str(tree)]
    again = cli(*hinted, "-o", "context")
    assert again.exit_code == 0, again.stderr  # a fresh manifest, which check reads
    assert cli("check", cli.cwd / "context").exit_code in (0, 1)


def test_a_hint_carries_the_runs_target_and_patches_as_given(cli, spaced: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import re

    from tests.fixtures_patches import copy_patch_set

    dockerfile = spaced / "Dockerfile"
    dockerfile.write_bytes(re.sub(rb"^(FROM [^\r\n]+)", rb"\1 AS final", dockerfile.read_bytes(), count=1, flags=re.M))
    script = spaced / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"paged_attn.py" not in line))
    team = copy_patch_set(tmp_path / "my team")
    result = cli("apply", spaced, "--target", "final", "--patches", team,
                 "--set", "prefix-pregather.max_gather_tokens=4096")
    assert result.exit_code == 2, result.stderr
    hinted = _hinted(result.stderr)  # inspect takes no --set
    assert hinted == ["inspect", str(spaced), "--target", "final", "--patches", str(team)]
    assert cli(*hinted).exit_code == 0


def test_a_hint_naming_apply_carries_the_runs_settings(cli, spaced: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")
    from tests.fixtures_patches import copy_patch_set

    shipped = spaced / SHIPPED
    shipped.write_bytes(shipped.read_bytes().replace(b"use_v1 = True", b"use_v1 = False"))
    team = copy_patch_set(tmp_path / "team")
    result = cli("verify-numerics", spaced, "--patches", team, "--set", "prefix-pregather.max_gather_tokens=4096")
    assert result.exit_code == 2
    assert _hinted(result.stderr) == ["apply", str(spaced), "--patches", str(team),
                                      "--set", "prefix-pregather.max_gather_tokens=4096"]
