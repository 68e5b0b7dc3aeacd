"""Read models for the page: the grouped waterfall, search, a card with its history, tombstones."""

from __future__ import annotations

import logging
from typing import Any

from memory.errors import CorruptStoreError
from memory.item import MemoryItem, time_sort_key
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager

logger = logging.getLogger(__name__)
MAX_SEARCH_RESULTS = 50


def card(
    memory_id: str, item: MemoryItem, superseded_by: list[str] | None = None
) -> dict[str, Any]:
    """What one card shows. `scope`, `origin` and `supersedes` tell a branch memory and its
    copy-on-write version apart; `superseded_by` lists the live versions that replace this one
    in some branch (it stays live: the other branches still read it)."""
    return {
        "id": memory_id,
        "description": item.description,
        "theme": item.theme,
        "hit": item.hit,
        "latest_update_time": item.latest_update_time,
        "deleted": item.deleted,
        "history_length": len(item.history),
        "scope": item.scope,
        "origin": {
            key: str(item.origin.get(key, "")) for key in ("thread_id", "checkpoint_id", "turn_id")
        },
        "supersedes": item.supersedes,
        "superseded_by": list(superseded_by or []),
    }


def superseded_by(items: dict[str, MemoryItem]) -> dict[str, list[str]]:
    """For each id, the live items that name it in `supersedes` (copy-on-write versions)."""
    replacements: dict[str, list[str]] = {}
    for memory_id, item in items.items():
        if item.supersedes and not item.deleted:
            replacements.setdefault(item.supersedes, []).append(memory_id)
    return replacements


def waterfall(memory: LongTermMemory, query: str = "", theme: str = "") -> dict[str, Any]:
    """Cards grouped by theme (newest first), optionally searched and filtered, with counts."""
    manager = memory.manager
    revision = manager.revision
    items = manager.list_items()
    all_themes: dict[str, int] = {}
    for item in items.values():
        all_themes[item.theme] = all_themes.get(item.theme, 0) + 1
    if query.strip():
        ranked = [i for i in memory.search(query.strip(), MAX_SEARCH_RESULTS) if i in items]
        selected = {i: items[i] for i in ranked}
    else:
        ordered = sorted(
            items.items(), key=lambda kv: time_sort_key(kv[1].latest_update_time), reverse=True
        )
        selected = dict(ordered)
    replacements = superseded_by(items)
    groups: dict[str, list[dict[str, Any]]] = {}
    for memory_id, item in selected.items():
        if theme and item.theme != theme:
            continue
        groups.setdefault(item.theme, []).append(card(memory_id, item, replacements.get(memory_id)))
    return {
        "revision": revision,
        "total": len(items),
        "shown": sum(len(cards) for cards in groups.values()),
        "themes": dict(sorted(all_themes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "groups": [
            {"theme": name, "count": len(cards), "cards": cards} for name, cards in groups.items()
        ],
    }


def card_with_history(manager: BaseMemoryManager, memory_id: str) -> dict[str, Any]:
    """One card (tombstones included) and its history, newest first."""
    item = manager.get(memory_id, include_deleted=True)
    replacements = superseded_by(manager.list_items()).get(memory_id)
    return {**card(memory_id, item, replacements), "history": item.show_description_history()}


def deleted_cards(manager: BaseMemoryManager) -> list[dict[str, Any]]:
    """Tombstones, most recently deleted first, with the reason of their deletion."""
    cards = []
    for memory_id, item in manager.deleted_items().items():
        last = item.history[-1] if item.history else {}
        cards.append(
            {
                **card(memory_id, item),
                "deleted_reason": last.get("reason", ""),
                "deleted_action": last.get("action", "delete"),
                "into": last.get("into", ""),
            }
        )
    return sorted(cards, key=lambda c: time_sort_key(c["latest_update_time"]), reverse=True)


def status(memory: LongTermMemory) -> dict[str, Any]:
    """The last self-check of the store with the write pipeline's (dead letters, a damaged
    journal), running the store's check if none was kept."""
    manager = memory.manager
    report = memory.self_check()
    try:
        live_count: int | None = len(manager.list_items())
    except CorruptStoreError:  # the report already says why; the status must still load
        live_count = None
    return {
        "status": report.status,
        "issues": list(report.issues),
        "repaired": list(report.repaired),
        "item_count": live_count,
        "checked_item_count": report.item_count,
        "backend": manager.backend,
        "user_id": manager.user_id,
        "usage": model_usage(memory),
    }


def model_usage(memory: LongTermMemory) -> dict[str, dict[str, int]]:
    """The user's model calls and tokens by purpose ({} when the writer package is absent or
    nothing was recorded; a ledger that cannot be read never stops the status)."""
    try:
        from webapp.trace_adapter import usage_totals

        return usage_totals(memory)
    except Exception:
        logger.exception("reading the model usage of %r failed", memory.user_id)
        return {}
