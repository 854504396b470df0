"""Read the files a run will copy unchanged while it patches, so writing need not wait for them.

Patching is Python holding the interpreter lock; reading a zip member is
mostly zlib inflating it and checking its CRC, which run without the lock.
A thread that reads the members ahead, in the order the writer asks for
them, turns that time into time the second core spends while the first
one patches. The writer then copies bytes already in memory.

The thread holds at most ``budget`` bytes (a vendor drop with large wheels
would otherwise sit in memory whole), then stops; anything it did not read,
or could not (a corrupt member), the writer reads itself, through the same
checks, and meets the same error at the same place as without this.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import BinaryIO

from patcher.archive.tree import SourceFile, SourceTree

# Enough for the whole realistic drop (11 MB) and a third of the vendor-scale
# one; peak memory stays well under the 150 MB the benchmarks hold it to.
BUDGET = 32 << 20


class Prefetch:
    """Read FILES of TREE in a background thread, in order, up to BUDGET bytes in all.

    Use it as a context manager: leaving the block stops the thread and
    drops what it read. ``open(path)`` hands over a member it read.
    """

    def __init__(self, tree: SourceTree, files: Sequence[SourceFile], budget: int = BUDGET) -> None:
        self._tree = tree
        self._files = list(files)
        self._order = {item.path: index for index, item in enumerate(self._files)}
        self._budget = budget
        self._data: dict[str, bytes] = {}
        self._passed = -1  # index of the last path the thread is done with
        self._finished = False  # the thread will read nothing more
        self._stop = False
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="patcher-prefetch", daemon=True)

    def __enter__(self) -> Prefetch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop the thread (after the member it is reading) and drop every member it kept."""
        with self._ready:
            self._stop = True
            self._data.clear()
        if self._thread.ident is not None:
            self._thread.join()

    def open(self, path: str) -> BinaryIO | None:
        """Return PATH's bytes as a stream if the thread read them, else None; each path once.

        Waits while the thread is still on its way to PATH: it reads in the
        writer's order, so waiting costs no more than reading would.
        """
        index = self._order.get(path)
        if index is None:
            return None
        with self._ready:
            while not self._finished and self._passed < index:
                self._ready.wait()
            data = self._data.pop(path, None)
        return None if data is None else io.BytesIO(data)

    def _run(self) -> None:
        held = 0
        try:
            for index, item in enumerate(self._files):
                held += item.size
                if self._stop or held > self._budget:
                    return
                try:
                    data = self._tree.read(item.path)
                except Exception:
                    return  # the writer reads it again and reports what is wrong
                with self._ready:
                    if self._stop:
                        return
                    self._data[item.path] = data
                    self._passed = index
                    self._ready.notify_all()
        finally:
            with self._ready:
                self._finished = True
                self._ready.notify_all()
