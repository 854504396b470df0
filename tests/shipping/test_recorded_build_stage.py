"""The build stage that is the image: ``--target`` if given, else the stage a context's manifest records.

A context ``apply --target STAGE`` wrote records STAGE (None: the last
stage). A later command on it reads that stage without being told; a
``--target`` naming another is refused. ``upgrade OLD NEW`` reads both
drops as one stage: a context's record is the other drop's stage too, and
two contexts recording different stages are refused, each stage named as
``agreed`` names it ("the last build stage (no --target)").
"""

from __future__ import annotations

import json

import pytest

from patcher.errors import ShippingError
from patcher.shipping.target_stage import image_stage, pair_stages
from tests.shipping.conftest import MemoryTree

MANIFEST = "patcher-manifest.json"
DOCKERFILE = {"Dockerfile": "FROM base AS build\nFROM base AS runtime\n"}
NOT_RECORDED = object()  # a context with no manifest (a vendor drop)


def drop(label: str, stage: object = NOT_RECORDED) -> MemoryTree:
    """A context labelled ``label`` whose manifest records ``stage`` (None: the last stage)."""
    files = dict(DOCKERFILE)
    if stage is not NOT_RECORDED:
        files[MANIFEST] = json.dumps({"input": {"name": "vendor.zip", "sha256": None}, "stage": stage, "patches": [],
                                      "mirrors": [], "changed_files": {}, "patch_set": {"series": []}})
    tree = MemoryTree(files)
    tree.label = label
    return tree


@pytest.mark.parametrize(("recorded", "given", "stage"), [
    (NOT_RECORDED, None, None), (NOT_RECORDED, "build", "build"),
    ("runtime", None, "runtime"), ("runtime", "RUNTIME", "runtime"),  # stage names are matched as Docker does
    (None, None, None),
])
def test_a_context_is_read_as_the_stage_given_or_recorded(recorded: object, given: str | None,
                                                           stage: str | None) -> None:
    assert image_stage(drop("ctx.tar.gz", recorded), given) == stage


@pytest.mark.parametrize(("recorded", "given", "said"), [
    ("runtime", "build", "records build stage 'runtime', but --target names 'build'"),
    (None, "build", "records the last build stage (no --target), but --target names 'build'"),
])
def test_a_target_other_than_the_recorded_stage_is_refused(recorded: str | None, given: str, said: str) -> None:
    with pytest.raises(ShippingError) as refused:
        image_stage(drop("ctx.tar.gz", recorded), given)
    assert (refused.value.where, refused.value.message) == (f"ctx.tar.gz: {MANIFEST}", said)
    assert refused.value.hint == "leave out --target, or apply the vendor drop again with --target build"


@pytest.mark.parametrize(("old", "new", "given", "stages"), [
    (NOT_RECORDED, NOT_RECORDED, None, (None, None)),
    (NOT_RECORDED, NOT_RECORDED, "build", ("build", "build")),
    ("runtime", NOT_RECORDED, None, ("runtime", "runtime")),  # a context's record is the other drop's stage too
    (NOT_RECORDED, "runtime", None, ("runtime", "runtime")),
    ("runtime", "Runtime", None, ("runtime", "runtime")),
    ("runtime", NOT_RECORDED, "runtime", ("runtime", "runtime")),
    (None, None, None, (None, None)),
])
def test_two_drops_compared_are_read_as_one_stage(old: object, new: object, given: str | None,
                                                  stages: tuple[str | None, str | None]) -> None:
    assert pair_stages(drop("old.tar.gz", old), drop("new.tar.gz", new), given) == stages


@pytest.mark.parametrize(("old", "new", "said"), [
    ("runtime", "build", "records build stage 'runtime', but new.tar.gz's patcher-manifest.json records build "
                         "stage 'build'"),
    ("runtime", None, "records build stage 'runtime', but new.tar.gz's patcher-manifest.json records the last "
                      "build stage (no --target)"),
    (None, "build", "records the last build stage (no --target), but new.tar.gz's patcher-manifest.json records "
                    "build stage 'build'"),
])
def test_two_contexts_recording_different_stages_are_refused(old: str | None, new: str | None, said: str) -> None:
    with pytest.raises(ShippingError) as refused:
        pair_stages(drop("old.tar.gz", old), drop("new.tar.gz", new), None)
    assert (refused.value.where, refused.value.message) == (f"old.tar.gz: {MANIFEST}", said)
    assert refused.value.hint == ("compare contexts built as one stage, or the vendor drops they were made from with "
                                  "--target STAGE")


def test_a_target_that_one_of_two_contexts_does_not_record_is_refused_naming_that_context() -> None:
    with pytest.raises(ShippingError) as refused:
        pair_stages(drop("old.tar.gz", "runtime"), drop("new.tar.gz", "build"), "build")
    assert (refused.value.where, refused.value.message) == (
        f"old.tar.gz: {MANIFEST}", "records build stage 'runtime', but --target names 'build'")


@pytest.mark.parametrize("manifest", ["not JSON", "{}", '{"input": {"name": "vendor.zip"}, "stage": 3}'])
def test_a_manifest_that_does_not_read_records_no_stage(manifest: str) -> None:
    # As apply's note says: nothing is recorded, so --target (or the last stage) is the image, and the other
    # drop compared with it sets the stage of both.
    unreadable = MemoryTree({**DOCKERFILE, MANIFEST: manifest})
    assert (image_stage(unreadable, None), image_stage(unreadable, "build")) == (None, "build")
    assert pair_stages(unreadable, drop("new.tar.gz", "runtime"), None) == ("runtime", "runtime")
