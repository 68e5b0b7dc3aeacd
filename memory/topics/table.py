"""The topic table of one user: topic → members and hotness, rebuilt only when the store changes."""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memory.retrieval.bm25 import RANKING
from memory.retrieval.query import read_query, theme_key
from memory.store.item import MemoryItem, time_sort_key
from memory.store.manager import BaseMemoryManager
from memory.text.entities import DATE, KINDS, SUBJECT, Entity, extract_entities
from memory.text.tokenize import normalize
from memory.topics.membership import Membership

# hotness_of(memory_id, item) → the memory's hotness (LongTermMemory passes its ranking's, which
# knows the recall log; the default, retrieval's ranking without recalls, reads the item alone).
HotnessOf = Callable[[str, MemoryItem], float]
HEAT_SECONDS = 60.0


@dataclass(frozen=True)
class Topic:
    """One topic of a user's memory: who or what it is, its members (hottest, then most recently
    updated first), its hotness (the hottest member's plus the log of how many there are, so a
    topic many memories share ranks above a single hot fact), and the newest member's time."""

    key: str
    kind: str
    name: str
    name_zh: str
    members: tuple[str, ...]
    hotness: float
    updated_at: str

    def display(self, language: str = "en") -> str:
        return (self.name_zh or self.name) if language == "zh" else (self.name or self.name_zh)


@dataclass
class _View:
    """The topics of one store revision, read-only (the Membership behind it moves on)."""

    revision: str
    items: dict[str, MemoryItem]
    topics: dict[str, Entity] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    named: dict[str, list[str]] = field(default_factory=dict)  # memory id → person/place/org keys
    names: dict[str, str] = field(default_factory=dict)  # normalised display name → key


class TopicTable:
    """Topics derived from the live memories of `manager`: rebuildable, never stored. It follows
    the store by its change feed when the backend has one (a write costs what the written
    memories name), else by comparing versions; a view is made once per store revision (the
    manager's `change_token`, as the BM25 index); hotness when asked, since it decays."""

    def __init__(self, manager: BaseMemoryManager, hotness_of: HotnessOf | None = None) -> None:
        self.manager = manager
        self.hotness_of: HotnessOf = hotness_of or RANKING().of
        self.builds = 0  # views made, one per revision seen (tests and benchmarks read it)
        self._membership: Membership | None = None
        self._view: _View | None = None
        self._lock = threading.Lock()
        self._heat_cache: tuple[tuple[str, int], dict[str, tuple[float, float]]] = (("", -1), {})

    def _current(self) -> _View:
        revision = self.manager.change_token()
        view = self._view
        if view is not None and view.revision == revision:
            return view
        with self._lock:
            view = self._view
            if view is not None and view.revision == revision:
                return view
            membership = self._membership
            delta = self.manager.changes_since(membership.revision) if membership else None
            if membership is None:
                membership = self._membership = Membership.of(revision, self.manager.list_items())
            elif delta is not None:
                membership.apply(*delta)
            else:
                membership.replace_all(revision, self.manager.list_items())
            view = self._view = _view_of(membership)
            self.builds += 1
        return view

    # ── reading ────────────────────────────────────────────────────────

    def topics(self) -> list[Topic]:
        """Every topic, hottest first; among equally hot ones, people, places and organisations
        before subjects and dates."""
        table = self._current()
        heat = self._heat(table.items)
        found = [self._topic(table, key, heat) for key in table.topics]
        return sorted(found, key=lambda t: (-round(t.hotness, 6), KINDS.index(t.kind), t.key))

    def topic(self, name: str) -> Topic | None:
        """The topic `name` resolves to (see `resolve`), or None."""
        table = self._current()
        key = self._resolve(table, name)
        if key is None:
            return None
        return self._topic(table, key, self._heat({i: table.items[i] for i in table.members[key]}))

    def topics_of(self, memory_id: str) -> list[str]:
        """The keys of the topics one live memory belongs to."""
        view = self._current()
        return [key for key, ids in view.members.items() if memory_id in ids]

    def main_topic(self, memory_id: str) -> Entity | None:
        """The one topic a page files a memory under: the person, place or organisation it names
        that most memories share (the first named on a tie), else its theme; None when the
        memory is not live."""
        view = self._current()
        item = view.items.get(memory_id)
        if item is None:
            return None
        named = view.named.get(memory_id, [])
        if named:
            best = max(named, key=lambda key: (len(view.members[key]), -named.index(key)))
            return view.topics[best]
        return view.topics.get(f"{SUBJECT}:{theme_key(item.theme)}")

    def resolve(self, name: str) -> str | None:
        """A topic key for a name a user typed: a key itself ("person:mother"), an alias in either
        language ("mom", "my mom", "我妈", "妈妈"), a display name ("Tom", "tom"), or a theme."""
        return self._resolve(self._current(), name)

    def topic_of_query(self, query: str) -> str | None:
        """The topic a broad question asks about ("what's new with my sister", "我妈最近怎么样",
        "how is Tom"): a known topic is named, something else is said ("Tom" or "Porto" alone
        is a search, ranked as one), and nothing but filler words is left once the topic is
        taken out. None for anything else (a question with content of its own)."""
        if not isinstance(query, str) or not query.strip() or len(query) > 200:
            return None
        entities = extract_entities(query, lenient=True)
        named = [(entity.key, query.replace(entity.surface, " ")) for entity in entities]
        words = [(word, re.sub(rf"\b{re.escape(word)}\b", " ", query))
                 for word in re.findall(r"[^\W\d_]+", query)]  # fmt: skip
        named = [(key, rest) for key, rest in named if _only_filler(rest)]
        words = [(word, rest) for word, rest in words if _only_filler(rest)]
        if not named and not words:
            return None  # a question with content of its own: the table is not even built
        table = self._current()
        named += [
            (table.names[normalize(w)], rest) for w, rest in words if normalize(w) in table.names
        ]
        for key, _ in named:
            if key in table.topics and not key.startswith(f"{DATE}:"):
                return key
        return None

    def _resolve(self, table: _View, name: str) -> str | None:
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            return None
        text = name.strip()
        if text in table.topics:
            return text
        for entity in extract_entities(text, lenient=True):
            if entity.key in table.topics:
                return entity.key
        key = table.names.get(normalize(text))
        if key is not None:
            return key
        subject = f"{SUBJECT}:{theme_key(text)}"
        return subject if subject in table.topics else None

    def _heat(self, items: Mapping[str, MemoryItem]) -> dict[str, tuple[float, float]]:
        """Each memory's hotness (rounded: equal stays equal) and update instant. Kept for
        HEAT_SECONDS within one revision: decay over a half-life of days does not move in a
        minute, and a broad question about a big topic must not recompute it every time."""
        stamp = (self.manager.change_token(), int(time.monotonic() // HEAT_SECONDS))
        if self._heat_cache[0] != stamp:
            self._heat_cache = (stamp, {})
        cache = self._heat_cache[1]
        for memory_id, item in items.items():
            if memory_id not in cache:
                value = round(self.hotness_of(memory_id, item), 6)
                cache[memory_id] = (value, time_sort_key(item.latest_update_time)[0])
        return cache

    def _topic(self, table: _View, key: str, heat: dict[str, tuple[float, float]]) -> Topic:
        entity = table.topics[key]
        ranked = sorted(
            dict.fromkeys(table.members[key]), key=lambda i: (-heat[i][0], -heat[i][1], i)
        )
        newest = max((table.items[i].latest_update_time for i in ranked), key=time_sort_key)
        value = heat[ranked[0]][0] + math.log(len(ranked))
        return Topic(key, entity.kind, entity.name, entity.name_zh, tuple(ranked), value, newest)


def _only_filler(rest: str) -> bool:
    """Whether what is left of a question is a broad ask ("how is", "最近怎么样"), not nothing."""
    return re.search(r"\w", rest) is not None and read_query(rest).broad


def _view_of(membership: Membership) -> _View:
    view = _View(membership.revision, dict(membership.items), dict(membership.info))
    view.members = {key: list(ids) for key, ids in membership.known.items()}
    for key, ids in membership.recurring().items():
        if key in view.members:  # a theme of the same name: the word's memories join it
            view.members[key] += [i for i in ids if i not in membership.known[key]]
        else:
            view.topics[key] = membership.word_entity(key)
            view.members[key] = ids
    for memory_id, entities in membership.entities.items():
        keys = [e.key for e in entities if e.kind not in (SUBJECT, DATE)]
        keys += sorted(membership.by_name.get(memory_id, ()))
        if keys:
            view.named[memory_id] = keys
    for key, entity in view.topics.items():
        for name in (entity.name, entity.name_zh, key.split(":", 1)[1]):
            if name:
                view.names.setdefault(normalize(name), key)
    return view
