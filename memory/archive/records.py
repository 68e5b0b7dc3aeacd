"""What the conversation archive holds: archived messages, daily digests and search hits."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memory.store.manager import validate_user_id

ROLES = ("user", "assistant", "tool", "digest")
# What the full-text index holds: what people said. Tool results are stored (the archive shows
# and rebuilds them) but never searched: a search would find earlier search answers.
SEARCHED_ROLES = ("user", "assistant")
TOOL_PREVIEW_CHARS = 600  # a tool result is archived as its start, not whole
MAX_MESSAGE_CHARS = 20_000  # a message longer than this is archived cut, with a note
CUT_NOTE = "; archived cut]"
# An archived message's identity in every backend: (thread, checkpoint, message id, text hash).
MessageKey = tuple[str, str, str, str]
# uuid6 (LangGraph's checkpoint ids) count 100 ns from the Gregorian calendar's start.
_GREGORIAN_OFFSET = 0x01B21DD213814000


def content_hash(role: str, content: str) -> str:
    """The identity of a message's text: the same message replayed hashes the same."""
    return hashlib.sha256(f"{role}\n{content}".encode()).hexdigest()[:32]


def bounded(role: str, content: str) -> str:
    """The text as archived: a tool result's preview, any message cut at a sane length."""
    limit = TOOL_PREVIEW_CHARS if role == "tool" else MAX_MESSAGE_CHARS
    if len(content) <= limit or (content.endswith(CUT_NOTE) and len(content) <= limit + 48):
        return content  # short, or already cut (read back from the archive)
    return f"{content[:limit]}… [{len(content)} characters{CUT_NOTE}"


def checkpoint_time(checkpoint_id: str) -> datetime | None:
    """When a LangGraph checkpoint (a uuid6 id) was made; None for another kind of id."""
    try:
        value = uuid.UUID(checkpoint_id)
    except (ValueError, AttributeError, TypeError):
        return None
    if value.version != 6:
        return None
    ticks = ((value.int >> 80) << 12) | ((value.int >> 64) & 0x0FFF)
    return datetime.fromtimestamp((ticks - _GREGORIAN_OFFSET) / 10_000_000, tz=UTC)


@dataclass(frozen=True)
class ArchivedMessage:
    """One message of one thread, archived once: where it was said (thread and the checkpoint
    of the turn that first held it on its branch), who said it, when, and its text."""

    user_id: str
    thread_id: str
    checkpoint_id: str  # "" without a checkpointer: visible to every run of the thread
    message_id: str
    role: str
    content: str
    timestamp: float  # seconds since the epoch (UTC)
    position: int = 0  # order among the messages archived at one checkpoint
    content_hash: str = ""

    def __post_init__(self) -> None:
        validate_user_id(self.user_id)
        if self.role not in ROLES:
            raise ValueError(f"an archived message's role is one of {ROLES}, not {self.role!r}")
        if not isinstance(self.content, str):
            raise ValueError("an archived message's content must be a string")
        object.__setattr__(self, "content", bounded(self.role, self.content))
        if not self.content_hash:
            object.__setattr__(self, "content_hash", content_hash(self.role, self.content))

    @property
    def key(self) -> tuple[str, str]:
        """What makes a message the same message when it is replayed."""
        return (self.message_id, self.content_hash)

    @property
    def searched(self) -> bool:
        """Whether the full-text index holds this message (what a person said)."""
        return self.role in SEARCHED_ROLES

    @property
    def ref(self) -> MessageKey:
        """The row's identity in the archive (what a forgotten memory's record lists)."""
        return (self.thread_id, self.checkpoint_id, self.message_id, self.content_hash)

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, tz=UTC)


@dataclass(frozen=True)
class Digest:
    """A user's day of conversation sealed into a short text (L1)."""

    user_id: str
    day: str  # YYYY-MM-DD, local to the server
    text: str
    message_count: int
    last_timestamp: float  # the newest message the digest covers
    made_at: float


@dataclass(frozen=True)
class ForgottenRecord:
    """What forgetting one memory hid in the archive: the messages that carried it (left out of
    every search and digest until the memory is restored) and the digests of their days as
    they were before they were sealed again without it (put back by the restore)."""

    memory_id: str
    forgotten_at: float
    messages: tuple[MessageKey, ...] = ()
    digests: tuple[Digest, ...] = ()

    def to_json(self) -> tuple[str, str]:
        """(messages, digests) as JSON text, the form both backends store."""
        digests = [[d.day, d.text, d.message_count, d.last_timestamp, d.made_at]
                   for d in self.digests]  # fmt: skip
        return json.dumps([list(k) for k in self.messages]), json.dumps(digests, ensure_ascii=False)

    @classmethod
    def from_json(
        cls, user_id: str, memory_id: str, forgotten_at: float, messages: str, digests: str
    ) -> ForgottenRecord:
        keys = tuple(
            (str(a), str(b), str(c), str(d)) for a, b, c, d in json.loads(messages or "[]")
        )
        days = tuple(Digest(user_id, str(day), str(text), int(count), float(last), float(made))
                     for day, text, count, last, made in json.loads(digests or "[]"))  # fmt: skip
        return cls(memory_id, float(forgotten_at), keys, days)


@dataclass(frozen=True)
class Hit:
    """One match and the messages around it, or one daily digest."""

    thread_id: str
    anchor: ArchivedMessage
    around: tuple[ArchivedMessage, ...] = ()
    score: float = 0.0
    digest: Digest | None = None


@dataclass(frozen=True)
class SearchResult:
    """What `search_conversations` found, ready to show under a character budget."""

    query: str
    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
