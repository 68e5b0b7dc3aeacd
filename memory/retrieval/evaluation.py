"""Recall@k on a labelled retrieval set, and loading such a set into a real manager."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager


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


@dataclass(frozen=True)
class DialogueSet:
    """One language of a dialogue set pooled in one store: every user's turns as memories
    (dated the day they were said), every probing question with the turns that answer it.
    `split` of each query is "tuning" or "held-out"; the other users' turns are distractors."""

    lang: str
    items: dict[str, MemoryItem]
    queries: list[LabelledQuery]
    split_of: dict[str, str]

    def split(self, name: str) -> list[LabelledQuery]:
        return [q for q in self.queries if self.split_of[q.id] == name]


def load_dialogue_sets(path: str | Path) -> dict[str, DialogueSet]:
    """tests/data/memorybank_set.json by language; a memory's time is noon of its day, its
    thread the user's conversation of that day."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    sets: dict[str, DialogueSet] = {}
    for number, user in enumerate(data["users"]):
        lang = user["lang"]
        pooled = sets.setdefault(lang, DialogueSet(lang, {}, [], {}))
        prefix = f"u{number:02d}-"
        for raw in user["memories"]:
            # A day of the source is one conversation: its turns share a thread, in order.
            day = raw["id"].split("/")[0]
            item = MemoryItem.create(raw["description"], raw["theme"], "dialogue set",
                                     origin={"thread_id": prefix + day})  # fmt: skip
            stamp = f"{raw['description'][:10]}T12:00:00+00:00"
            item.latest_update_time = stamp
            item.history[-1]["time"] = stamp
            pooled.items[prefix + raw["id"].replace("/", "-")] = item
        for raw in user["queries"]:
            relevant = [prefix + r.replace("/", "-") for r in raw["relevant"]]
            pooled.queries.append(LabelledQuery(raw["id"], raw["query"], relevant, lang))
            pooled.split_of[raw["id"]] = user["split"]
    return sets


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


__all__ = [
    "DialogueSet",
    "LabelledQuery",
    "LabelledSet",
    "load_dialogue_sets",
    "load_labelled_set",
    "recall_at",
    "write_items",
]
