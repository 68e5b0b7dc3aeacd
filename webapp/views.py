"""Read models for the page: the grouped waterfall, search, a card with its history, tombstones."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from memory import BaseMemoryManager, CorruptStoreError, LongTermMemory, MemoryItem
from webapp.topic_groups import by_topic  # feature: topics

logger = logging.getLogger(__name__)
time_sort_key = MemoryItem.time_sort_key  # the store's order of \"newest first\"
MAX_SEARCH_RESULTS = 50
PAGE_SIZE = 200  # cards per page of the waterfall; the page asks for more as the user scrolls
MAX_PAGE_SIZE = 1000
SORTS = ("newest", "hotness")  # the waterfall's orders (a search is always best match first)
# The section of a card (key, name, Chinese name), by grouping: a grouping gets its sections from
# the user's memory once per page.
Sections = Callable[[str, MemoryItem], tuple[str, str, str]]


def by_theme(memory: LongTermMemory) -> Sections:
    return lambda memory_id, item: (item.theme, item.theme, item.theme)


GROUPS: dict[str, Callable[[LongTermMemory], Sections]] = {
    "theme": by_theme,
    "topic": by_topic,  # feature: topics
}
GROUPINGS = tuple(GROUPS)
# A card's hotness when only the item is known (no recalls): by the ranking LongTermMemory uses.
ALONE = LongTermMemory.ranking_type()


def card(
    memory_id: str,
    item: MemoryItem,
    superseded_by: list[str] | None = None,
    heat: float | None = None,
    last_used: str | None = None,
) -> dict[str, Any]:
    """What one card shows. `scope`, `origin` and `supersedes` tell a branch memory and its
    copy-on-write version apart; `superseded_by` lists the live versions that replace this one
    in some branch (it stays live: the other branches still read it). `hotness` is `heat` when
    the caller knows more than the item (recalls), else the item's own; `cold` marks one that
    went cold (memory.retrieval.hotness). `last_used`, when the caller read the recall log, is
    when the memory was last given to a reply ("" never)."""
    value = ALONE.of(memory_id, item) if heat is None else heat
    shown = {} if last_used is None else {"last_used": last_used}
    return {
        **shown,
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
        "hotness": round(value, 3),
        "cold": ALONE.is_cold(value),
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


def encode_cursor(memory_id: str, item: MemoryItem, heat: float | None = None) -> str:
    """Where the next page starts: after this card in newest-first order (or hottest-first,
    with `heat`). A card updated meanwhile moves to the top (the live stream patches it in),
    so pages neither repeat nor skip a card when memories change between them."""
    if heat is not None:
        return json.dumps([heat, item.latest_update_time, memory_id], ensure_ascii=False)
    return json.dumps([item.latest_update_time, memory_id], ensure_ascii=False)


def decode_cursor(cursor: str, sort: str = "newest") -> tuple[Any, ...]:
    """The sort key a cursor names; ValueError ("after ...") when it is not one of ours."""
    try:
        parts = json.loads(cursor)
        if sort == "hotness":
            heat, time, memory_id = parts
            if isinstance(heat, bool) or not isinstance(heat, int | float):
                raise TypeError
        else:
            time, memory_id = parts
        if not isinstance(time, str) or not isinstance(memory_id, str):
            raise TypeError
    except (ValueError, TypeError, RecursionError):
        raise ValueError("after must be the next_cursor of the previous page") from None
    if sort == "hotness":
        return float(heat), time_sort_key(time), memory_id
    return time_sort_key(time), memory_id


def check_view(sort: str, group: str) -> None:
    """ValueError naming the field when the page asks for an order or grouping we do not have."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    if group not in GROUPINGS:
        raise ValueError(f"group must be one of {', '.join(GROUPINGS)}")


def waterfall(
    memory: LongTermMemory,
    query: str = "",
    theme: str = "",
    *,
    after: str = "",
    limit: int = PAGE_SIZE,
    sort: str = "newest",
    group: str = "theme",
) -> dict[str, Any]:
    """One page of cards grouped by theme or by topic, newest or hottest first, optionally
    searched and filtered.

    `total` and `themes` count every live memory (`topics` too, when grouped by topic: each
    memory under its main topic); `matched` those the query and theme select; `next_cursor`
    (None on the last page) is the `after` of the next page. A search answers at most
    MAX_SEARCH_RESULTS cards, best first, in one page.
    """
    check_view(sort, group)
    manager = memory.manager
    revision = manager.revision
    items = manager.list_items()
    heat = {i: round(value, 6) for i, value in memory.hotness(items=items).items()}
    section_of = GROUPS[group](memory)

    def order(memory_id: str, item: MemoryItem) -> tuple[Any, ...]:
        if sort == "hotness":
            return heat[memory_id], time_sort_key(item.latest_update_time), memory_id
        return _newest_first(memory_id, item)

    if query.strip():
        ranked = [i for i in memory.search(query.strip(), MAX_SEARCH_RESULTS) if i in items]
        selected = [(i, items[i]) for i in ranked if not theme or items[i].theme == theme]
        page, next_cursor = selected, None
    else:
        selected = [(i, it) for i, it in items.items() if not theme or it.theme == theme]
        selected.sort(key=lambda pair: order(*pair), reverse=True)
        if after:
            start = decode_cursor(after, sort)
            selected = [pair for pair in selected if order(*pair) < start]
        page = selected[:limit]
        last = page[-1] if page else None
        next_cursor = None
        if last is not None and len(selected) > limit:
            next_cursor = encode_cursor(*last, heat[last[0]] if sort == "hotness" else None)
    replacements = superseded_by(items)
    recalls = memory.recall_stats()  # when each was last given to a reply
    groups: dict[str, dict[str, Any]] = {}
    for memory_id, item in page:
        key, name, name_zh = section_of(memory_id, item)
        section = groups.setdefault(
            key, {"key": key, "theme": item.theme, "name": name, "name_zh": name_zh, "cards": []}
        )
        used = recalls[memory_id].last_recalled if memory_id in recalls else ""
        section["cards"].append(
            card(memory_id, item, replacements.get(memory_id), heat[memory_id], used)
        )
    matched = sum(1 for it in items.values() if not theme or it.theme == theme)
    page_data = {
        "revision": revision,
        "total": len(items),
        "matched": len(selected) if query.strip() else matched,
        "shown": len(page),
        "next_cursor": next_cursor,
        "themes": theme_counts(items),
        "groups": [{**section, "count": len(section["cards"])} for section in groups.values()],
    }
    if group == "topic":
        counts: dict[str, int] = {}
        for memory_id, item in items.items():
            if not theme or item.theme == theme:
                key = section_of(memory_id, item)[0]
                counts[key] = counts.get(key, 0) + 1
        page_data["topics"] = counts
    return page_data


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
        "recall": recall_status(memory),
    }


def recall_status(memory: LongTermMemory) -> dict[str, Any] | None:
    """The semantic channel's progress (None when it is off or the store keeps the vectors):
    while `pending` memories wait for their vector, they are found by BM25 only, and `note`
    says so in words."""
    try:
        status = memory.retrievers.recall_status()
    except Exception:  # a status that cannot say this must still load
        logger.exception("reading the semantic channel's status of %r failed", memory.user_id)
        return None
    if status is None:
        return None
    note = ""
    if status.pending:
        note = (f"vectors are still being made ({status.embedded} of {status.live} memories "
                f"have one, {status.model}): retrieval uses BM25 only for the others "
                "meanwhile")  # fmt: skip
    if status.error:
        note = f"making vectors failed ({status.error}): retrieval uses BM25 only meanwhile"
    return {"model": status.model, "live": status.live, "embedded": status.embedded,
            "pending": status.pending, "error": status.error, "note": note}  # fmt: skip


def model_usage(memory: LongTermMemory) -> dict[str, dict[str, int]]:
    """The user's model calls and tokens by purpose ({} when the writer package is absent or
    nothing was recorded; a ledger that cannot be read never stops the status)."""
    try:
        return memory.usage_totals()
    except Exception:
        logger.exception("reading the model usage of %r failed", memory.user_id)
        return {}
