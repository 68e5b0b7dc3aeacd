"""Near-duplicate detection without a model: canonical token sets, an inverted index over each
memory's rarest tokens for candidate pairs (not all pairs), a measured similarity, union-find."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from memory.language import CJK_CLASS
from memory.tokenize import normalize, tokenize

# Measured on the planted set of tests/unit/consolidation_data.py (bench/consolidation.py
# prints the sweep): a pair whose words one side holds entirely (an added "really", "music")
# merges from CONTAINED_JACCARD; a pair where each side has a word the other lacks (a swapped
# word, possibly a different fact) needs SWAPPED_JACCARD.
CONTAINED_JACCARD = 0.5
SWAPPED_JACCARD = 0.9
# Tokens in more memories than this are left out of the candidate index: they would make it
# quadratic ("user", "喜欢"), and a pair sharing nothing rarer is not a near-duplicate.
MAX_POSTINGS = 32

# Words that say the same thing for memory purposes (stems, see memory.tokenize.stem).
_SAME_MEANING = {
    "enjoi": "lik", "lov": "lik", "ador": "lik", "prefer": "lik", "fond": "lik", "fli": "flight",
}  # fmt: skip
# Words that add emphasis, not facts.
_FILLER = frozenset({"realli", "truli", "actualli", "veri", "lot", "much", "alwai", "quit"})
_SUBJECT = frozenset({"user"})
_ZH_SAME_MEANING = (("喜爱", "喜欢"), ("热爱", "喜欢"), ("爱听", "喜欢听"), ("爱吃", "喜欢吃"),
                    ("爱看", "喜欢看"), ("爱喝", "喜欢喝"))  # fmt: skip
_ZH_FILLER = re.compile(r"用户|非常|特别|真的|很|挺")
_ZH_DAY = re.compile(r"(\d)号")
# Distinct facts differ in these: numbers, dates, names, negation.
_NUMBER = re.compile(rf"(\d+)([{CJK_CLASS}]?)")
_CJK_NUMERALS = frozenset("零一二两三四五六七八九十百千万")
_MONTH_OR_DAY = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)[a-z]*\b"
)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
_NOT_NAMES = frozenset({"user", "the", "i"})
_NEGATION_EN = re.compile(r"\b(not|no|never|none|nothing|dislikes?|hates?|cannot|\w+n't)\b")
_NEGATION_ZH = re.compile(r"不|没|别|讨厌|从未")
_CJK = re.compile(rf"[{CJK_CLASS}]")


@dataclass(frozen=True)
class Fingerprint:
    """What the comparison needs of one memory's text."""

    tokens: frozenset[str]  # canonical tokens (English stems, Chinese unigrams and bigrams)
    # The same without Chinese single characters: who holds whose words. Bigrams, not
    # characters, so that "爱吃鱼肉" does not hold "爱吃肉鱼" (same characters, other words).
    words: frozenset[str]
    markers: frozenset[str]  # numbers, dates, names and negation: must be equal to merge


def canonical_text(text: str) -> str:
    """The text with Chinese synonyms unified and fillers dropped (English is done on tokens)."""
    for variant, canonical in _ZH_SAME_MEANING:
        text = text.replace(variant, canonical)
    return _ZH_DAY.sub(r"\1日", _ZH_FILLER.sub("", text))


def markers(text: str) -> frozenset[str]:
    """Numbers, month and weekday names, capitalised names (not the sentence's first word),
    Chinese numerals and negation: two memories that differ in any are distinct facts."""
    lowered = normalize(text)
    # A number keeps the Chinese unit after it: "4月9日" and "9月4日" are different dates.
    found = {number + unit for number, unit in _NUMBER.findall(normalize(canonical_text(text)))}
    found.update(m[:3] for m in _MONTH_OR_DAY.findall(lowered))
    found.update(
        m.lower() for m in _CAPITALISED.findall(text.strip()) if m.lower() not in _NOT_NAMES
    )
    found.update(char for char in text if char in _CJK_NUMERALS)
    if _NEGATION_EN.search(lowered) or _NEGATION_ZH.search(canonical_text(text)):
        found.add("<not>")
    return frozenset(found)


def fingerprint(text: str) -> Fingerprint:
    tokens = set()
    for token in tokenize(canonical_text(text)):
        token = _SAME_MEANING.get(token, token)
        if token not in _FILLER and token not in _SUBJECT:
            tokens.add(token)
    words = {t for t in tokens if not (len(t) == 1 and _CJK.match(t))}
    return Fingerprint(frozenset(tokens), frozenset(words), markers(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def same_fact(
    a: Fingerprint,
    b: Fingerprint,
    contained: float = CONTAINED_JACCARD,
    swapped: float = SWAPPED_JACCARD,
) -> bool:
    """Whether two memories say the same thing: equal markers, then similar enough tokens."""
    if a.markers != b.markers:
        return False
    holds = a.words <= b.words or b.words <= a.words
    return jaccard(a.tokens, b.tokens) >= (contained if holds else swapped)


def candidate_pairs(
    prints: Mapping[str, Fingerprint], threshold: float = CONTAINED_JACCARD
) -> set[tuple[str, str]]:
    """Pairs that may reach Jaccard `threshold`, by prefix filtering: two sets that reach it
    share a token among each one's `len - ceil(threshold·len) + 1` rarest tokens (and two
    tokens among one more). Each memory is filed under those tokens in an inverted index; a
    memory whose prefix holds a token too common to index (in more than MAX_POSTINGS
    memories) is also filed under the token pairs of its prefix, which are rare again. No key
    is followed to more than MAX_POSTINGS memories, so the cost grows with the store, not
    with its square."""
    frequency: Counter[str] = Counter()
    for fp in prints.values():
        frequency.update(fp.tokens)
    keys_of: dict[str, list[str]] = {}
    for memory_id, fp in prints.items():
        ordered = sorted(fp.tokens, key=lambda t: (frequency[t], t))
        prefix = len(ordered) - math.ceil(threshold * len(ordered)) + 1
        keys = [t for t in ordered[:prefix] if frequency[t] <= MAX_POSTINGS]
        if len(keys) < min(prefix, len(ordered)):  # a common token in the prefix: add pairs
            pair_prefix = sorted(ordered[: prefix + 1])
            keys += [f"{a}\x00{b}" for a, b in itertools.combinations(pair_prefix, 2)]
        keys_of[memory_id] = keys
    filed = Counter(key for keys in keys_of.values() for key in keys)
    index: dict[str, list[str]] = defaultdict(list)
    pairs: set[tuple[str, str]] = set()
    for memory_id, keys in keys_of.items():
        for key in keys:
            if filed[key] > MAX_POSTINGS:
                continue
            for other in index[key]:
                pairs.add((other, memory_id))
            index[key].append(memory_id)
    return pairs


def duplicate_groups(
    texts: Mapping[str, str],
    contained: float = CONTAINED_JACCARD,
    swapped: float = SWAPPED_JACCARD,
) -> list[list[str]]:
    """Groups (two or more ids, in `texts` order) of memories saying the same thing."""
    prints = {memory_id: fingerprint(text) for memory_id, text in texts.items()}
    parent = {memory_id: memory_id for memory_id in texts}

    def root(memory_id: str) -> str:
        while parent[memory_id] != memory_id:
            parent[memory_id] = parent[parent[memory_id]]
            memory_id = parent[memory_id]
        return memory_id

    for first, second in candidate_pairs(prints, min(contained, swapped)):
        if same_fact(prints[first], prints[second], contained, swapped):
            parent[root(second)] = root(first)
    groups: dict[str, list[str]] = defaultdict(list)
    for memory_id in texts:
        groups[root(memory_id)].append(memory_id)
    return [members for members in groups.values() if len(members) > 1]
