"""Rule-based entities of a text, English and Chinese: people, places, organisations and dates.

Long because each kind of entity has its English and its Chinese rules side by side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memory.text import entity_lexicon as lexicon

PERSON, PLACE, ORGANISATION, DATE, SUBJECT = "person", "place", "organisation", "date", "subject"
KINDS = (PERSON, PLACE, ORGANISATION, DATE, SUBJECT)


@dataclass(frozen=True)
class Entity:
    """One thing a text is about. `key` ("person:mother", "place:tokyo") is the same for every
    alias in either language; `name` and `name_zh` are what a page shows; `surface` is the text
    that was matched."""

    key: str
    kind: str
    name: str
    name_zh: str = ""
    surface: str = ""


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    entity: Entity


_HAN = "\u4e00-\u9fff"
_POSSESSIVE = re.compile(r"(?:\b(?:my|our|his|her|their|user's|the user's)\s+)$", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][\w'-]*")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?\b")
# Characters after which a Chinese name cannot go on to the left: where "我妈在招商银行" is cut to
# "招商银行" and "她在一家公司" to nothing.
_ZH_BOUNDARY = set("我你他她它们在去到是的了和与从于给跟进读念考住搬飞往回要想会就都也还把被让个家")
_ZH_NAMED = re.compile(
    rf"(?:[小老阿][{lexicon.SURNAMES_ZH}])|(?:[{lexicon.SURNAMES_ZH}](?:先生|女士|老师|阿姨|叔叔|总|医生))"
)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")  # fmt: skip
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"  # noqa: E501
_DATE_EN = re.compile(
    rf"\b(?:(?P<iso>\d{{4}}-\d{{1,2}}-\d{{1,2}})|(?P<md>{_MONTH})\.?\s+(?P<md_day>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|(?P<dm_day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dm>{_MONTH})\b"
    r"|(?P<rel>tomorrow|next (?:week|month|year|weekend)|this weekend|"
    r"(?:next |this |on )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)))",
    re.IGNORECASE,
)
_DATE_ZH = re.compile(
    r"(?:(?P<year>\d{4})年)?(?P<month>\d{1,2})月(?P<day>\d{1,2})[日号]"
    r"|(?P<rel>[下上这本]?(?:周|星期|礼拜)[一二三四五六日天]|明天|后天|下周|下个月|明年|春节|国庆|中秋|元旦)"
)


@cache
def _alias_tables() -> tuple[dict[str, Entity], dict[str, Entity]]:
    """English (lower case) and Chinese alias → entity, for people, places and organisations."""
    english: dict[str, Entity] = {}
    chinese: dict[str, Entity] = {}
    people = {
        key: Entity(f"{PERSON}:{key}", PERSON, en, zh) for key, (en, zh) in lexicon.PEOPLE.items()
    }
    for alias, key in lexicon.PEOPLE_EN.items():
        english[alias] = people[key]
    for alias, key in lexicon.PEOPLE_ZH.items():
        chinese[alias] = people[key]
    for kind, table, variants in (
        (PLACE, lexicon.PLACES, lexicon.PLACE_VARIANTS),
        (ORGANISATION, lexicon.ORGANISATIONS, lexicon.ORGANISATION_VARIANTS),
    ):
        entities = {key: Entity(f"{kind}:{key}", kind, en, zh) for key, (en, zh) in table.items()}
        for key, entity in entities.items():
            english[key] = english[entity.name.lower()] = entity
            if re.search(f"[{_HAN}]", entity.name_zh):
                chinese[entity.name_zh] = entity
        for alias, key in variants.items():
            (chinese if re.search(f"[{_HAN}]", alias) else english)[alias] = entities[key]
    return english, chinese


_ENGLISH_TOKEN = re.compile(r"[A-Za-z]+(?:[.'’-][A-Za-z]+)*\.?")


def _english_alias_matches(text: str) -> list[tuple[int, int, str]]:
    """(start, end, surface) of every English alias in `text`, two-word names first ("New
    York" before "York"): a dictionary look-up per word, not a regex of every alias."""
    english, _ = _alias_tables()
    tokens = [(m.start(), m.end(), m.group()) for m in _ENGLISH_TOKEN.finditer(text)]
    found = []
    position = 0
    while position < len(tokens):
        start, end, word = tokens[position]
        if position + 1 < len(tokens) and text[end : tokens[position + 1][0]] == " ":
            pair = f"{word} {tokens[position + 1][2]}"
            if pair.lower() in english:
                found.append((start, tokens[position + 1][1], pair))
                position += 2
                continue
        for candidate in (word, word.rstrip("."), re.sub(r"['’]s$", "", word)):
            if candidate and candidate.lower() in english:
                found.append((start, start + len(candidate), candidate))
                break
        position += 1
    return found


@cache
def _chinese_pattern() -> re.Pattern[str]:
    _, chinese = _alias_tables()
    return re.compile("|".join(re.escape(n) for n in sorted(chinese, key=len, reverse=True)))


def _named(kind: str, surface: str) -> Entity:
    """An entity known only by its name in the text ("Tom", "Acme Inc", "招商银行")."""
    english, chinese = _alias_tables()
    known = chinese.get(surface) or english.get(surface.lower())
    if known is not None and known.kind == kind:
        return Entity(known.key, known.kind, known.name, known.name_zh, surface)
    slug = " ".join(surface.lower().split())
    zh = surface if re.search(f"[{_HAN}]", surface) else ""
    return Entity(f"{kind}:{slug}", kind, surface, zh, surface)


def _english_aliases(text: str, lenient: bool) -> list[_Span]:
    english, _ = _alias_tables()
    spans = []
    for match_start, match_end, surface in _english_alias_matches(text):
        entity = english[surface.lower()]
        if entity.kind != PERSON:
            # Places and organisations are capitalised in writing; short variants ("US",
            # "LA") must be written as such, so "us" and "la" stay pronouns and notes.
            if len(surface) <= 3 and surface != surface.upper():
                continue
            if not lenient and not surface[0].isupper():
                continue
        start = match_start
        window = max(0, match_start - 24)  # the possessive is right before the word
        before = _POSSESSIVE.search(text[window:match_start])
        if entity.kind == PERSON and surface.lower() in lexicon.NEEDS_POSSESSIVE and not before:
            continue
        if entity.kind == PERSON and before:
            start = window + before.start()
        spans.append(_Span(start, match_end, _with_surface(entity, text[start:match_end])))
    return spans


def _with_surface(entity: Entity, surface: str) -> Entity:
    return Entity(entity.key, entity.kind, entity.name, entity.name_zh, surface)


def _capitalised_names(text: str, lenient: bool) -> list[_Span]:
    """People (and unknown places) written with a capital: "Alice", "my friend Tom", "in Hanoi"."""
    spans = []
    for match in _CAPITALISED.finditer(text):
        surface, start = match.group(), match.start()
        first = re.split(r"[ -]", surface)[0]
        if first.lower() in lexicon.PEOPLE_EN and surface != first:
            surface, start = surface[len(first) + 1 :], start + len(first) + 1  # "Sister Amy"
        elif first in lexicon.NOT_NAMES or first.lower() in lexicon.PEOPLE_EN:
            continue
        before = _WORD.findall(text[max(0, start - 40) : start])
        previous = before[-1].lower() if before else ""
        after = text[match.end() :]
        following = (_WORD.findall(after[:30]) or [""])[0].lower()
        sentence_start = not before or re.search(r"[.!?:;]\s*$", text[:start]) is not None
        if previous in ("in", "from") or (
            previous == "to" and len(before) > 1 and before[-2].lower() in lexicon.MOVE_WORDS
        ):
            spans.append(_Span(start, match.end(), _named(PLACE, surface)))
            continue
        possessed = after.startswith(("'s", "’s"))
        # "my roommate Jake": a kinship or role word names the person that follows.
        cued = previous in lexicon.PERSON_CUES or previous in lexicon.PEOPLE_EN
        cued = cued or previous in ("and", "told", "asked", "met")
        if sentence_start and not lenient and not (following in lexicon.NAME_VERBS or possessed):
            continue
        if lenient or cued or possessed or following in lexicon.NAME_VERBS:
            spans.append(_Span(start, match.end(), _named(PERSON, surface)))
    return spans


_TITLED = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|Professor|Uncle|Aunt|Auntie)\.? [A-Z][a-z]+\b")


def _titled_people(text: str) -> list[_Span]:
    """ "Dr Chen", "Aunt May": a title makes the next capitalised word a person."""
    return [_Span(m.start(), m.end(), _named(PERSON, m.group())) for m in _TITLED.finditer(text)]


def _organisations_en(text: str) -> list[_Span]:
    suffixes = "|".join(lexicon.ORGANISATION_SUFFIXES_EN)
    pattern = (
        rf"\b(?:[A-Z][\w&.-]*\s+){{1,3}}(?:{suffixes})\b\.?"
        r"|\b(?:Bank|University|Institute|College|Museum) of(?: [A-Z]\w+){1,2}"
    )
    spans = []
    for match in re.finditer(pattern, text):
        words = match.group().rstrip(".").split()
        while words and words[0] in lexicon.NOT_NAMES:
            words = words[1:]  # "The Acme Group" → "Acme Group"
        if len(words) < 2 or (words[0] in lexicon.ORGANISATION_SUFFIXES_EN and "of" not in words):
            continue
        surface = " ".join(words)
        start = match.start() + match.group().find(words[0])
        spans.append(_Span(start, match.end(), _named(ORGANISATION, surface)))
    return spans


def _cut_left(name: str) -> str:
    """The end of a Chinese run after the last character no name goes past (see _ZH_BOUNDARY)."""
    for position in range(len(name) - 1, -1, -1):
        if name[position] in _ZH_BOUNDARY:
            return name[position + 1 :]
    return name


def _chinese(text: str) -> list[_Span]:
    _, chinese = _alias_tables()
    spans = []
    for match in _chinese_pattern().finditer(text):
        alias = match.group()
        spans.append(_Span(match.start(), match.end(), _with_surface(chinese[alias], alias)))
    for kind, suffixes, shortest in (
        (ORGANISATION, lexicon.ORGANISATION_SUFFIXES_ZH, 2),
        (PLACE, lexicon.PLACE_SUFFIXES_ZH, 2),
    ):
        for match in re.finditer("|".join(suffixes), text):
            left = re.search(rf"[{_HAN}]{{0,8}}$", text[: match.start()])
            head = _cut_left(left.group() if left else "")
            if len(head) < shortest:
                continue
            surface = head + match.group()
            start = match.start() - len(head)
            known = chinese.get(surface) or (chinese.get(head) if kind == PLACE else None)
            entity = _with_surface(known, surface) if known else _named(kind, surface)
            spans.append(_Span(start, match.end(), entity))
    for match in _ZH_NAMED.finditer(text):
        spans.append(_Span(match.start(), match.end(), _named(PERSON, match.group())))
    return spans


def _dates(text: str) -> list[_Span]:
    spans = []
    for match in _DATE_EN.finditer(text):
        groups = match.groupdict()
        if groups["iso"]:
            year, month, day = (int(part) for part in groups["iso"].split("-"))
            slug = f"{year:04d}-{month:02d}-{day:02d}"
        elif groups["md"] or groups["dm"]:
            month = _month_number(groups["md"] or groups["dm"])
            slug = f"{month:02d}-{int(groups['md_day'] or groups['dm_day']):02d}"
        else:
            slug = " ".join(groups["rel"].lower().split())
        entity = Entity(f"{DATE}:{slug}", DATE, match.group(), "", match.group())
        spans.append(_Span(match.start(), match.end(), entity))
    for match in _DATE_ZH.finditer(text):
        groups = match.groupdict()
        if groups["month"]:
            slug = f"{int(groups['month']):02d}-{int(groups['day']):02d}"
            if groups["year"]:
                slug = f"{groups['year']}-{slug}"
        else:
            slug = groups["rel"]
        entity = Entity(f"{DATE}:{slug}", DATE, match.group(), match.group(), match.group())
        spans.append(_Span(match.start(), match.end(), entity))
    return spans


def _month_number(name: str) -> int:
    prefix = name.lower()[:3]
    return next(i for i, month in enumerate(_MONTHS, 1) if month.startswith(prefix))


# On equal spans, a gazetteer place or organisation beats a guessed person name.
_PRIORITY = {DATE: 0, ORGANISATION: 1, PLACE: 2, PERSON: 3}


def extract_entities(text: str, *, lenient: bool = False) -> list[Entity]:
    """The people, places, organisations and dates `text` names, in order, one per key.

    Longer matches win over the shorter ones inside them ("北京大学" is an organisation, not
    also the place "北京"). `lenient` is for short queries and names typed by a user: any
    capitalised word may be a name and known places match in lower case ("how is tom" is not
    lenient enough: lower-case names are resolved against known topics, see TopicTable).
    """
    if not isinstance(text, str) or not text.strip():
        return []
    candidates = [
        *_dates(text),
        *_organisations_en(text),
        *_titled_people(text),
        *_english_aliases(text, lenient),
        *_capitalised_names(text, lenient),
        *_chinese(text),
    ]
    candidates.sort(key=lambda s: (-(s.end - s.start), _PRIORITY[s.entity.kind], s.start))
    taken: list[_Span] = []
    for span in candidates:
        if all(span.end <= other.start or span.start >= other.end for other in taken):
            taken.append(span)
    taken.sort(key=lambda s: s.start)
    found: dict[str, Entity] = {}
    for span in taken:
        found.setdefault(span.entity.key, span.entity)
    return list(found.values())
