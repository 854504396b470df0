"""The closed set of operations a patch step may use, one class a module."""

from __future__ import annotations

from .base import Operation
from .insert import Insert
from .replace import Replace
from .reuse_buffers import ReuseBuffers

OPERATIONS: dict[str, type[Operation]] = {op.name: op for op in (Replace, Insert, ReuseBuffers)}

__all__ = ["OPERATIONS", "Operation", "Insert", "Replace", "ReuseBuffers"]
