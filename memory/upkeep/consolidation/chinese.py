"""Chinese pairs by meaning: which of two near texts' content characters each lacks, and the
guards read the way Chinese writes (subjects and glossed names left out, 一 as an article)."""

from __future__ import annotations

import re

from memory.text.language import CJK_CLASS

# Measured with bench/consolidation.py on the tuning split of the public consolidation set
# (Chinese STS-B pairs and XPersona persona sentences, the offline multilingual model). A pair
# where one side's content characters are all in the other (an added "一只", "已经", a place)
# is the same statement from ZH_HOLDS_SAME: traps of that shape are rare. A pair where each
# side has content of its own is a rewording, or another fact with a word swapped ("男人" /
# "女人", "领涨" / "暴跌": such traps reach a cosine of 0.91): a swap of at most ZH_MINIMAL_SWAP
# characters a side merges from ZH_SWAP_SAME, a longer rewording from ZH_REWORDED_SAME, or from
# ZH_HOLDS_SAME when ZH_MOSTLY_SHARED of the content units are shared (traps reach 0.64).
ZH_HOLDS_SAME = 0.80
ZH_SWAP_SAME = 0.93
ZH_REWORDED_SAME = 0.88
ZH_MINIMAL_SWAP = 2
ZH_MOSTLY_SHARED = 0.7
# Characters that carry grammar, not the fact: particles, aspect, common classifiers, "一" (an
# article before a classifier), "很". Pronouns are left to the markers (who it is about).
_FUNCTION = frozenset("的了在是着正个位名只辆条张些吗呢吧啊呀很都也就又还已经一我你您他她它们")
_CONTENT = re.compile(rf"[{CJK_CLASS}]|[a-z0-9]+")
# Numbers keep only a date or time unit ("4月" is not "4日"); "10人" and "十" are one count.
_DATE_UNIT = re.compile(r"^\d+[年月日号时点分]$")
_HARD_TAGS = frozenset({"<not>", "<past>", "<plan>"})  # negation, and when (similarity.markers)
_NUMERALS = {"二": "2", "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7",
             "八": "8", "九": "9", "十": "10"}  # fmt: skip


def content_units(text: str) -> frozenset[str]:
    """Chinese content characters and Latin or digit words of `text`, lower-cased."""
    return frozenset(u for u in _CONTENT.findall(text.lower()) if u not in _FUNCTION)


def _is_soft(marker: str) -> bool:
    """Pronouns and names in Latin letters: Chinese leaves the subject out ("持枪歹徒包围外交部"
    / "…他们的要求") and glosses a name once ("魏瑟伯格(CharlesWeisselberg)"), so one side may
    lack them; two sides that both have them must agree."""
    if marker.startswith("<"):
        return marker not in _HARD_TAGS
    return marker.isascii() and marker[:1].isalpha()


def _hard(markers: frozenset[str]) -> frozenset[str]:
    """Numbers, dates, negation and when ("以前", "打算"): must be equal. "一" is left out (an
    article: the other side's numeral, if any, still differs)."""
    found = set()
    for marker in markers:
        if marker == "一" or _is_soft(marker):
            continue
        if marker[:1].isdigit() and not _DATE_UNIT.match(marker):
            marker = re.sub(r"\D+$", "", marker)
        found.add(_NUMERALS.get(marker, marker))
    return frozenset(found)


def markers_agree(first: frozenset[str], second: frozenset[str]) -> bool:
    """Equal numbers, dates, negation and when; pronouns and Latin names equal or missing."""
    soft_first = frozenset(m for m in first if _is_soft(m))
    soft_second = frozenset(m for m in second if _is_soft(m))
    return _hard(first) == _hard(second) and (
        soft_first <= soft_second or soft_second <= soft_first
    )


def same_by_meaning_zh(
    first: frozenset[str],
    second: frozenset[str],
    first_markers: frozenset[str],
    second_markers: frozenset[str],
    cosine: float,
    in_order: bool,
) -> bool:
    """Whether two near Chinese texts (content units, markers, cosine, whether their shared
    characters come in the same order) state one fact."""
    if not markers_agree(first_markers, second_markers) or not first & second:
        return False
    only_first, only_second = first - second, second - first
    if not only_first and not only_second and not in_order:
        return False  # the same words reordered: who goes where ("湛江到广州" / "广州到湛江")
    if not only_first or not only_second:
        return cosine >= ZH_HOLDS_SAME
    if max(len(only_first), len(only_second)) <= ZH_MINIMAL_SWAP:
        return cosine >= ZH_SWAP_SAME
    shared = len(first & second) / len(first | second)
    return cosine >= (ZH_HOLDS_SAME if shared >= ZH_MOSTLY_SHARED else ZH_REWORDED_SAME)
