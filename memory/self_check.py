"""self_check: is the store readable, writable and whole; FAIL stops writes until it passes."""

from __future__ import annotations

from typing import Any

from memory.errors import CorruptStoreError, WritesDisabled
from memory.item import MemoryItem
from memory.repair import SelfCheckReport, item_from_raw


class SelfChecking:
    """The backend-independent part of the self-check; backends add `_check_and_repair`."""

    user_id: str
    _writes_blocked: str | None
    last_report: SelfCheckReport | None

    def _validate_all_items(
        self, raw_items: dict[str, Any]
    ) -> tuple[dict[str, MemoryItem], list[str]]:
        """Rebuild every item from raw stored data; return the items and the repairs made."""
        repaired: list[str] = []
        items = {str(i): item_from_raw(str(i), raw, repaired) for i, raw in raw_items.items()}
        return items, repaired

    def self_check(self) -> SelfCheckReport:
        """Check that the store is readable, writable and whole; repair what can be repaired.

        FAIL (unreadable or unwritable store) stops writes for this manager until a later check
        passes; reads go on where they can.
        """
        self._writes_blocked = None
        try:
            issues, repaired = self._check_and_repair()
        except CorruptStoreError as exc:
            self._writes_blocked = str(exc)
        except OSError as exc:
            self._writes_blocked = f"storage is not usable: {exc}"
        if self._writes_blocked:
            self.last_report = SelfCheckReport("FAIL", [self._writes_blocked], [], 0)
            return self.last_report
        count = self._live_count()
        status = "WARN" if issues or repaired else "OK"
        self.last_report = SelfCheckReport(status, issues, repaired, count)
        return self.last_report

    def _live_count(self) -> int:
        """How many live items there are (BaseMemoryManager counts them)."""
        raise NotImplementedError

    def _check_and_repair(self) -> tuple[list[str], list[str]]:
        """Backend-specific part of self_check: (issues, repaired)."""
        return [], []

    def _check_writable(self) -> None:
        if self._writes_blocked:
            raise WritesDisabled(
                f"writes for user {self.user_id!r} are stopped: {self._writes_blocked}"
            )
