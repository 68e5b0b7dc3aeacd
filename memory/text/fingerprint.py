"""Fingerprint: what makes a text carry one memory (its names, numbers and words), and redact."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from memory.text.entities import extract_entities
from memory.text.entity_lexicon import PEOPLE
from memory.text.tokenize import normalize, tokenize

# Terms that say who the memory is about, not what it says.
SUBJECT_TERMS = frozenset({"user", "用户", "用", "户"})
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NUMBER = re.compile(r"\d+")
# Where derived text (a summary, a digest, the core context) is cut to leave a fact out.
_SEGMENT_END = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
WORD_COVERAGE = 0.8  # a text holding this share of a memory's content words restates it
MARK_COVERAGE = 0.5  # with one of its numbers or names, this share is enough


@dataclass(frozen=True)
class Fingerprint:
    """What makes a text carry one memory: its names (people by name, places, organisations,
    each as the index terms it is made of, in both languages), its marks (numbers and other
    capitalised words) and its content words."""

    names: tuple[frozenset[str], ...] = ()
    marks: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, texts: Iterable[str]) -> Fingerprint:
        names: list[frozenset[str]] = []
        marks: set[str] = set()
        words: set[str] = set()
        for text in texts:
            for entity in extract_entities(text):
                if entity.kind == "date" or entity.key.split(":", 1)[-1] in PEOPLE:
                    continue  # "my mom" or "3 May" say too little to hide every mention
                for form in {entity.name, entity.name_zh, entity.surface} - {""}:
                    terms = frozenset(_name_terms(form))
                    if terms and terms not in names:
                        names.append(terms)
            marks.update(_NUMBER.findall(text))
            marks.update(t for w in _CAPITALISED.findall(text) for t in tokenize(w))
            words.update(_content_terms(text))
        known = {t for name in names for t in name}
        return cls(tuple(names), frozenset(marks - known - SUBJECT_TERMS), frozenset(words))

    def carries(self, text: str) -> bool:
        """Whether `text` says what the memory says: one of its names, two of its marks, one
        mark with half its content words, or most of its content words."""
        return self.carried_by(frozenset(tokenize(text)))

    def carried_by(self, terms: frozenset[str]) -> bool:
        """`carries` for a text already split into its index terms."""
        if any(name <= terms for name in self.names):
            return True
        marks = len(self.marks & terms)
        coverage = len(self.words & terms) / len(self.words) if self.words else 0.0
        return (
            marks >= 2 or (marks >= 1 and coverage >= MARK_COVERAGE) or (coverage >= WORD_COVERAGE)
        )

    def may_carry(self, text: str) -> bool:
        """A cheap first look (substrings, no tokenizing): False only when `carries` is False."""
        lowered = normalize(text)
        names, marks, words = self._keys
        if any(all(key in lowered for key in name) for name in names):
            return True
        if any(key in lowered for key in marks):
            return True
        present = sum(1 for key in words if key in lowered)
        return bool(words) and present >= WORD_COVERAGE * len(words) - 1e-9

    @cached_property
    def _keys(self) -> tuple[list[list[str]], list[str], list[str]]:
        return (
            [[_key(t) for t in name] for name in self.names],
            [_key(t) for t in self.marks],
            [_key(t) for t in self.words],
        )

    @property
    def empty(self) -> bool:
        return not (self.names or self.marks or self.words)


def _key(term: str) -> str:
    """What of an index term is found in the text it came from: the stemmer turns a final y
    into i ("stories" and "story" → "stori"); everything else it only cuts."""
    return term[:-1] if len(term) > 1 and term.endswith("i") and term.isascii() else term


def _name_terms(form: str) -> list[str]:
    """A name's index terms: English words, or the character pairs of a Chinese name."""
    terms = [t for t in tokenize(form) if t not in SUBJECT_TERMS]
    pairs = [t for t in terms if len(t) > 1]
    return pairs or terms


def _content_terms(text: str) -> set[str]:
    """English words and Chinese character pairs, the memory's subject ("user") left out."""
    return {
        t for t in tokenize(text.replace("用户", " "))
        if t not in SUBJECT_TERMS and (len(t) > 1 or t.isdigit()) and "用户" not in t
    }  # fmt: skip


def redact(text: str, prints: Mapping[str, Fingerprint]) -> tuple[str, list[tuple[str, str]]]:
    """`text` without its sentences, clauses or lines that carry a forgotten memory, and what
    was left out as (memory id, segment)."""
    if not prints or not text.strip():
        return text, []
    kept: list[str] = []
    withheld: list[tuple[str, str]] = []
    for segment in _SEGMENT_END.split(text):
        if not segment.strip():
            continue
        owner = next((i for i, p in prints.items() if p.carries(segment)), None)
        if owner is None:
            kept.append(segment)
        else:
            withheld.append((owner, segment))
    if not withheld:
        return text, []
    joiner = "\n" if "\n" in text else " "
    return joiner.join(kept), withheld


def redact_core_context(
    block: Mapping[str, str], prints: Mapping[str, Fingerprint]
) -> dict[str, str]:
    """The core context as a reader sees it, without what carries a forgotten memory (the
    stored block is left as it is, so a restore brings it back)."""
    return {
        key: value if key == "updated_at" else redact(value, prints)[0]
        for key, value in block.items()
    }
