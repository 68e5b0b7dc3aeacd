"""One conversation's messages gathered from any format, each kept or left out with its reason."""

from __future__ import annotations

from memory.integration.importing.records import (
    ImportedConversation,
    ImportedMessage,
    ParsedExport,
    Skipped,
)
from memory.integration.importing.times import epoch_seconds

ROLE_NAMES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}
NOT_SAID = ("system", "tool")  # known roles that hold nothing the user or assistant said
EMPTY, UNKNOWN_ROLE, BAD_TIME, DUPLICATE = (
    "empty text", "unknown role", "unreadable time", "duplicate"
)  # fmt: skip
NOT_CONVERSATION = "system or tool message"


class ConversationBuilder:
    """Messages of one conversation in the order the export gives them; `build` returns them
    oldest first (equal times keep that order). A message without a time takes `fallback`
    (the conversation's own time); one whose time cannot be read is left out."""

    def __init__(
        self, export: ParsedExport, where: str, fallback: object = None, unit: str = "message"
    ) -> None:
        self.export = export
        self.where = where
        self.unit = unit  # what a position counts: the conversation's messages, the file's lines
        self.fallback = epoch_seconds(fallback)
        self.messages: list[ImportedMessage] = []
        self._ids: set[str] = set()
        self._said: set[tuple[str, str, float]] = set()

    def add(self, position: int, message_id: str, role: object, text: str, time: object) -> None:
        """Keep one message, or record why it is left out (`position` counts from 1)."""
        name = ROLE_NAMES.get(str(role).lower()) if isinstance(role, str) else None
        if name is None:
            not_said = role in NOT_SAID
            self._skip(position, NOT_CONVERSATION if not_said else f"{UNKNOWN_ROLE} {role!r}")
            return
        if not text.strip():
            self._skip(position, EMPTY)
            return
        seconds = epoch_seconds(time) if time not in (None, "") else self.fallback
        if seconds is None:
            self._skip(position, f"{BAD_TIME} {time!r}")
            return
        said = (name, text, seconds)
        if message_id in self._ids or said in self._said:
            self._skip(position, DUPLICATE)
            return
        self._ids.add(message_id)
        self._said.add(said)
        self.messages.append(ImportedMessage(message_id, name, text, seconds))

    def build(self, source_id: str, title: str) -> ImportedConversation:
        ordered = sorted(self.messages, key=lambda m: m.time)
        return ImportedConversation(source_id, title, tuple(ordered))

    def _skip(self, position: int, reason: str) -> None:
        self.export.skipped_messages.append(
            Skipped(f"{self.where}, {self.unit} {position}", reason)
        )


def reason_kind(reason: str) -> str:
    """The reason without its detail ("unknown role 'x'" → "unknown role"), for the summary."""
    for kind in (UNKNOWN_ROLE, BAD_TIME, "not JSON"):
        if reason.startswith(kind):
            return kind
    return reason
