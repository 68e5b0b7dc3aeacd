"""Recall@k on a labelled retrieval set, and loading such a set into a real manager."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memory.item import MemoryItem
from memory.manager import BaseMemoryManager


@dataclass(frozen=True)
class LabelledQuery:
    """One query and the ids a person judged relevant to it."""

    id: str
    query: str
    relevant: list[str]
    lang: str = ""
    kind: str = ""


@dataclass(frozen=True)
class LabelledSet:
    """Memories (as stored items) and queries with their relevant ids."""

    items: dict[str, MemoryItem]
    queries: list[LabelledQuery]


def load_labelled_set(path: str | Path, now: datetime | None = None) -> LabelledSet:
    """Read the JSON set; `days_ago` becomes an update time relative to `now`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    moment = now or datetime.now().astimezone()
    items: dict[str, MemoryItem] = {}
    for raw in data["memories"]:
        item = MemoryItem.create(raw["description"], raw["theme"], "labelled set")
        stamp = (moment - timedelta(days=float(raw.get("days_ago", 0)))).isoformat()
        item.latest_update_time = stamp
        item.history[-1]["time"] = stamp
        item.hit = int(raw.get("hit", 0))
        items[str(raw["id"])] = item
    queries = [
        LabelledQuery(
            q["id"], q["query"], list(q["relevant"]), q.get("lang", ""), q.get("kind", "")
        )
        for q in data["queries"]
    ]
    return LabelledSet(items, queries)


def write_items(manager: BaseMemoryManager, items: dict[str, MemoryItem]) -> None:
    """Store prepared items (times and hit counts kept) in one transaction of any backend."""
    with manager.transaction() as transaction:
        for memory_id, item in items.items():
            transaction.put(memory_id, item)


def recall_at(
    retrieve: Callable[[str, int], Sequence[dict[str, Any]]],
    queries: Sequence[LabelledQuery],
    k: int,
) -> tuple[float, dict[str, float]]:
    """Mean recall@k (found relevant / all relevant) and the recall of each query."""
    per_query: dict[str, float] = {}
    for labelled in queries:
        found = {result["id"] for result in retrieve(labelled.query, k)}
        per_query[labelled.id] = len(found & set(labelled.relevant)) / len(labelled.relevant)
    mean = sum(per_query.values()) / len(per_query) if per_query else 0.0
    return mean, per_query


__all__ = ["LabelledQuery", "LabelledSet", "load_labelled_set", "recall_at", "write_items"]
