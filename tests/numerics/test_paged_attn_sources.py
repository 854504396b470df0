"""The two files verify-numerics compares: the shipped paged_attn.py as the vendor ships it and as apply would write it.

Apply's core runs in memory on the input (a zip or a folder). A patch set
that does not apply, a shipped copy that does not parse, or a patch set
with no patch for a paged_attn.py is refused with one line that says what
and what to do; an input that already has the patches compares the file
with itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from patcher.archive import open_source
from patcher.errors import PatcherError, PatchSetError
from patcher.numerics.sources import PagedAttnSources, paged_attn_sources
from patcher.patchset import load_patch_set

from tests.fixtures_patches import PATCHED, VENDOR_SOURCE, patch_toml, replace_step, write_patch_set
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE, VENDOR_ZIP

ALL = ("three-tier-decode", "prefix-pregather", "prefix-buffer-reuse")


def sources_of(source: Path, patches: Path = PATCHES) -> PagedAttnSources:
    with open_source(source) as tree:
        return paged_attn_sources(tree, load_patch_set(patches))


def refused(source: Path, patches: Path = PATCHES) -> PatcherError:
    with pytest.raises(PatcherError) as error:
        sources_of(source, patches)
    return error.value


@pytest.mark.parametrize("source", [VENDOR_ZIP, VENDOR_TREE], ids=["zip", "folder"])
def test_the_vendor_drop_gives_the_shipped_copy_before_and_after_the_three_patches(source: Path) -> None:
    assert sources_of(source) == PagedAttnSources(SHIPPED, VENDOR_SOURCE, PATCHED.read_bytes(), ALL)


def test_a_drop_that_already_has_the_patches_compares_the_file_with_itself(vendor_copy: Path) -> None:
    (vendor_copy / SHIPPED).write_bytes(PATCHED.read_bytes())
    assert sources_of(vendor_copy) == PagedAttnSources(SHIPPED, PATCHED.read_bytes(), PATCHED.read_bytes(), ())


def renamed_longest(tree: Path) -> None:
    """A new drop that calls forward_decode's longest sequence ``longest``: three-tier-decode's anchor is gone."""
    shipped = tree / SHIPPED
    text = shipped.read_bytes()
    assert text.count(b"actual_max") == 2
    shipped.write_bytes(text.replace(b"actual_max", b"longest"))


def test_a_drop_the_patches_do_not_fit_is_refused_naming_the_file_the_patch_and_why(vendor_copy: Path) -> None:
    renamed_longest(vendor_copy)
    error = refused(vendor_copy)
    assert type(error) is PatcherError and error.where is None
    assert error.hint == "run 'patcher apply VENDOR' for the full report"
    assert error.message.startswith(f"the patch set does not apply: {SHIPPED}: three-tier-decode: ")
    assert error.message.count(f"{SHIPPED}: ") == 1  # the prefill patches still apply


def test_every_patch_that_does_not_fit_is_named_in_one_line(vendor_copy: Path) -> None:
    renamed_longest(vendor_copy)
    shipped = vendor_copy / SHIPPED
    text = shipped.read_bytes()
    # The prefill's tile loop renamed too: prefix-pregather no longer finds it.
    assert text.count(b"tile_blk") > 2
    shipped.write_bytes(text.replace(b"tile_blk", b"tile_start"))
    message = refused(vendor_copy).message
    assert message.startswith(f"the patch set does not apply: {SHIPPED}: three-tier-decode: ")
    assert f"; {SHIPPED}: prefix-pregather: " in message
    assert "\n" not in message


def test_a_shipped_copy_that_does_not_parse_is_refused_with_the_parse_error(vendor_copy: Path) -> None:
    shipped = vendor_copy / SHIPPED
    shipped.write_bytes(shipped.read_bytes() + b"\ndef broken(:\n")
    error = refused(vendor_copy)
    assert re.match(f"the patch set does not apply: {SHIPPED}: line 54[34]: invalid syntax; it does not parse under "
                    "Python ", error.message)
    assert "three-tier-decode" not in error.message  # the file, not each patch, is what failed
    assert error.hint == "run 'patcher apply VENDOR' for the full report"


def test_the_refusal_is_one_line_the_hint_leads_to_the_full_report(cli, vendor_copy: Path, make_zip) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("torch")  # verify-numerics refuses to start without it, before reading the drop
    renamed_longest(vendor_copy)
    drop = make_zip(vendor_copy.parent, "renamed.zip")
    result = cli("verify-numerics", drop)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: the patch set does not apply: {SHIPPED}: three-tier-decode: ")
    assert line.endswith(f" (run 'patcher apply {drop}' for the full report)")
    detail = line.split("three-tier-decode: ", 1)[1].rsplit(" (run 'patcher apply", 1)[0]
    applied = cli("apply", drop, "-o", cli.cwd / "out")
    assert applied.exit_code == 2 and detail in applied.stderr


def test_a_patch_set_with_no_patch_for_paged_attn_has_nothing_to_compare(tmp_path: Path) -> None:
    only_sequence = write_patch_set(tmp_path / "set", {"sequence-len.toml": patch_toml(
        "sequence-len", replace_step("return len(self.prompt_token_ids) + len(self.output_token_ids)",
                                     "return len(self.output_token_ids) + len(self.prompt_token_ids)"),
        target="vllm/sequence.py", scope="SequenceData.get_len")})
    error = refused(VENDOR_TREE, only_sequence)
    assert isinstance(error, PatchSetError)
    assert error.where == str(only_sequence)
    assert str(error) == f"{only_sequence}: no patch targets a paged_attn.py: there is nothing to compare"
