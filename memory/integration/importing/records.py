"""The neutral form every export is parsed into: conversations of timed user/assistant messages."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class ImportedMessage:
    """One message as the export had it: its id there (or its index), who said it, its text and
    when (seconds since the epoch, UTC)."""

    message_id: str
    role: str
    text: str
    time: float

    @property
    def said_at(self) -> str:
        """`time` as an ISO 8601 UTC time (what `Turn.said_at` takes)."""
        return datetime.fromtimestamp(self.time, UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class ImportedConversation:
    """One conversation of an export, its messages oldest first."""

    source_id: str  # the export's own id of the conversation
    title: str
    messages: tuple[ImportedMessage, ...]

    @property
    def thread_id(self) -> str:
        """The thread it becomes: the same for the same source id, at every import."""
        return thread_id_for(self.source_id)


@dataclass(frozen=True)
class Skipped:
    """What was left out of the import and why: `where` names the conversation and position."""

    where: str
    reason: str


@dataclass
class ParsedExport:
    """An export file read whole: its format, its conversations, and what was left out."""

    path: str
    format: str
    conversations: list[ImportedConversation] = field(default_factory=list)
    skipped_messages: list[Skipped] = field(default_factory=list)
    skipped_conversations: list[Skipped] = field(default_factory=list)

    @property
    def message_count(self) -> int:
        return sum(len(c.messages) for c in self.conversations)


def thread_id_for(source_id: str) -> str:
    """`import-` and the first 16 hex digits of the source id's SHA-256: a valid, stable id
    whatever characters the export used."""
    return "import-" + hashlib.sha256(source_id.encode("utf-8")).hexdigest()[:16]


def describe_conversation(index: int, title: str) -> str:
    """How a message names its conversation: its position in the file and its title."""
    return f"conversation #{index + 1}" + (f" {title[:60]!r}" if title else "")
