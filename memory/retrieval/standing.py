"""A user's standing instructions: the live memories of the instruction sections, newest first,
bounded, a newer instruction replacing an older one on the same one-valued topic."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from memory.store.item import MemoryItem, time_sort_key
from memory.text.instructions import one_valued_topics

MAX_INSTRUCTIONS = 8  # a prompt carries at most this many, the newest
MAX_INSTRUCTION_CHARS = 1200  # and at most this much text (about 300 tokens) in all


def select_instructions(
    items: Mapping[str, MemoryItem],
    themes: Collection[str],
    *,
    limit: int = MAX_INSTRUCTIONS,
    max_chars: int = MAX_INSTRUCTION_CHARS,
) -> list[dict[str, Any]]:
    """The standing instructions among `items` (live ones): user-scope memories filed under one
    of `themes`, newest first as `[{id, description, theme, created_time,
    latest_update_time}]`. Of two on the same one-valued topic (the user's name, the reply's
    language) only the newer is kept; then at most `limit` of them and `max_chars` of text."""
    found = [
        (memory_id, item)
        for memory_id, item in items.items()
        if item.theme in themes and item.scope == "user" and not item.deleted
    ]
    found.sort(key=lambda pair: time_sort_key(pair[1].latest_update_time), reverse=True)
    chosen: list[dict[str, Any]] = []
    settled: set[str] = set()
    used = 0
    for memory_id, item in found:
        topics = one_valued_topics(item.description)
        if topics and topics <= settled:
            continue  # a newer instruction already says how, this one is superseded
        if len(chosen) >= limit or used + len(item.description) > max_chars:
            break
        settled |= topics
        used += len(item.description)
        chosen.append(
            {
                "id": memory_id,
                "description": item.description,
                "theme": item.theme,
                "created_time": item.created_time,
                "latest_update_time": item.latest_update_time,
            }
        )
    return chosen
