"""Read models for the page: the grouped waterfall, search, a card with its history, tombstones."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from memory.errors import CorruptStoreError
from memory.item import MemoryItem, time_sort_key
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager

logger = logging.getLogger(__name__)
MAX_SEARCH_RESULTS = 50
PAGE_SIZE = 200  # cards per page of the waterfall; the page asks for more as the user scrolls
MAX_PAGE_SIZE = 1000


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


def theme_counts(items: dict[str, MemoryItem]) -> dict[str, int]:
    """Live memories per theme, most used theme first."""
    counts: dict[str, int] = {}
    for item in items.values():
        counts[item.theme] = counts.get(item.theme, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _newest_first(memory_id: str, item: MemoryItem) -> tuple[tuple[float, str], str]:
    return time_sort_key(item.latest_update_time), memory_id


def encode_cursor(memory_id: str, item: MemoryItem) -> str:
    """Where the next page starts: after this card in newest-first order. A card updated
    meanwhile moves to the top (the live stream patches it in), so pages neither repeat nor
    skip a card when memories change between them."""
    return json.dumps([item.latest_update_time, memory_id], ensure_ascii=False)


def decode_cursor(cursor: str) -> tuple[tuple[float, str], str]:
    """The sort key a cursor names; ValueError ("after ...") when it is not one of ours."""
    try:
        time, memory_id = json.loads(cursor)
        if not isinstance(time, str) or not isinstance(memory_id, str):
            raise TypeError
    except (ValueError, TypeError, RecursionError):
        raise ValueError("after must be the next_cursor of the previous page") from None
    return time_sort_key(time), memory_id


def waterfall(
    memory: LongTermMemory,
    query: str = "",
    theme: str = "",
    *,
    after: str = "",
    limit: int = PAGE_SIZE,
) -> dict[str, Any]:
    """One page of cards grouped by theme (newest first), optionally searched and filtered.

    `total` and `themes` count every live memory; `matched` those the query and theme select;
    `next_cursor` (None on the last page) is the `after` of the next page. A search answers
    at most MAX_SEARCH_RESULTS cards, best first, in one page.
    """
    manager = memory.manager
    revision = manager.revision
    items = manager.list_items()
    if query.strip():
        ranked = [i for i in memory.search(query.strip(), MAX_SEARCH_RESULTS) if i in items]
        selected = [(i, items[i]) for i in ranked if not theme or items[i].theme == theme]
        page, next_cursor = selected, None
    else:
        selected = [(i, it) for i, it in items.items() if not theme or it.theme == theme]
        selected.sort(key=lambda pair: _newest_first(*pair), reverse=True)
        if after:
            start = decode_cursor(after)
            selected = [pair for pair in selected if _newest_first(*pair) < start]
        page = selected[:limit]
        next_cursor = encode_cursor(*page[-1]) if len(selected) > limit else None
    replacements = superseded_by(items)
    groups: dict[str, list[dict[str, Any]]] = {}
    for memory_id, item in page:
        groups.setdefault(item.theme, []).append(card(memory_id, item, replacements.get(memory_id)))
    matched = sum(1 for it in items.values() if not theme or it.theme == theme)
    return {
        "revision": revision,
        "total": len(items),
        "matched": len(selected) if query.strip() else matched,
        "shown": len(page),
        "next_cursor": next_cursor,
        "themes": theme_counts(items),
        "groups": [
            {"theme": name, "count": len(cards), "cards": cards} for name, cards in groups.items()
        ],
    }


def changed_cards(manager: BaseMemoryManager, ids: Iterable[str]) -> dict[str, Any]:
    """What the page needs to patch itself after a write: the current card of each id (None
    when it is no longer live), plus the live cards those ids replace in a branch (their
    `superseded_by` changed), the theme counts and the total."""
    everything = manager.all_items()
    items = {i: item for i, item in everything.items() if not item.deleted}
    replacements = superseded_by(items)
    wanted = set(ids)
    wanted |= {everything[i].supersedes for i in wanted if i in everything} - {""}
    cards = {
        memory_id: card(memory_id, items[memory_id], replacements.get(memory_id))
        if memory_id in items
        else None
        for memory_id in sorted(wanted)
    }
    return {"cards": cards, "total": len(items), "themes": theme_counts(items)}


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
