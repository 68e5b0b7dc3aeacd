"""What erasure asks of a conversation archive (memory/archive/ implements it, erasure never
imports it)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from memory.store.erasure_report import ErasureReport
from memory.store.item import MemoryItem
from memory.text.needles import Needles


class ErasableArchive(Protocol):
    """A user's conversation archive as erasure sees it."""

    def thread_ids(self) -> set[str]:
        """The threads it holds messages of."""
        ...

    def erase_carriers(
        self,
        items: dict[str, MemoryItem],
        chosen: dict[str, MemoryItem],
        needles: Needles,
        report: ErasureReport,
    ) -> None:
        """Remove what carries the `chosen` memories (adding the removed texts to `needles`)."""
        ...

    def erase_said(
        self,
        thread_id: str,
        message_ids: Collection[str] | None,
        needles: Needles,
        report: ErasureReport,
    ) -> None:
        """Remove a conversation's messages (adding their texts to `needles`)."""
        ...

    def erase_everything(self, report: ErasureReport) -> None:
        """Remove the user's whole archive."""
        ...
