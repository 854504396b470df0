"""Check what ``patcher check PATH`` is given: a vendor zip, a folder, a tar context, or one ``.py`` file."""

from __future__ import annotations

import errno
import json
import sys
import tarfile
import tempfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..archive import open_source
from ..archive.limits import Limits, open_regular
from ..archive.tree import SourceTree
from ..depth import data_nesting_problem
from ..errors import BadArchive, PatcherError, ShippingError
from ..pipeline import MANIFEST
from ..shipping import plan_shipping
from .policy import Policy
from .runner import CheckResult, FileRulesAhead, Pending, check_tree, last_half, read_shipped_python, run_rules

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")
MAX_SOURCE = 16 << 20  # one .py file given to check: far past any source, short of a parse that eats the memory


def check_path(
    path: Path,
    policy: Policy,
    *,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
) -> CheckResult:
    """Run the rules on PATH; ``targets`` are image paths of the files a patch set changes.

    A single ``.py`` file gets the file rules. A tree gets them on every file
    its Dockerfile ships, and the tree rules; overrides recorded in its
    ``patcher-manifest.json`` (an ``apply --allow``) count as allowed, so
    ``apply``'s output passes.
    """
    if path.suffix == ".py" and not path.is_dir():
        with open_regular(path, str(path), MAX_SOURCE) as stream:  # a fifo or device named x.py is refused too
            data = stream.read()
        return run_rules([(str(path), lambda: data)], policy, allowed=allowed)
    with open_tree(path) as tree:
        return _check(tree, policy, targets, allowed)


@contextmanager
def open_tree(path: Path) -> Iterator[SourceTree]:
    """Open a vendor zip or folder, or a build context tar that apply wrote, as a tree."""
    if path.name.endswith(TAR_SUFFIXES) and not path.is_dir():
        with tempfile.TemporaryDirectory(prefix="patcher-") as folder:
            _unpack_tar(path, Path(folder))
            with open_source(Path(folder)) as tree:
                yield tree
        return
    with open_source(path) as tree:
        yield tree


def _check(tree: SourceTree, policy: Policy, targets: Sequence[str],
           allowed: Sequence[tuple[str, str]]) -> CheckResult:
    plan = plan_shipping(tree)
    shipped = []
    for target in targets:
        try:
            shipped.append(plan.shipped_copy(target))
        except ShippingError:
            continue  # a tree that does not ship this target has no install of it to check
    recorded = tuple((r, f"{reason} (recorded in {MANIFEST})") for r, reason in manifest_overrides(tree))
    # Parsing is most of the rules' cost: a forked child judges the second
    # half of the files while this process judges the first.
    later = last_half(read_shipped_python(tree, plan))
    with FileRulesAhead(later, policy) as ahead:
        return check_tree(tree, plan, policy, targets=shipped, allowed=(*recorded, *allowed),
                          ahead=Pending(ahead, later))


def manifest_overrides(tree: SourceTree) -> tuple[tuple[str, str], ...]:
    """The ``--allow`` overrides an earlier ``apply`` recorded in the tree's manifest."""
    if not tree.exists(MANIFEST):
        return ()
    try:
        text = tree.read(MANIFEST).decode("utf-8")  # the size of any file of the tree is bounded by its limits
        deep = data_nesting_problem(text)  # before json, which recurses per level
        if deep is not None:
            raise PatcherError(f"cannot be read: {deep}", where=MANIFEST,
                               hint="was the manifest edited by hand? re-run 'patcher apply'")
        entries = json.loads(text).get("allowed_rules", [])
        return tuple((str(e["rule"]), str(e["reason"])) for e in entries)
    except (ValueError, AttributeError, KeyError, TypeError):
        raise PatcherError("allowed_rules is unreadable", where=MANIFEST,
                           hint="was the manifest edited by hand? re-run 'patcher apply'") from None


def _unpack_tar(path: Path, folder: Path, limits: Limits = Limits()) -> None:
    # A build context that apply wrote: plain files and folders. The "data"
    # filter refuses links out of the folder, devices, fifos and absolute
    # names; the zip's limits bound what is unpacked (a gzip bomb declares
    # its sizes in the tar headers, and tarfile holds each member to them).
    if not hasattr(tarfile, "data_filter"):
        raise PatcherError(f"checking a tar needs Python 3.10.12 or later (this is {sys.version.split()[0]})",
                           where=str(path), hint="unpack it and check the folder")
    try:
        with open_regular(path, str(path), limits.max_input_size) as stream, \
                tarfile.open(fileobj=stream) as archive:
            count = total = 0
            for member in archive:  # read lazily: a bomb stops at its first header past the limits
                count += 1
                total += member.size
                if count > limits.max_members:
                    raise BadArchive(f"holds more than {limits.max_members} members", where=str(path),
                                     hint="if the archive is trusted, raise the limit with --max-members")
                if total > limits.max_total_size:
                    raise BadArchive(f"members declare more than {limits.max_total_size} bytes in all: "
                                     "possible tar bomb", where=str(path),
                                     hint="if the archive is trusted, raise the limit with --max-size")
                archive.extract(member, folder, filter="data")
    except (tarfile.TarError, EOFError, zlib.error) as error:
        raise BadArchive(f"not a readable tar: {error}", where=str(path)) from None
    except OSError as error:
        if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EMFILE, errno.ENFILE):
            raise  # the machine ran out, not the input: cli.errors says what
        raise BadArchive(f"not a readable tar: {error}", where=str(path)) from None
