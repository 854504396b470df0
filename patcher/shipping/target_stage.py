"""Which build stage is the image: the ``--target`` given, else the one a context's manifest records.

``apply --target STAGE`` records the stage in the manifest of the context it
writes, so every later command on that context (``check``, ``verify-sync``,
``inspect``, ``upgrade``, ``apply`` again, ...) reads the same stage without
being told; a ``--target`` that names another stage is refused rather than
judged silently on another file set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ShippingError
from ..manifest_file import MANIFEST, Record, RecordError, read_record

if TYPE_CHECKING:
    from ..archive.tree import SourceTree


def image_stage(tree: "SourceTree", given: str | None) -> str | None:
    """Return the stage that is the image: ``given``, else the recorded one; None for the last stage.

    A manifest that does not read as one apply writes records nothing
    (``apply`` says why in its note). Raise ShippingError when ``given``
    and the recorded stage differ.
    """
    record = _record(tree)
    if record is None:
        return given
    return agreed(given, record.stage, f"{tree.label}: {MANIFEST}")


def pair_stages(old: "SourceTree", new: "SourceTree", given: str | None) -> tuple[str | None, str | None]:
    """The stage that is the image of each of two drops compared (``upgrade OLD NEW``): one stage for both.

    ``given`` (``--target``) must agree with each context's record; without
    it, a context's recorded stage is the other drop's too (a vendor drop
    compared with a context made from its predecessor is read as that
    context was built). Two contexts recording different stages are refused.
    """
    records = [(tree, _record(tree)) for tree in (old, new)]
    if given is not None:
        found = [given if r is None else agreed(given, r.stage, f"{t.label}: {MANIFEST}") for t, r in records]
        return found[0], found[1]
    made = [(t, r.stage) for t, r in records if r is not None]
    if len(made) == 2 and (made[0][1] or "").lower() != (made[1][1] or "").lower():
        said = [f"build stage {stage!r}" if stage is not None else "the last build stage (no --target)"
                for _, stage in made]
        raise ShippingError(f"records {said[0]}, but {made[1][0].label}'s {MANIFEST} records {said[1]}",
                            where=f"{made[0][0].label}: {MANIFEST}",
                            hint="compare contexts built as one stage, or the vendor drops they were made from "
                                 "with --target STAGE")
    stage = made[0][1] if made else None
    return stage, stage


def agreed(given: str | None, recorded: str | None, where: str) -> str | None:
    """The stage when ``given`` (None: not given) agrees with the one ``where`` records; else ShippingError."""
    if given is None:
        return recorded
    if recorded is not None and given.lower() == recorded.lower():
        return recorded
    said = f"build stage {recorded!r}" if recorded is not None else "the last build stage (no --target)"
    raise ShippingError(f"records {said}, but --target names {given!r}", where=where,
                        hint=f"leave out --target, or apply the vendor drop again with --target {given}")


def _record(tree: "SourceTree") -> Record | None:
    try:
        return read_record(tree)
    except RecordError:
        return None


__all__ = ["agreed", "image_stage", "pair_stages"]
