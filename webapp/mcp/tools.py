"""What each MCP tool does to one user's LongTermMemory: sync calls, bad input refused whole."""

from __future__ import annotations

import logging
import weakref
from typing import Any

from memory import BaseMemoryManager, Lineage, LongTermMemory, MemoryItem, MemoryNotFound

logger = logging.getLogger(__name__)
time_sort_key = MemoryItem.time_sort_key  # the store's order of \"newest first\"

MAX_QUERY_CHARS = 1000
MAX_LIMIT = 100
FORGET_REASON = "forgotten through MCP"
UPDATE_REASON = "edited through MCP"


class BadRequest(ValueError):
    """Input a tool refuses before it touches anything; the message says what to send."""


def card(memory_id: str, item: MemoryItem) -> dict[str, Any]:
    """One memory as a tool shows it: id, text, theme, the day it last changed, recall count."""
    return {
        "id": memory_id,
        "description": item.description,
        "theme": item.theme,
        "updated": MemoryItem.local_date(item.latest_update_time),
        "hits": item.hit,
        "scope": item.scope,
    }


def checked_text(value: str, name: str, *, empty_ok: bool = False) -> str:
    text = " ".join(str(value).split())
    if not text and not empty_ok:
        raise BadRequest(f"{name} is empty: send a few words")
    if len(text) > MAX_QUERY_CHARS:
        raise BadRequest(f"{name} holds at most {MAX_QUERY_CHARS} characters, got {len(text)}")
    return text


def checked_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


def search_memories(
    memory: LongTermMemory,
    query: str,
    limit: int,
    mode: str,
    lineage: Lineage | None = None,
    llm: Any | None = None,
) -> list[dict[str, Any]]:
    """The chat's retrieval (`mode`, the deployment's fusion and score floor) for `query`,
    best first; with a lineage only what that branch of a thread may read. A store that cannot
    be read raises (the chat would answer without memories; a search says it failed)."""
    query, limit = checked_text(query, "query"), checked_limit(limit)
    found = memory.retrievers.retrieve(query, mode, limit, lineage, llm)
    items = memory.manager.all_items()
    cards = [card(f["id"], items[f["id"]]) for f in found if f["id"] in items]
    try:  # a recall through MCP is a recall: hotness counts it, as for a chat turn
        memory.record_recall([c["id"] for c in cards], query)
    except Exception:
        logger.exception("recording the recall of %d memories failed", len(cards))
    return cards


def list_memories(memory: LongTermMemory, offset: int, limit: int) -> dict[str, Any]:
    """A page of the live memories, most recently changed first, and how many there are."""
    if offset < 0:
        raise BadRequest(f"offset must be 0 or more, got {offset}")
    limit = checked_limit(limit)
    items = memory.manager.list_items()
    ordered = _newest_first(memory.manager, items)
    page = [card(mid, items[mid]) for mid in ordered[offset : offset + limit]]
    return {"total": len(items), "offset": offset, "memories": page}


# The order of the last listing per manager, with the revision it was made at: paging through
# 10,000 memories sorts them once, not once a page (parsing every time was most of a call).
_orders: weakref.WeakKeyDictionary[BaseMemoryManager, tuple[str, list[str]]] = (
    weakref.WeakKeyDictionary()
)


def _newest_first(manager: BaseMemoryManager, items: dict[str, MemoryItem]) -> list[str]:
    token = manager.change_token()
    cached = _orders.get(manager)
    if cached is not None and cached[0] == token:
        return cached[1]
    ordered = sorted(items, key=lambda mid: time_sort_key(items[mid].latest_update_time))[::-1]
    _orders[manager] = (token, ordered)
    return ordered


def show_memory(memory: LongTermMemory, memory_id: str) -> dict[str, Any]:
    """One live memory with its history, newest entry first."""
    item = _live(memory, memory_id)
    return {**card(memory_id, item), "history": item.show_description_history()}


def update_memory(
    memory: LongTermMemory, memory_id: str, description: str, theme: str
) -> dict[str, Any]:
    """Change a memory's text (and theme, when given); the old text stays in its history."""
    _live(memory, memory_id)
    new_description = MemoryItem.check_description(description)
    new_theme = MemoryItem.check_theme(theme) if theme.strip() else None
    memory.manager.update(memory_id, UPDATE_REASON, new_description, new_theme)
    return show_memory(memory, memory_id)


def forget_memory(memory: LongTermMemory, memory_id: str) -> dict[str, Any]:
    """Tombstone one memory as the chat's forget does; the archive then hides what carries it
    (`forget_everywhere`). It can be restored in the editor's Deleted list."""
    item = _live(memory, memory_id)
    memory.manager.forget(memory_id, FORGET_REASON)
    return {"forgotten": memory_id, "description": item.description}


def _live(memory: LongTermMemory, memory_id: str) -> MemoryItem:
    memory_id = memory_id.strip()
    if not memory_id:
        raise BadRequest("id is empty: take it from search_memories or list_memories")
    try:
        return memory.manager.get(memory_id)
    except MemoryNotFound as exc:
        raise BadRequest(f"no live memory has the id {memory_id!r} ({exc})") from exc
