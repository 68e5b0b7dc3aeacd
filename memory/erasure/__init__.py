"""Erase for good: one memory and everything derived from it, what one conversation put in memory,
or everything of one user, from every place the agent looks (store, vectors, journal, trace,
recall log, snapshots, the archive given).
Imports the store, retrieval and text; it names what it uses of a memory (`ErasedMemory`) instead
of importing the facade."""

from memory.erasure.erase import CHECKPOINTS_NOTE, erase_conversation, erase_memory, erase_user
from memory.store.erasure_report import ErasureReport

__all__ = [
    "CHECKPOINTS_NOTE",
    "ErasureReport",
    "erase_conversation",
    "erase_memory",
    "erase_user",
]
