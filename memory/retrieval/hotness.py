"""Hotness: how alive a memory is, from its use (hits, recalls, distinct queries) and its age."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Protocol

from memory.retrieval.ranking import DEFAULT_HALF_LIFE_DAYS
from memory.retrieval.recall_log import NEVER_RECALLED, RecallStats
from memory.store.item import parse_time
from memory.text.episodic import memory_kind

# Below this a memory is "cold": a fresh, never-used memory starts at 1.0 and an unused
# episodic one crosses 0.25 after two half-lives (60 days by default).
COLD_BELOW = 0.25

# Weights of the use signals. A recall (injected into a reply) is weaker evidence than a hit
# (the writer saw the memory used); recalls for different questions count more than one
# question asked again and again.
HIT_WEIGHT = 1.0
RECALL_WEIGHT = 0.25
DISTINCT_QUERY_WEIGHT = 0.5
# A plan whose date has passed (marked stale by consolidation) keeps a fifth of its hotness:
# it is cold at once, ranks below current facts, and is archived once it stayed cold.
STALE_FACTOR = 0.2


class Remembered(Protocol):
    """What hotness reads of a memory: a `MemoryItem`, or retrieval's copy of one."""

    @property
    def theme(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def hit(self) -> int: ...
    @property
    def latest_update_time(self) -> str: ...
    @property
    def stale_since(self) -> float: ...


def hotness(
    item: Remembered,
    recall: RecallStats = NEVER_RECALLED,
    *,
    now: datetime | None = None,
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
) -> float:
    """A memory's hotness: its use, decayed by age when it is episodic.

        use   = 1 + log1p(HIT_WEIGHT·hits + RECALL_WEIGHT·recalls + DISTINCT_QUERY_WEIGHT·queries)
        decay = 0.5 ** (age_days / half_life_days)   (episodic; evergreen: 1)
        hotness = use · decay · (STALE_FACTOR once consolidation marked it stale, else 1)

    `age_days` runs from the last time the memory was changed or recalled, whichever is later,
    so a recalled memory stays warm. The log keeps one memory recalled a thousand times from
    outranking everything forever. A `half_life_days` of 0 (or less) turns decay off.
    """
    signal = HIT_WEIGHT * max(item.hit, 0)
    signal += RECALL_WEIGHT * max(recall.recalls, 0) + DISTINCT_QUERY_WEIGHT * max(
        recall.queries, 0
    )
    value = 1.0 + math.log1p(signal)
    if half_life_days > 0 and memory_kind(item) == "episodic":
        value *= 0.5 ** (age_days(item, recall, now) / half_life_days)
    if item.stale_since and (now or datetime.now(UTC)).timestamp() >= item.stale_since:
        value *= STALE_FACTOR
    return value


def age_days(
    item: Remembered, recall: RecallStats = NEVER_RECALLED, now: datetime | None = None
) -> float:
    """Days since the memory was last changed or recalled (0 when neither time is readable)."""
    moments = [
        t for t in (parse_time(item.latest_update_time), parse_time(recall.last_recalled)) if t
    ]
    if not moments:
        return 0.0
    current = now if now is not None else datetime.now(UTC)
    return max((current - max(moments)).total_seconds() / 86400.0, 0.0)


def is_cold(value: float, threshold: float = COLD_BELOW) -> bool:
    """Whether a hotness counts as cold (the editor's badge; consolidation's archive test)."""
    return value < threshold
