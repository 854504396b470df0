"""The closed set of operations a patch step may use, one class a module."""

from __future__ import annotations

from .base import Operation
from .insert import Insert
from .replace import Replace
from .reuse_buffers import ReuseBuffers

# Typed explicitly: mypy before 1.6 joins the three classes to ABCMeta.
_ALL: tuple[type[Operation], ...] = (Replace, Insert, ReuseBuffers)
OPERATIONS: dict[str, type[Operation]] = {op.name: op for op in _ALL}

__all__ = ["OPERATIONS", "Operation", "Insert", "Replace", "ReuseBuffers"]
