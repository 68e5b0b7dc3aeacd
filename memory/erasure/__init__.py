"""Erase for good: one memory and everything derived from it, or everything of one user."""

from memory.erasure.erase import CHECKPOINTS_NOTE, erase_memory, erase_user
from memory.store.erasure_report import ErasureReport

__all__ = ["CHECKPOINTS_NOTE", "ErasureReport", "erase_memory", "erase_user"]
