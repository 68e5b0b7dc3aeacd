"""A memory as the user said it: no number, date or name the turn lacks, in the user's language.

Checked after the model, on every create and update of both protocols (memory/writer/tools.py):
a small model turns "she turns seven next March" into "birthday 2027-03-07" (a day nobody said),
names a daughter nobody named, and writes an English turn's facts in Chinese. A refusal names the
detail, so the model can send the fact again as it was said (memory/writer/json_writer.py asks
once more).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.text.language import CJK_CLASS

# What a refusal starts with: json_writer asks the model again for these, as for a mistake.
INVENTED = "holds a detail the conversation does not"
WRONG_LANGUAGE = "is not in the language the user spoke"

_EN_NUMBERS = {
    word: value
    for value, word in enumerate([
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen", "twenty",
    ])
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
     "ninety": 90, "hundred": 100, "dozen": 12, "first": 1, "second": 2, "third": 3,
     "fourth": 4, "fifth": 5, "once": 1, "twice": 2, "couple": 2}  # fmt: skip
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_NUMBER = re.compile("[零〇一二两三四五六七八九十百]+")
_DIGITS = re.compile(r"\d+")
_EN_WORD = re.compile(r"[a-z]+")
# Words that let a writer work a date out from "now" (the prompt's current time): a day, a
# month or a year.
_DAY_CUES = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|weekend|days?|weeks?|this morning|this evening)\b"
    r"|今天|今晚|明天|后天|昨天|前天|周[一二三四五六日天末]|星期|礼拜|下周|上周|这周|本周|天后|天前",
    re.IGNORECASE,
)
_MONTH_CUES = re.compile(
    r"\b(month|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|spring|summer|autumn|fall|"
    r"winter)\b|个月|月份|[一二三四五六七八九十]+月|\d+月|春天|夏天|秋天|冬天",
    re.IGNORECASE,
)
_YEAR_CUES = re.compile(r"\b(year|years|birthday|anniversary)\b|年|岁|生日", re.IGNORECASE)
# Dates written out: 2027-03-07, 2027/3/7, 2027年3月7日, 3月7日, March 7(th), 7 March.
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE_PARTS = re.compile(
    r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*(?:[-/.月]\s*(?P<d>\d{1,2})\s*[日号]?)?"
    r"|(?P<m2>\d{1,2})\s*月\s*(?P<d2>\d{1,2})\s*[日号]"
    rf"|\b{_MONTH_NAME}\.?\s+(?P<d3>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|\b(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}\b",
    re.IGNORECASE,
)
_CJK = re.compile(f"[{CJK_CLASS}]")
_EVIDENCE = re.compile(r"[a-z0-9]{3,}|[\u4e00-\u9fff]+")
_NOT_EVIDENCE = frozenset(["the", "user", "user's", "users", "用户", "喜欢", "他的", "她的"])
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def numbers_in(text: str, *, lenient: bool = False) -> set[int]:
    """Every number `text` says, in digits, English words ("thirty-four") or Chinese numerals
    ("三十四"). `lenient` (for what was said) also counts each part of a number in words."""
    found = {int(run) for run in _DIGITS.findall(text) if len(run) <= 9}
    words = _EN_WORD.findall(text.lower())
    for index, word in enumerate(words):
        value = _EN_NUMBERS.get(word)
        if value is None:
            continue
        after = _EN_NUMBERS.get(words[index + 1], 10) if index + 1 < len(words) else 10
        if 20 <= value <= 90 and after < 10:  # "thirty-four", "thirty four"
            found.add(value + after)
            if not lenient:
                continue
        previous = _EN_NUMBERS.get(words[index - 1], 0) if index else 0
        if value < 10 and 20 <= previous <= 90 and not lenient:
            continue  # the "four" of "thirty-four"
        found.add(value)
    for run in _ZH_NUMBER.findall(text):
        value = _zh_value(run)
        if value is not None:
            found.add(value)
        if lenient:
            found |= {_ZH_DIGITS[char] for char in run if char in _ZH_DIGITS}
    return found


_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b|(\d{1,2})\s*[日号]", re.IGNORECASE)


def _zh_value(run: str) -> int | None:
    """The value of a Chinese numeral below 1000 ("十二" 12, "二十" 20, "三百五十" 350)."""
    total, current = 0, 0
    for char in run:
        if char in _ZH_DIGITS:
            current = _ZH_DIGITS[char]
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        elif char == "百":
            total += (current or 1) * 100
            current = 0
    return total + current


def date_numbers(text: str) -> tuple[set[int], set[int], set[int]]:
    """The (years, months, days) of the dates written out in `text`."""
    years: set[int] = set()
    months: set[int] = set()
    days: set[int] = set()
    for match in _DATE_PARTS.finditer(text):
        parts = match.groupdict()
        if parts["y"]:
            years.add(int(parts["y"]))
        for key, into in (("m", months), ("m2", months), ("d", days), ("d2", days),
                          ("d3", days), ("d4", days)):  # fmt: skip
            if parts[key]:
                into.add(int(parts[key]))
    return years, months, days


def invented_details(content: str, said: str, this_year: int | None = None) -> list[str]:
    """The numbers of `content` that `said` (the turn's words) does not hold. A date's parts are
    said when the turn names their scale in words a date is worked out from (with the prompt's
    current time, in `this_year`): "tomorrow" or a weekday gives a day, "next March" a month
    and its year, "next year" or "seven years ago" a year. A day of the month needs a day word
    or that day said as one ("the 7th", "7号"): "seven next March" holds no day."""
    heard = numbers_in(said, lenient=True)
    years, months, days = date_numbers(content)
    day_cue, month_cue = _DAY_CUES.search(said), _MONTH_CUES.search(said)
    said_days = date_numbers(said)[2] | {int(a or b) for a, b in _ORDINAL.findall(said)}
    allowed: set[int] = set()
    if day_cue or month_cue or _YEAR_CUES.search(said):
        allowed |= years
        if this_year is not None:  # "in March 2027" from "next March", 2019 "7 years ago"
            allowed |= {this_year + sign * n for n in heard | {0, 1} for sign in (1, -1)}
    if day_cue or month_cue:
        allowed |= months
    invented = set(numbers_in(content) - heard - allowed - days)
    invented |= {day for day in days if not day_cue and day not in said_days}
    return [str(number) for number in sorted(invented)]


# A name in English text: a capitalised word inside a sentence ("… named Sofia", "用户叫Daniela"),
# or one that opens it and owns something ("Sofia's school"); a sentence's first word is
# otherwise just capitalised ("Loves mango"). In Chinese, what follows the words that give a
# name ("用户的女儿叫小美"). Language names are how the writer says which language a fact was
# in, not details of the user.
_CAPITALISED = re.compile(r"(?<![A-Za-z'])[A-Z][a-z]+(?:'s)?(?![A-Za-z])")
_SENTENCE_END = re.compile(r"(?:^|[.!?。！？:;\n])\s*[\"'“(]?$")
_NOT_NAMES = frozenset(["user", "english", "chinese", "mandarin"])
_ZH_NAMED = re.compile(r"(?:名叫|叫做|名字是|名字叫|叫)([\u4e00-\u9fff]{2})")


def invented_names(content: str, said: str) -> list[str]:
    """The names in `content` that `said` does not hold (case aside)."""
    heard = set(_EN_WORD.findall(said.lower()))
    invented: list[str] = []
    for match in _CAPITALISED.finditer(content):
        word = match.group()
        possessive = word.endswith("'s")
        name = word.removesuffix("'s")
        opens_sentence = bool(_SENTENCE_END.search(content[: match.start()]))
        if (opens_sentence and not possessive) or name.lower() in _NOT_NAMES:
            continue
        if _DAY_CUES.fullmatch(name) or _MONTH_CUES.fullmatch(name):
            continue  # a day or month worked out from "tomorrow": the date check's concern
        if name.lower() not in heard and name not in invented:
            invented.append(name)
    for name in _ZH_NAMED.findall(content):
        if name not in said and name not in invented:
            invented.append(name)
    return invented


def evidence_words(text: str) -> set[str]:
    """What ties a memory to what was said: Latin words of three letters or more, and every
    pair of adjacent CJK characters (overlapping: "用户叫王芳" holds "王芳" as "我叫王芳" does),
    without the words every memory has ("user", "用户")."""
    found: set[str] = set()
    for run in _EVIDENCE.findall(text.lower()):
        if run.isascii():
            found.add(run)
        else:
            found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found - _NOT_EVIDENCE


def main_language(text: str) -> str:
    """ "zh" when `text` is mostly Chinese (at least as many CJK characters as Latin words),
    else "en": "用户叫Daniela Ortiz" is Chinese, "likes 芒果 (mango) a lot" English."""
    cjk = len(_CJK.findall(text))
    return "zh" if cjk and cjk >= len(_LATIN_WORD.findall(text)) else "en"


def expected_languages(content: str, messages: Sequence[str], policy: str) -> set[str]:
    """The languages `content` may be in: the forced one (`policy` "en" or "zh"), else that of
    each user message it shares a word with (when it shares none, those of the messages in
    other languages than its own): a fact the user said in English is written in English even
    in a batch with a Chinese message, and the other way round."""
    if policy in ("en", "zh"):
        return {policy}
    words = evidence_words(content)
    sources = [m for m in messages if words & evidence_words(m)]
    if sources:
        return {main_language(message) for message in sources}
    # A word in common with none: not drawn from the messages in its own language, so a
    # translation of one in another ("The user's favorite fruit is mango." of 我最喜欢的水果是
    # 芒果。 in an English batch), or invented, which the grounding check refuses.
    spoken = {main_language(message) for message in messages}
    return spoken - {main_language(content)} or spoken


def language_problem(content: str, messages: Sequence[str], policy: str = "auto") -> str | None:
    """Why `content` is not in the language the user said it in (the turn's user `messages`,
    its language setting `policy`), or None."""
    if not messages and policy == "auto":
        return None
    languages = expected_languages(content, messages, policy)
    if main_language(content) in languages:
        return None
    name = "Chinese" if "zh" in languages else "English"
    return f"the text {WRONG_LANGUAGE} ({name}): write the fact in {name}, as they said it"


def unfaithful(
    content: str,
    said: str,
    messages: Sequence[str] = (),
    policy: str = "auto",
    this_year: int | None = None,
    remembered: str = "",
) -> str | None:
    """Why `content` may not be stored as a memory of a turn whose words are `said` (the user's
    `messages` among them, in the turn's language `policy`), or None when it may. A name the
    user's other memories hold (`remembered`) was said before: it may be repeated."""
    invented = invented_details(content, said, this_year) + invented_names(
        content, f"{said}\n{remembered}"
    )
    if invented:
        return (
            f"the text {INVENTED} say ({', '.join(invented)}): write only what the user said, "
            "in their words (no date, number or name they did not give)"
        )
    return language_problem(content, messages, policy)
