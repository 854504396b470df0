"""``patcher new`` writes a patch that loads, lists it in the series, and leaves ``patcher test`` failing until its example is written.

It refuses an existing or malformed id, an unknown ``--after``, a missing
series or folder, a bad target or scope, and a template that does not give
a loadable patch, writing nothing; a set's own template is rendered
strictly; without any template the one error line's hint works.
"""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any

import pytest

from patcher.authoring.series_file import load_with

from tests.fixtures_patches import TEMPLATES, edit_file, one_error_line


def _new(cli: Any, team: Path, *args: str) -> Any:
    return cli("new", *args, "--target", "vllm/attention/ops/paged_attn.py",
               "--scope", "PagedAttention.forward_decode", "--patches", team)


def test_new_writes_a_loadable_patch_that_test_fails_until_its_example_is_written(cli: Any, team: Path) -> None:
    result = _new(cli, team, "decode-fast-path", "--after", "three-tier-decode")
    assert result.exit_code == 0, result.output
    assert "wrote " in result.stdout and "listed after three-tier-decode" in result.stdout
    names = [line for line in (team / "series").read_text().splitlines() if not line.startswith("# The")]
    assert names == ["three-tier-decode.toml", "# decode-fast-path.toml  # inactive until 'patcher test --activate "
                     "decode-fast-path' passes", "prefix-pregather.toml", "prefix-buffer-reuse.toml"]
    patch = next(p for p in load_with(team, include=["decode-fast-path"]).patches if p.id == "decode-fast-path")
    assert patch.last_update == datetime.date.today().isoformat()
    assert (patch.target, patch.scope, len(patch.steps), patch.examples) == (
        "vllm/attention/ops/paged_attn.py", "PagedAttention.forward_decode", 1, ())
    assert patch.summary.startswith("Say in one line what decode-fast-path changes")
    text = patch.path.read_text()
    assert "# class PagedAttention:\n#     def forward_decode(self):" in text  # the example skeleton

    tested = cli("test", "decode-fast-path", "--patches", team)
    assert tested.exit_code == 1
    failures = [line for line in tested.stdout.splitlines() if line.startswith("FAIL")]
    assert failures == ["FAIL  decode-fast-path: examples: patch decode-fast-path: example not written yet "
                        "(add an [[examples]] table with 'before' and 'after' or 'error' to decode-fast-path.toml)"]


def test_new_then_edit_then_test_passes(cli: Any, team: Path) -> None:
    assert _new(cli, team, "no-forced-v1").exit_code == 0
    path = team / "no-forced-v1.toml"
    edit_file(path, 'pattern = "the_code_to_find()"\ncode = "the_code_that_replaces_it()"',
              'pattern = "use_v1 = True"\ncode = "use_v1 = max_seq_len <= 8192"')
    edit_file(path, '# applied-when = ["the_new_code($X)"]', 'applied-when = ["use_v1 = max_seq_len <= 8192"]')
    path.write_text(path.read_text() + '''
[[examples]]
name = "the override goes"
before = \'\'\'
class PagedAttention:
    def forward_decode(self):
        use_v1 = True  # forced
\'\'\'
after = \'\'\'
class PagedAttention:
    def forward_decode(self):
        use_v1 = max_seq_len <= 8192  # forced
\'\'\'
''')
    result = cli("test", "no-forced-v1", "--patches", team)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "13 passed, 0 failed"


def test_new_keeps_the_series_line_endings_and_its_last_line(cli: Any, team: Path) -> None:
    # A series written on Windows, its last line without a newline.
    (team / "series").write_bytes(b"three-tier-decode.toml\r\nprefix-pregather.toml\r\nprefix-buffer-reuse.toml")
    assert _new(cli, team, "decode-fast-path").exit_code == 0
    assert (team / "series").read_bytes() == (b"three-tier-decode.toml\r\nprefix-pregather.toml\r\n"
                                              b"prefix-buffer-reuse.toml\r\n# decode-fast-path.toml  # inactive "
                                              b"until 'patcher test --activate decode-fast-path' passes\r\n")
    assert [p.id for p in load_with(team, include=["decode-fast-path"]).patches][-1] == "decode-fast-path"


@pytest.mark.parametrize("patch_id", ["three-tier-decode", "Decode-Fast", "decode_fast", "../escape", "x.toml", "x-", ""])
def test_new_refuses_an_existing_or_malformed_id_and_writes_nothing(cli: Any, team: Path, patch_id: str) -> None:
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    line = one_error_line(_new(cli, team, patch_id))
    assert ("already exists" if patch_id == "three-tier-decode" else "is not a patch id") in line
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before


def test_new_refuses_an_unknown_after_a_missing_series_and_a_missing_folder(cli: Any, team: Path, tmp_path: Path) -> None:
    line = one_error_line(_new(cli, team, "decode-fast-path", "--after", "three-tier"))
    assert "--after three-tier: no such patch in the series" in line and "three-tier-decode" in line
    assert not (team / "decode-fast-path.toml").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no 'series' file" in one_error_line(_new(cli, empty, "decode-fast-path"))
    assert list(empty.iterdir()) == []
    assert "no such patch set folder" in one_error_line(_new(cli, tmp_path / "missing", "decode-fast-path"))


def test_new_refuses_a_bad_target_or_scope(cli: Any, team: Path) -> None:
    line = one_error_line(cli("new", "x", "--target", "/abs/paged_attn.py", "--scope", "A.b", "--patches", team))
    assert "not a relative path to a .py file" in line
    line = one_error_line(cli("new", "x", "--target", "a.py", "--scope", "A.b()", "--patches", team))
    assert "is not a qualified name" in line


def test_new_uses_the_sets_own_template_strictly(cli: Any, team: Path) -> None:
    # A set may bring its own new-patch template; a variable nobody defines is an error, never "".
    own = team.parent / "templates" / "new-patch"
    own.mkdir(parents=True, exist_ok=True)
    (own / "patch.toml.j2").write_text('id = "{{ id }}"\nowner = "{{ owner }}"\n')
    series = (team / "series").read_bytes()
    line = one_error_line(_new(cli, team, "decode-fast-path"))
    assert "undefined variable" in line and "'owner' is undefined" in line
    assert not (team / "decode-fast-path.toml").exists() and (team / "series").read_bytes() == series


def test_new_refuses_a_template_that_does_not_give_a_loadable_patch(cli: Any, team: Path) -> None:
    own = team.parent / "templates" / "new-patch"
    own.mkdir(parents=True, exist_ok=True)
    (own / "patch.toml.j2").write_text('id = "{{ id }}"\n')
    line = one_error_line(_new(cli, team, "decode-fast-path"))
    assert "gives a patch that does not load" in line and "missing key 'description'" in line
    assert not (team / "decode-fast-path.toml").exists()


def test_new_without_its_bundled_template_fails_with_one_line(
        cli: Any, team: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An installation that lost templates/new-patch, and a patch set without its own copy.
    import patcher.resources

    installed = tmp_path / "installed"
    shutil.copytree(TEMPLATES, installed / "templates", ignore=shutil.ignore_patterns("new-patch"))
    monkeypatch.setattr(patcher.resources, "_CHECKOUT", installed)
    monkeypatch.setattr(patcher.resources, "_INSTALLED", tmp_path / "no-prefix")
    shutil.rmtree(team.parent / "templates" / "new-patch")
    before = {p.name: p.read_bytes() for p in team.iterdir()}
    line = one_error_line(_new(cli, team, "decode-fast-path"))
    assert line == (f"error: {installed / 'templates'}: patcher's own template new-patch/patch.toml.j2 is missing "
                    "(the installation is incomplete: reinstall patcher, or give this patch set its own "
                    f"template at {team.parent / 'templates' / 'new-patch' / 'patch.toml.j2'})")
    assert {p.name: p.read_bytes() for p in team.iterdir()} == before
    # The hint works: with the set's own template in place, the same command succeeds.
    own = team.parent / "templates" / "new-patch"
    own.mkdir()
    shutil.copy(TEMPLATES / "new-patch" / "patch.toml.j2", own / "patch.toml.j2")
    assert _new(cli, team, "decode-fast-path").exit_code == 0
    assert (team / "decode-fast-path.toml").is_file()
