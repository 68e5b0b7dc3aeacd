"""The offline model's rules for the common facts of a chat (job, family, home, pets, likes)."""

from __future__ import annotations

import re

from memory.integration.app_text import current_app_text
from memory.prompts.writer import SectionKind

PROFILE: SectionKind = "profile"
PREFERENCE: SectionKind = "preference"

# What a captured fact runs to: the end of its clause (offline_rules.py's rules read it too).
CLAUSE_END = r"[^.!?,;。！？，；、\n]"
_I_AM = r"I(?: am|'m|’m| m)"  # "i m": how some people (and Persona-Chat) type it
_I_HAVE = r"I(?: have|'ve|’ve| ve)(?: got)?"
# A verb and its object after a negation, talk ("I don't know what …") left out.
_DOING = (
    r"(?!know\b|think\b|mind\b|care\b|understand\b|remember\b|get\b|see\b)"
    rf"([a-z]+) ({CLAUSE_END}{{3,}})"
)
# Checked before the generic "I am …" / "我是…" rules, most specific first. \b and ASCII
# classes keep the English rules off Chinese text.
ENGLISH_RULES: list[tuple[re.Pattern[str], str, SectionKind]] = [
    (re.compile(rf"\bI work (?:as|in) ({CLAUSE_END}+)", re.I), "User works as {0}", PROFILE),
    (
        re.compile(
            rf"\bI(?: do not|'m not|’m not| don't| don’t) (?:like|enjoy) ({CLAUSE_END}+)", re.I
        ),
        "User does not like {0}",
        PREFERENCE,
    ),
    (
        re.compile(rf"\bI (?:hate|dislike|can't stand) ({CLAUSE_END}+)", re.I),
        "User dislikes {0}",
        PREFERENCE,
    ),
    (re.compile(rf"\bI prefer ({CLAUSE_END}+)", re.I), "User prefers {0}", PREFERENCE),
    (
        re.compile(rf"\b({CLAUSE_END}+?) (?:is|are) my favou?rite ({CLAUSE_END}+)", re.I),
        "User's favourite {1} is {0}",
        PREFERENCE,
    ),
    (
        re.compile(rf"\bI (?:grew up|was raised) in ({CLAUSE_END}+)", re.I),
        "User grew up in {0}",
        PROFILE,
    ),
    (re.compile(rf"\bI was born in ({CLAUSE_END}+)", re.I), "User was born in {0}", PROFILE),
    (
        re.compile(rf"\b{_I_AM} allergic to ({CLAUSE_END}+)", re.I),
        "User is allergic to {0}",
        PROFILE,
    ),
    (
        re.compile(rf"\b{_I_HAVE} (?!to\b|been\b|no idea\b|a question\b)({CLAUSE_END}+)", re.I),
        "User has {0}",
        PROFILE,
    ),
    (re.compile(rf"\bI own ({CLAUSE_END}+)", re.I), "User owns {0}", PROFILE),
    (
        re.compile(
            rf"\bmy ([a-z][a-z' ]{{0,30}}?) (was|were|has|had|passed away|[a-z]+ed|"
            rf"(?!is\b)[a-z]+s) ({CLAUSE_END}+)",
            re.I,
        ),
        "User's {0} {1} {2}",
        PROFILE,
    ),
    (
        re.compile(rf"\bI(?: do not| don't| don’t) {_DOING}", re.I),
        "User does not {0} {1}",
        PROFILE,
    ),
    (
        re.compile(rf"\bI(?: did not| didn't| didn’t) {_DOING}", re.I),
        "User did not {0} {1}",
        PROFILE,
    ),
    (re.compile(rf"\b{_I_AM} ({CLAUSE_END}+)", re.I), "User is {0}", PROFILE),
]
CHINESE_RULES: list[tuple[re.Pattern[str], str, SectionKind]] = [
    (re.compile(rf"我在({CLAUSE_END}{{1,20}}?)(?:工作|上班)"), "用户在{0}工作", PROFILE),
    (re.compile(rf"我(?:从事|做)({CLAUSE_END}+?)(?:工作|行业|业务)"), "用户从事{0}工作", PROFILE),
    (re.compile(rf"我不喜欢({CLAUSE_END}+)"), "用户不喜欢{0}", PREFERENCE),
    (re.compile(rf"我(?:讨厌|不爱)({CLAUSE_END}+)"), "用户讨厌{0}", PREFERENCE),
    (
        re.compile(rf"我最喜欢的({CLAUSE_END}{{1,12}}?)是({CLAUSE_END}+)"),
        "用户最喜欢的{0}是{1}",
        PREFERENCE,
    ),
    (re.compile(rf"({CLAUSE_END}+?)是我的最爱"), "用户最爱{0}", PREFERENCE),
    (re.compile(rf"我(?:最喜欢|热爱|爱)({CLAUSE_END}+)"), "用户喜欢{0}", PREFERENCE),
    (
        re.compile(rf"({CLAUSE_END}+?)是我(?:最喜欢|最爱)的({CLAUSE_END}+)"),
        "用户最喜欢的{1}是{0}",
        PREFERENCE,
    ),
    (re.compile(rf"({CLAUSE_END}+?)是我的首选({CLAUSE_END}+)"), "用户最喜欢的{1}是{0}", PREFERENCE),
    (re.compile(rf"我(?:有|养了|养着|养)({CLAUSE_END}+)"), "用户有{0}", PROFILE),
    (re.compile(rf"我(?:出生在|出生于)({CLAUSE_END}+)"), "用户出生在{0}", PROFILE),
    (re.compile(rf"我在({CLAUSE_END}+?)长大"), "用户在{0}长大", PROFILE),
    (re.compile(rf"我(今年{CLAUSE_END}+)"), "用户{0}", PROFILE),
]

# The catch-all after every rule: a clause where the user says what they do ("I exercise
# every day", "我每天走三英里") is filed in the third person. Verbs of talk, not of life, are
# left out: "I think so", "I see", "我觉得".
_TALK_VERBS = (
    "think guess see know mean hope wonder agree understand bet suppose believe would will can "
    "could should might must did do does was were am is are just also really have had got get "
    "hear heard said say told tell feel felt need needed"
)
_NOT_FACTS = frozenset(_TALK_VERBS.split())
_ENGLISH_CLAUSE = re.compile(
    r"^(?:\w+ )?I ((?:always |usually |often |also |still |currently |really |just |never )?"
    r"([a-z]+)) (" + CLAUSE_END + r"{3,})$",
    re.I,
)
_PAST_FORMS = (
    "got went made grew bought took began came met left lost won ran wrote drove spent sold "
    "built became found knew saw taught fell broke gave began sang swam flew"
)
_PAST = frozenset(_PAST_FORMS.split())
_CHINESE_CLAUSE = re.compile(rf"^我({CLAUSE_END}{{2,}})$")
_CHINESE_NOT_FACTS = (
    "觉得",
    "想想",
    "认为",
    "知道",
    "不知道",
    "猜",
    "看看",
    "也是",
    "明白",
    "同意",
    "说",
    "问",
    "们",
)


def third_person(verb: str) -> str:
    """The verb after "User": "eat" → "eats", "watch" → "watches", "study" → "studies"; a past
    form ("moved", "got") as it is."""
    lower = verb.lower()
    if lower.endswith("ed") or lower in _PAST:
        return verb
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    if re.search(r"(?:s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    return verb + "s"


def common_fact(clause: str, language: str) -> tuple[str, str, str] | None:
    """(description, section, key) for a first-person clause no rule matched, or None."""
    clause = clause.strip(" .。!！")
    if language == "zh":
        match = _CHINESE_CLAUSE.match(clause)
        if not match or match.group(1).startswith(_CHINESE_NOT_FACTS):
            return None
        said = re.sub("(?:用户)+", "用户", match.group(1).replace("我", "用户"))
        return "用户" + said, current_app_text().section_name(PROFILE, "zh"), ""
    match = _ENGLISH_CLAUSE.match(clause)
    if not match or match.group(2).lower() in _NOT_FACTS:
        return None
    words = match.group(1).split()
    words[-1] = third_person(words[-1])
    rest = re.sub(r"\b(?:I|i)\b", "they", match.group(3))
    return f"User {' '.join(words)} {rest}", current_app_text().section_name(PROFILE, "en"), ""
