"""Errors raised by the memory system, each naming what was wrong."""

from __future__ import annotations


class MemoryError_(Exception):
    """Base class for every error the memory system raises on purpose."""


class MemoryNotFound(MemoryError_, KeyError):
    """An id that names no memory (or only a tombstone, where a live memory is needed)."""

    def __init__(self, memory_id: str, detail: str = "") -> None:
        self.memory_id = memory_id
        message = f"no memory with id {memory_id!r}"
        super().__init__(f"{message}: {detail}" if detail else message)

    def __str__(self) -> str:  # KeyError would quote the message a second time
        return str(self.args[0])


class CorruptStoreError(MemoryError_):
    """The backing file or database cannot be read; it is kept as it is and writes are refused."""


class WritesDisabled(MemoryError_):
    """self_check reported FAIL for this user: reads go on, writes wait until it is resolved."""
