"""Which memories each topic holds, kept current one changed memory at a time."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from memory.retrieval.query import theme_key
from memory.store.item import MemoryItem
from memory.text import entity_lexicon as lexicon
from memory.text.entities import PERSON, SUBJECT, Entity, extract_entities
from memory.text.tokenize import CHINESE_STOP_CHARS, ENGLISH_STOP_WORDS, normalize, stem

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
_PERSON_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?")
_WORD = re.compile(r"\w+")
_CAPITALISED = re.compile(r"[A-Z][a-z]+")  # how every person name's first word looks


def content_words(text: str) -> dict[str, str]:
    """The words of one memory that may be a recurring subject, token → how it was written:
    English words (stemmed; stop and generic words left out) and Chinese two-character words."""
    words: dict[str, str] = {}
    normalized = normalize(text)
    for word in _ENGLISH_WORD.findall(normalized):
        if word not in ENGLISH_STOP_WORDS and word not in _GENERIC_EN:
            words.setdefault(stem(word), word)
    for run in _CHINESE_RUN.findall(normalized):
        for start in range(len(run) - 1):
            pair = run[start : start + 2]
            if pair not in _GENERIC_ZH and not any(char in CHINESE_STOP_CHARS for char in pair):
                words.setdefault(pair, pair)
    return words


class Membership:
    """Topic → member ids of one store revision, changed in place memory by memory: a write
    costs what that memory names, not a pass over the store. Holders of a TopicTable's lock
    only: it is mutated when the store moves on."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.items: dict[str, MemoryItem] = {}
        self.entities: dict[str, list[Entity]] = {}  # memory id → what its text and theme name
        self.known: dict[str, dict[str, None]] = {}  # key → member ids (ordered set)
        self.info: dict[str, Entity] = {}
        self.words: dict[str, dict[str, str]] = {}  # memory id → content_words
        self.word_members: dict[str, dict[str, None]] = {}
        self.word_surfaces: dict[str, Counter[str]] = {}
        self.name_sources: dict[str, dict[str, None]] = {}  # person name → memories naming it
        self.by_name: dict[str, set[str]] = {}  # memory id → person keys found by name only
        # Capitalised words → the memories holding them, and the names of name_sources by
        # their first word (remade when a name comes or goes): a name is searched for only in
        # the memories holding its first word (30k memories and 750 names were 5 million
        # regex searches, the table's build quadratic).
        self.capitalised: dict[str, dict[str, None]] = {}
        self.capitalised_of: dict[str, set[str]] = {}  # memory id → its capitalised words
        self._names_version = 0
        self._names_by_word: tuple[int, dict[str, list[str]]] = (0, {})

    @classmethod
    def of(cls, revision: str, items: Mapping[str, MemoryItem]) -> Membership:
        membership = cls(revision)
        membership.apply(revision, items)
        return membership

    # ── changes ────────────────────────────────────────────────────────

    def apply(self, revision: str, changed: Mapping[str, MemoryItem]) -> None:
        """Take in changed items (tombstones leave); unchanged versions cost nothing."""
        for memory_id, item in changed.items():
            old = self.items.get(memory_id)
            if old is not None and not item.deleted and _same_text(old, item):
                self.items[memory_id] = item  # a hit or a time: no topic changes
                continue
            if old is not None:
                self._remove(memory_id)
            if not item.deleted:
                self._add(memory_id, item)
        self.revision = revision

    def replace_all(self, revision: str, items: Mapping[str, MemoryItem]) -> None:
        """Bring the membership to exactly `items` (for backends without a change feed)."""
        gone = {i: self.items[i] for i in self.items if i not in items}
        for memory_id in gone:
            self._remove(memory_id)
        self.apply(revision, items)

    def _add(self, memory_id: str, item: MemoryItem) -> None:
        self.items[memory_id] = item
        capitalised = self.capitalised_of[memory_id] = {
            word for word in _WORD.findall(item.description) if _CAPITALISED.fullmatch(word)
        }
        for word in capitalised:
            self.capitalised.setdefault(word, {})[memory_id] = None
        theme = Entity(f"{SUBJECT}:{theme_key(item.theme)}", SUBJECT, item.theme, item.theme)
        entities = [*extract_entities(item.description), theme]
        self.entities[memory_id] = entities
        for entity in entities:
            self._join(entity.key, memory_id, entity)
            if _is_named_person(entity):
                sources = self.name_sources.setdefault(entity.name, {})
                if not sources:
                    self._names_version += 1
                    self._find_name_everywhere(entity.name, entity)
                sources[memory_id] = None
        self._find_known_names(memory_id, item)
        words = self.words[memory_id] = content_words(item.description)
        for token, surface in words.items():
            self.word_members.setdefault(token, {})[memory_id] = None
            self.word_surfaces.setdefault(token, Counter())[surface] += 1

    def _remove(self, memory_id: str) -> None:
        del self.items[memory_id]
        for word in self.capitalised_of.pop(memory_id, set()):
            holders = self.capitalised[word]
            holders.pop(memory_id, None)
            if not holders:
                del self.capitalised[word]
        for entity in self.entities.pop(memory_id, []):
            self._leave(entity.key, memory_id)
            sources = self.name_sources.get(entity.name) if _is_named_person(entity) else None
            if sources is not None:
                sources.pop(memory_id, None)
                if not sources:  # nobody is called that any more: drop the matches by name
                    del self.name_sources[entity.name]
                    self._names_version += 1
                    for other, keys in self.by_name.items():
                        if entity.key in keys:
                            keys.discard(entity.key)
                            self._leave(entity.key, other)
        for key in self.by_name.pop(memory_id, set()):
            self._leave(key, memory_id)
        for token, surface in self.words.pop(memory_id, {}).items():
            self.word_members[token].pop(memory_id, None)
            self.word_surfaces[token][surface] -= 1
            if not self.word_members[token]:
                del self.word_members[token], self.word_surfaces[token]

    def _join(self, key: str, memory_id: str, entity: Entity) -> None:
        if key not in self.info:  # which memory said it first does not matter: no surface
            self.info[key] = Entity(key, entity.kind, entity.name, entity.name_zh)
        self.known.setdefault(key, {})[memory_id] = None

    def _leave(self, key: str, memory_id: str) -> None:
        members = self.known.get(key)
        if members is not None:
            members.pop(memory_id, None)
            if not members:
                del self.known[key], self.info[key]

    def _find_name_everywhere(self, name: str, entity: Entity) -> None:
        """A name one memory shows to be a person ("my friend Tom") is that person in every
        memory, also where the rules alone would not say so ("Tom adopted a puppy")."""
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        for memory_id in list(self.capitalised.get(name.split(" ", 1)[0], {})):
            item = self.items[memory_id]
            if memory_id not in self.known.get(entity.key, {}) and pattern.search(item.description):
                self.by_name.setdefault(memory_id, set()).add(entity.key)
                self._join(entity.key, memory_id, entity)

    def _find_known_names(self, memory_id: str, item: MemoryItem) -> None:
        own = {entity.key for entity in self.entities[memory_id]}
        by_word = self._names_by_first_word()
        words = self.capitalised_of[memory_id] & by_word.keys()
        for name in (name for word in words for name in by_word[word]):
            key = f"{PERSON}:{name.lower()}"
            if key in own or key not in self.info:
                continue
            if re.search(rf"\b{re.escape(name)}\b", item.description):
                self.by_name.setdefault(memory_id, set()).add(key)
                self._join(key, memory_id, self.info[key])

    def _names_by_first_word(self) -> dict[str, list[str]]:
        version, by_word = self._names_by_word
        if version != self._names_version:
            by_word = {}
            for name in self.name_sources:
                by_word.setdefault(name.split(" ", 1)[0], []).append(name)
            self._names_by_word = (self._names_version, by_word)
        return by_word

    # ── reading ────────────────────────────────────────────────────────

    def recurring(self) -> dict[str, list[str]]:
        """Subject key → members of the content words shared by SUBJECT_MIN_MEMORIES memories
        or more and by at most SUBJECT_MAX_SHARE of them (not a person's name or kinship word)."""
        ceiling = max(SUBJECT_MIN_MEMORIES, int(len(self.items) * SUBJECT_MAX_SHARE))
        found = {}
        for token, members in self.word_members.items():
            if SUBJECT_MIN_MEMORIES <= len(members) <= ceiling:
                shown = self.word_surfaces[token].most_common(1)[0][0]
                if shown not in lexicon.PEOPLE_ZH and shown not in lexicon.PEOPLE_EN:
                    found[f"{SUBJECT}:{token}"] = list(members)
        return found

    def word_entity(self, key: str) -> Entity:
        shown = self.word_surfaces[key.split(":", 1)[1]].most_common(1)[0][0]
        return Entity(key, SUBJECT, shown, shown)


def _is_named_person(entity: Entity) -> bool:
    """A person known by a name of their own ("Tom"), not by a kinship word ("Mom")."""
    return (
        entity.kind == PERSON
        and entity.key == f"{PERSON}:{entity.name.lower()}"
        and _PERSON_NAME.fullmatch(entity.name) is not None
        and entity.name not in lexicon.NOT_NAMES
    )


def _same_text(old: MemoryItem, new: MemoryItem) -> bool:
    return old.description == new.description and old.theme == new.theme
