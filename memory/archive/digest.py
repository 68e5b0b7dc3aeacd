"""Daily digests (L1): each day of a user's conversation sealed into a short, searchable text."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.admission import score_turn
from memory.archive.base import ConversationArchive
from memory.archive.dates import day_bounds, local_day
from memory.archive.records import ArchivedMessage, Digest

logger = logging.getLogger(__name__)

DIGEST_CHARS = 700  # an extractive digest's length; a model's is asked for in words
LINE_CHARS = 160
REFRESH_SECONDS = 1800.0  # today's digest is made again at most this often
LOOKBACK_DAYS = 14  # days before the newest digest that are checked for missing ones
# summarize(day, messages) -> the digest text (a model call); None: extractive.
Summarize = Callable[[str, Sequence[ArchivedMessage]], str]


def _flat(text: str) -> str:
    return " ".join(text.split())[:LINE_CHARS]


def extractive_digest(messages: Sequence[ArchivedMessage], max_chars: int = DIGEST_CHARS) -> str:
    """What the user said that day that is most worth keeping (the admission scorer's rank),
    in the order it was said, each line cut short; no model."""
    said = [m for m in messages if m.role == "user" and m.content.strip()]
    scores = [score_turn(m.content).score for m in said]
    # Small talk ("ok thanks") says nothing about the day; the newest wins a tie.
    ranked = sorted((i for i in range(len(said)) if scores[i] > 0), key=lambda i: (-scores[i], -i))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        line = _flat(said[index].content)
        if used + len(line) + 3 > max_chars:
            continue
        chosen.append(index)
        used += len(line) + 3
    threads = len({m.thread_id for m in messages})
    head = f"{len(said)} messages from the user in {threads} conversation(s)."
    lines = [f"- {_flat(said[i].content)}" for i in sorted(chosen)]
    return "\n".join([head, *lines])


@dataclass
class DigestSealer:
    """Seals a user's days: a day that is over gets its digest once (again when messages were
    added to it later), today's is refreshed at most every `refresh_seconds`."""

    summarize: Summarize | None = None
    refresh_seconds: float = REFRESH_SECONDS
    clock: Callable[[], float] = time.time

    def due_days(self, archive: ConversationArchive) -> list[tuple[str, list[ArchivedMessage]]]:
        """The days whose digest is missing or stale, oldest first, with their messages."""
        now = self.clock()
        known = {d.day: d for d in archive.digests()}
        # From the newest digest's day on (messages are added in time order), else two weeks.
        newest = max(known, default=None) or local_day(now - LOOKBACK_DAYS * 86400, archive.zone)
        since = day_bounds(newest, archive.zone)[0]
        by_day: dict[str, list[ArchivedMessage]] = {}
        hidden = archive.hidden_keys()  # what carried a forgotten memory is sealed without it
        for message in archive.messages(since=since):
            if message.role in ("user", "assistant") and message.ref not in hidden:
                by_day.setdefault(local_day(message.timestamp, archive.zone), []).append(message)
        today = local_day(now, archive.zone)
        due = []
        for day, messages in sorted(by_day.items()):
            digest = known.get(day)
            last = max(m.timestamp for m in messages)
            if digest is not None and digest.last_timestamp >= last:
                continue
            if day == today and digest is not None and now - digest.made_at < self.refresh_seconds:
                continue
            due.append((day, messages))
        return due

    def seal(self, archive: ConversationArchive) -> list[Digest]:
        """Make the due digests; a failed model call falls back to the extractive digest (the
        day is sealed again by the model once a later message arrives). Returns what it made."""
        made = []
        for day, messages in self.due_days(archive):
            text = ""
            if self.summarize is not None:
                try:
                    text = self.summarize(day, messages).strip()
                except Exception as exc:
                    logger.warning("the digest of %s for %r failed: %s", day, archive.user_id, exc)
            text = text or extractive_digest(messages)
            last = max(m.timestamp for m in messages)
            digest = Digest(archive.user_id, day, text, len(messages), last, self.clock())
            archive.put_digest(digest)
            made.append(digest)
        return made
