"""Near-duplicate detection without a model: canonical token sets, an inverted index over each
memory's rarest tokens for candidate pairs (not all pairs), a measured similarity, union-find."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory.text.language import CJK_CLASS, language_of
from memory.text.tokenize import normalize, tokenize
from memory.upkeep.consolidation.chinese import content_units, markers_agree, same_by_meaning_zh
from memory.upkeep.consolidation.lexicon import LEARNED_CONTRASTS, LEARNED_SYNONYMS
from memory.upkeep.consolidation.semantic import (
    MAX_MODEL_CHECKS,
    SEMANTIC_SAME,
    Vectors,
    model_says_same,
    model_tells_apart,
    pairs_by_language,
)

# Measured on the planted set of tests/unit/consolidation_data.py (bench/consolidation.py
# prints the sweep): a pair whose words one side holds entirely (an added "really", "music")
# merges from CONTAINED_JACCARD; a pair where each side has a word the other lacks (a swapped
# word, possibly a different fact) needs SWAPPED_JACCARD.
CONTAINED_JACCARD = 0.5
SWAPPED_JACCARD = 0.9
# Tokens in more memories than this are left out of the candidate index: they would make it
# quadratic ("user", "喜欢"), and a pair sharing nothing rarer is not a near-duplicate.
MAX_POSTINGS = 32
# Share of the shared Chinese characters that must come in the same order (measured on the tuning
# split of the first public consolidation set: its PAWS-X swaps fell below it).
CJK_ORDER_AGREEMENT = 0.9

# Words that say the same thing for memory purposes (stems, see memory.text.tokenize.stem).
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
# "一名护士" is "a nurse": one followed by a classifier is an article, not a count.
_ONE_AS_ARTICLE = re.compile(r"一(?=[名个位只件家种条本座所])")
# Who it is about: "you" / "he" / "我" / "她" change the fact ("你是逗比吗" / "我是逗比吗").
_PRONOUN_EN = re.compile(r"\b(he|she|you|they|him|his|her|them|their)\b")
_PRONOUN_ZH = re.compile(r"[你您他她我]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
_NOT_NAMES = frozenset({"user", "the", "i"})
_NEGATION_EN = re.compile(r"\b(not|no|never|none|nothing|dislikes?|hates?|cannot|\w+n't)\b")
_NEGATION_ZH = re.compile(r"不|没|别|讨厌|从未")
# Chinese says when with words, not tense: "以前住在北京" is no longer true, "打算明年结婚" has not
# happened yet; either is another fact than the plain statement.
_WHEN_ZH = (("<past>", re.compile(r"以前|曾经|过去|原来|从前|当年")),
            ("<plan>", re.compile(r"打算|计划|准备|将要|想要|希望|以后|将来")))  # fmt: skip
_CJK = re.compile(rf"[{CJK_CLASS}]")


@dataclass(frozen=True)
class Fingerprint:
    """What the comparison needs of one memory's text."""

    tokens: frozenset[str]  # canonical tokens (English stems, Chinese unigrams and bigrams)
    # The same without Chinese single characters: who holds whose words. Bigrams, not
    # characters, so that "爱吃鱼肉" does not hold "爱吃肉鱼" (same characters, other words).
    words: frozenset[str]
    markers: frozenset[str]  # numbers, dates, names, negation, when: must be equal to merge
    # Chinese characters in order: "湛江到广州" and "广州到湛江" hold the same characters.
    sequence: tuple[str, ...] = ()
    content: frozenset[str] = frozenset()  # Chinese content characters (chinese.content_units)


def canonical_text(text: str) -> str:
    """The text with Chinese synonyms unified and fillers dropped (English is done on tokens)."""
    for variant, canonical in _ZH_SAME_MEANING:
        text = text.replace(variant, canonical)
    return _ZH_DAY.sub(r"\1日", _ZH_FILLER.sub("", text))


def markers(text: str) -> frozenset[str]:
    """Numbers, month and weekday names, capitalised names (not the sentence's first word),
    Chinese numerals and negation: two memories that differ in any are distinct facts."""
    lowered, canonical = normalize(text), canonical_text(text)
    # A number keeps the Chinese unit after it: "4月9日" and "9月4日" are different dates.
    found = {number + unit for number, unit in _NUMBER.findall(normalize(canonical))}
    found.update(m[:3] for m in _MONTH_OR_DAY.findall(lowered))
    found.update(
        m.lower() for m in _CAPITALISED.findall(text.strip()) if m.lower() not in _NOT_NAMES
    )
    found.update(char for char in _ONE_AS_ARTICLE.sub("", text) if char in _CJK_NUMERALS)
    found.update(f"<{p}>" for p in _PRONOUN_EN.findall(lowered))
    found.update(f"<{p}>" for p in _PRONOUN_ZH.findall(canonical))
    if "用户" in text:  # "the user" is "I" in the user's own words, and not "he" or "you"
        found.add("<我>")
    if _NEGATION_EN.search(lowered) or _NEGATION_ZH.search(canonical):
        found.add("<not>")
    found.update(tag for tag, words in _WHEN_ZH if words.search(canonical))
    return frozenset(found)


def fingerprint(text: str) -> Fingerprint:
    tokens = set()
    canonical = canonical_text(text)
    for token in tokenize(canonical):
        token = _SAME_MEANING.get(token, token)
        if token not in _FILLER and token not in _SUBJECT:
            tokens.add(token)
    words = {t for t in tokens if not (len(t) == 1 and _CJK.match(t))}
    sequence = tuple(_CJK.findall(canonical))
    content = content_units(canonical) if sequence else frozenset()
    return Fingerprint(frozenset(tokens), frozenset(words), markers(text), sequence, content)


def same_order(a: Fingerprint, b: Fingerprint) -> bool:
    """Whether the Chinese characters both texts hold come in the same order (nearly): a swap
    of who does what to whom ("男人比女人" / "女人比男人") keeps the characters and changes the
    fact. English order is left alone: a passive says the same ("a steak is rinsed by a man")."""
    if not a.sequence or not b.sequence:
        return True
    shared = set(a.sequence) & set(b.sequence)
    first = [c for c in a.sequence if c in shared]
    second = [c for c in b.sequence if c in shared]
    if first == second:
        return True
    return _common_subsequence(first, second) >= CJK_ORDER_AGREEMENT * min(len(first), len(second))


def _common_subsequence(first: list[str], second: list[str]) -> int:
    previous = [0] * (len(second) + 1)
    for x in first:
        current = [0]
        for j, y in enumerate(second):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[-1]))
        previous = current
    return previous[-1]


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def swap(a: Fingerprint, b: Fingerprint) -> tuple[str, str] | None:
    """The one word each side has and the other lacks, when that is all that differs."""
    only_a, only_b = a.tokens - b.tokens, b.tokens - a.tokens
    if len(only_a) == 1 and len(only_b) == 1:
        return min(*only_a, *only_b), max(*only_a, *only_b)
    return None


def compatible(a: Fingerprint, b: Fingerprint) -> bool:
    """The guards every merge passes: equal markers (numbers, dates, names, negation, who), not
    one learned contrast apart ("sitting" / "standing", "near" / "far"), Chinese in order."""
    return a.markers == b.markers and swap(a, b) not in LEARNED_CONTRASTS and same_order(a, b)


def same_fact(
    a: Fingerprint,
    b: Fingerprint,
    contained: float = CONTAINED_JACCARD,
    swapped: float = SWAPPED_JACCARD,
) -> bool:
    """Whether two memories say the same thing by their words: the guards, then similar enough
    tokens. A learned synonym swap ("kid" / "child") counts as holding the other's words."""
    if a.markers != b.markers:  # the cheap test first: most candidate pairs stop here
        return False
    holds = a.words <= b.words or b.words <= a.words or swap(a, b) in LEARNED_SYNONYMS
    return jaccard(a.tokens, b.tokens) >= (contained if holds else swapped) and compatible(a, b)


def same_by_meaning(a: Fingerprint, b: Fingerprint, cosine: float, language: str) -> bool:
    """Whether a near pair by meaning (cosine of the embedding model) is one fact without a
    model: close enough for its language, the guards, and a word in common (the lexical check:
    the model alone never merges two texts that share nothing). Chinese has its own reading
    (chinese.same_by_meaning_zh): which content characters each side lacks decides."""
    if language == "zh":
        return swap(a, b) not in LEARNED_CONTRASTS and same_by_meaning_zh(
            a.content, b.content, a.markers, b.markers, cosine, same_order(a, b)
        )
    return (
        cosine >= SEMANTIC_SAME.get(language, max(SEMANTIC_SAME.values()))
        and compatible(a, b)
        and bool(a.tokens & b.tokens)
    )


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


def _worth_asking(a: Fingerprint, b: Fingerprint, language: str) -> bool:
    """A borderline pair the model is asked about: one the guards and the lexical check let by
    (Chinese: its own reading of the markers, chinese.markers_agree)."""
    if language == "zh":
        agree = markers_agree(a.markers, b.markers) and swap(a, b) not in LEARNED_CONTRASTS
        return agree and bool(a.content & b.content)
    return compatible(a, b) and bool(a.tokens & b.tokens)


def duplicate_groups(
    texts: Mapping[str, str],
    contained: float = CONTAINED_JACCARD,
    swapped: float = SWAPPED_JACCARD,
    *,
    vectors: Vectors | None = None,
    llm: Any | None = None,
) -> list[list[str]]:
    """Groups (two or more ids, in `texts` order) of memories saying the same thing: pairs by
    their words, and with `vectors` (unit rows in `texts` order, `semantic.embed`) pairs by
    meaning; with `llm` the model confirms the borderline ones (at most MAX_MODEL_CHECKS), in
    each language where it tells plainly different facts apart (semantic.model_tells_apart)."""
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
    if vectors is not None and len(vectors) == len(texts):
        ids = list(texts)
        languages = [language_of(texts[i]) for i in ids]
        near = pairs_by_language(ids, languages, vectors)
        checks = 0
        trusted: dict[str, bool] = {}  # per language, asked before its first borderline pair
        for (first, second), cosine in sorted(near.items(), key=lambda pair: -pair[1]):
            a, b = prints[first], prints[second]
            if root(first) == root(second):
                continue
            language = language_of(texts[first])
            if same_by_meaning(a, b, cosine, language):
                parent[root(second)] = root(first)
            elif llm is not None and checks < MAX_MODEL_CHECKS and _worth_asking(a, b, language):
                if language not in trusted:
                    trusted[language] = model_tells_apart(llm, language)
                if not trusted[language]:
                    continue
                checks += 1
                if model_says_same(llm, texts[first], texts[second]):
                    parent[root(second)] = root(first)
    groups: dict[str, list[str]] = defaultdict(list)
    for memory_id in texts:
        groups[root(memory_id)].append(memory_id)
    return [members for members in groups.values() if len(members) > 1]
