"""The topic table of one user: topic → members and hotness, rebuilt only when the store changes."""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memory.hotness import hotness
from memory.item import MemoryItem, time_sort_key
from memory.manager import BaseMemoryManager
from memory.retrieval.query import read_query, theme_key
from memory.tokenize import CHINESE_STOP_CHARS, ENGLISH_STOP_WORDS, normalize, stem
from memory.topics import lexicon
from memory.topics.entities import DATE, KINDS, PERSON, SUBJECT, Entity, extract_entities

# hotness_of(memory_id, item) → the memory's hotness (LongTermMemory passes one that knows the
# recall log; the default reads the item alone).
HotnessOf = Callable[[str, MemoryItem], float]

# A content word is a recurring subject when this many memories share it, and no more than
# SUBJECT_MAX_SHARE of them do ("user", "喜欢" are in everything and say nothing).
SUBJECT_MIN_MEMORIES = 3
SUBJECT_MAX_SHARE = 0.25
_GENERIC_EN = frozenset(
    """user like likes liked want wants wanted prefer prefers love loves really always usually
    often every years year time times thing things good make makes made need needs needed
    week weeks month months today being would should could still also""".split()  # noqa: SIM905
)
_GENERIC_ZH = frozenset(
    """用户 喜欢 觉得 因为 现在 时候 每天 一个 没有 可以 已经 最近 平时 经常 希望 需要 自己 什么
    时间 今天 明天 比较 非常 特别 一直 打算 计划 想要 知道 工作""".split()  # noqa: SIM905
)
_ENGLISH_WORD = re.compile(r"[a-z]{4,}")
_CHINESE_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")


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
class _Membership:
    """What the store's current revision gives, before hotness (which moves with the clock)."""

    revision: str
    items: dict[str, MemoryItem]
    topics: dict[str, Entity] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    by_memory: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # lower-case display name → key


def default_hotness(memory_id: str, item: MemoryItem) -> float:
    return hotness(item)


class TopicTable:
    """Topics derived from the live memories of `manager`: rebuildable, never stored. Entities
    are extracted once per memory version; the table itself once per store revision (the
    manager's `change_token`, as the BM25 index); hotness when asked, since it decays."""

    def __init__(self, manager: BaseMemoryManager, hotness_of: HotnessOf | None = None) -> None:
        self.manager = manager
        self.hotness_of: HotnessOf = hotness_of or default_hotness
        self.builds = 0
        self._membership: _Membership | None = None
        self._entities: dict[tuple[str, str, str], list[Entity]] = {}
        self._lock = threading.Lock()

    def _current(self) -> _Membership:
        revision = self.manager.change_token()
        cached = self._membership
        if cached is not None and cached.revision == revision:
            return cached
        with self._lock:
            cached = self._membership
            if cached is None or cached.revision != revision:
                cached = self._membership = self._build(revision, self.manager.list_items())
                self.builds += 1
        return cached

    def _entities_of(self, memory_id: str, item: MemoryItem) -> list[Entity]:
        key = (memory_id, item.description, item.latest_update_time)
        found = self._entities.get(key)
        if found is None:
            found = self._entities[key] = extract_entities(item.description)
        return found

    def _build(self, revision: str, items: dict[str, MemoryItem]) -> _Membership:
        table = _Membership(revision, items)
        live_keys = set()
        for memory_id, item in items.items():
            live_keys.add((memory_id, item.description, item.latest_update_time))
            subject = Entity(f"{SUBJECT}:{theme_key(item.theme)}", SUBJECT, item.theme, item.theme)
            for entity in [*self._entities_of(memory_id, item), subject]:
                table.topics.setdefault(entity.key, entity)
                table.members.setdefault(entity.key, []).append(memory_id)
                table.by_memory.setdefault(memory_id, []).append(entity.key)
        self._add_known_names(table)
        for entity, ids in recurring_words(items).values():
            table.topics.setdefault(entity.key, entity)  # a theme of the same name stays
            members = table.members.setdefault(entity.key, [])
            for memory_id in ids:
                if memory_id not in members:
                    members.append(memory_id)
                    table.by_memory[memory_id].append(entity.key)
        self._entities = {k: v for k, v in self._entities.items() if k in live_keys}
        for key, entity in table.topics.items():
            for name in (entity.name, entity.name_zh, key.split(":", 1)[1]):
                if name:
                    table.names.setdefault(normalize(name), key)
        return table

    @staticmethod
    def _add_known_names(table: _Membership) -> None:
        """A name one memory shows to be a person ("my friend Tom") is that person in every
        memory, also where the rules alone would not say so ("Tom adopted a puppy")."""
        names = {
            entity.name: key
            for key, entity in table.topics.items()
            if entity.kind == PERSON and re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", entity.name)
            and entity.name not in lexicon.NOT_NAMES
        }  # fmt: skip
        if not names:
            return
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        for memory_id, item in table.items.items():
            for name in set(pattern.findall(item.description)):
                key = names[name]
                if key not in table.by_memory.get(memory_id, []):
                    table.members[key].append(memory_id)
                    table.by_memory.setdefault(memory_id, []).append(key)

    # ── reading ────────────────────────────────────────────────────────

    def topics(self) -> list[Topic]:
        """Every topic, hottest first; among equally hot ones, people, places and organisations
        before subjects and dates."""
        table = self._current()
        found = [self._topic(table, key) for key in table.topics]
        return sorted(found, key=lambda t: (-round(t.hotness, 6), KINDS.index(t.kind), t.key))

    def topic(self, name: str) -> Topic | None:
        """The topic `name` resolves to (see `resolve`), or None."""
        table = self._current()
        key = self._resolve(table, name)
        return self._topic(table, key) if key is not None else None

    def topics_of(self, memory_id: str) -> list[str]:
        """The keys of the topics one live memory belongs to (its entities first, then subjects)."""
        return list(self._current().by_memory.get(memory_id, []))

    def main_topic(self, memory_id: str) -> Entity | None:
        """The one topic a page files a memory under: the person, place or organisation it names
        that most memories share (the first named on a tie), else its theme; None when the
        memory is not live."""
        table = self._current()
        keys = table.by_memory.get(memory_id)
        if not keys:
            return None
        named = [key for key in keys if table.topics[key].kind not in (SUBJECT, DATE)]
        if named:
            best = max(named, key=lambda key: (len(table.members[key]), -named.index(key)))
            return table.topics[best]
        theme = f"{SUBJECT}:{theme_key(table.items[memory_id].theme)}"
        return table.topics.get(theme, table.topics[keys[0]])

    def resolve(self, name: str) -> str | None:
        """A topic key for a name a user typed: a key itself ("person:mother"), an alias in either
        language ("mom", "my mom", "我妈", "妈妈"), a display name ("Tom", "tom"), or a theme."""
        return self._resolve(self._current(), name)

    def topic_of_query(self, query: str) -> str | None:
        """The topic a broad question asks about ("what's new with my sister", "我妈最近怎么样",
        "how is Tom"): a known topic is named and nothing is left once it and the filler words
        are taken out. None for anything else (a question with content of its own)."""
        if not isinstance(query, str) or not query.strip() or len(query) > 200:
            return None
        table = self._current()
        for entity in extract_entities(query, lenient=True):
            known = entity.key in table.topics and entity.kind != DATE
            if known and read_query(query.replace(entity.surface, " ")).broad:
                return entity.key
        for word in re.findall(r"[^\W\d_]+", query):
            key = table.names.get(normalize(word))
            if key is not None and not key.startswith(f"{DATE}:"):
                rest = re.sub(rf"\b{re.escape(word)}\b", " ", query)
                if read_query(rest).broad:
                    return key
        return None

    def _resolve(self, table: _Membership, name: str) -> str | None:
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

    def _topic(self, table: _Membership, key: str) -> Topic:
        entity = table.topics[key]
        ranked = self.rank_members(table.members[key], table.items)
        heat = [self.hotness_of(memory_id, table.items[memory_id]) for memory_id in ranked]
        newest = max((table.items[i].latest_update_time for i in ranked), key=time_sort_key)
        value = max(heat) + math.log(len(ranked))
        return Topic(key, entity.kind, entity.name, entity.name_zh, tuple(ranked), value, newest)

    def rank_members(self, ids: list[str], items: Mapping[str, MemoryItem]) -> list[str]:
        """Hottest first, the most recently updated first among equally hot ones."""
        heat = {i: round(self.hotness_of(i, items[i]), 6) for i in dict.fromkeys(ids)}
        newest = {i: time_sort_key(items[i].latest_update_time)[0] for i in heat}
        return sorted(heat, key=lambda i: (-heat[i], -newest[i], i))


def recurring_words(items: Mapping[str, MemoryItem]) -> dict[str, tuple[Entity, list[str]]]:
    """Content words several memories share: English words (stemmed) and Chinese two-character
    words, each in at least SUBJECT_MIN_MEMORIES memories and at most SUBJECT_MAX_SHARE of them."""
    seen: dict[str, list[str]] = {}
    surfaces: dict[str, Counter[str]] = {}
    for memory_id, item in items.items():
        words: set[str] = set()
        text = normalize(item.description)
        for word in _ENGLISH_WORD.findall(text):
            if word in ENGLISH_STOP_WORDS or word in _GENERIC_EN:
                continue
            token = stem(word)
            surfaces.setdefault(token, Counter())[word] += 1
            words.add(token)
        for run in _CHINESE_RUN.findall(text):
            for start in range(len(run) - 1):
                pair = run[start : start + 2]
                if pair in _GENERIC_ZH or any(char in CHINESE_STOP_CHARS for char in pair):
                    continue
                surfaces.setdefault(pair, Counter())[pair] += 1
                words.add(pair)
        for token in words:
            seen.setdefault(token, []).append(memory_id)
    ceiling = max(SUBJECT_MIN_MEMORIES, int(len(items) * SUBJECT_MAX_SHARE))
    found = {}
    for token, ids in seen.items():
        if SUBJECT_MIN_MEMORIES <= len(ids) <= ceiling:
            shown = surfaces[token].most_common(1)[0][0]
            if shown in lexicon.PEOPLE_ZH or shown in lexicon.PEOPLE_EN:
                continue  # already a person topic
            found[token] = (Entity(f"{SUBJECT}:{token}", SUBJECT, shown, shown), ids)
    return found
