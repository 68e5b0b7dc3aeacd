"""The offline model's rules: first-person facts, one-valued facts and requests to forget."""

from __future__ import annotations

import re
from typing import NamedTuple

from memory.integration.app_text import current_app_text
from memory.integration.models import offline_facts
from memory.integration.models.offline_facts import CLAUSE_END, PREFERENCE, PROFILE
from memory.integration.models.offline_plans import plan_of
from memory.prompts.writer import SectionKind
from memory.text.instructions import is_standing_instruction
from memory.text.language import has_cjk
from memory.text.statement_kinds import topics_of

# Each rule names the kind of fact it finds; the section is the first of that kind among the
# app's sections (AppText), so offline memories land where a real model would put them.
TASK: SectionKind = "task"
INSTRUCTION: SectionKind = "instruction"
# A standing instruction is kept in the user's words, named as theirs (en, zh).
_INSTRUCTION_TEMPLATES = {"en": "User's instruction: {0}", "zh": "用户的要求：{0}"}

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；;\n])\s*")
_CLAUSE_SPLIT = re.compile(r"[,;，；]\s*|\s+(?:and|but)\s+(?=(?:I|my)\b)", re.I)
# (pattern, template, theme); \b and ASCII classes keep English rules off Chinese text.
_ENGLISH_RULES: list[tuple[re.Pattern[str], str, SectionKind]] = [
    (
        re.compile(rf"\bmy ([a-z][a-z' ]{{0,40}}?) (?:is|are) ({CLAUSE_END}+)", re.I),
        "User's {0} is {1}",
        PROFILE,
    ),
    (re.compile(rf"\bI live in ({CLAUSE_END}+)", re.I), "User lives in {0}", PROFILE),
    (
        re.compile(rf"\bI work (?:at|for) ({CLAUSE_END}+)", re.I),
        "User works at {0}",
        PROFILE,
    ),
    (
        re.compile(rf"\bI (?:like|love|enjoy) ({CLAUSE_END}+)", re.I),
        "User likes {0}",
        PREFERENCE,
    ),
    (re.compile(rf"\bI(?: am|'m) ({CLAUSE_END}+)", re.I), "User is {0}", PROFILE),
]
_CHINESE_RULES: list[tuple[re.Pattern[str], str, SectionKind]] = [
    (
        re.compile(rf"我的({CLAUSE_END}{{1,12}}?)是({CLAUSE_END}+)"),
        "用户的{0}是{1}",
        PROFILE,
    ),
    (re.compile(rf"我叫({CLAUSE_END}+)"), "用户叫{0}", PROFILE),
    (re.compile(rf"我住在({CLAUSE_END}+)"), "用户住在{0}", PROFILE),
    (re.compile(rf"我喜欢({CLAUSE_END}+)"), "用户喜欢{0}", PREFERENCE),
    (re.compile(rf"我是({CLAUSE_END}+)"), "用户是{0}", PROFILE),
]
# The common facts of a chat (job, family, home, pets, likes), before the generic "I am …" and
# "我是…" (the last rule of each list).
_ENGLISH_RULES[-1:-1] = offline_facts.ENGLISH_RULES[:-1]
_CHINESE_RULES[-1:-1] = offline_facts.CHINESE_RULES
# The scope rule of the memory writer's prompt, by keyword: a sentence about this conversation's
# task is remembered for this branch only; everything else the user says about themselves is
# remembered for every conversation.
_TASK_MARKER = re.compile(
    r"\blet(?:'s| us)\b|\bwe(?: are|'re) working on\b|\bthis task\b|\bfor this conversation\b"
    r"|这次|这个任务|我们在做",
    re.I,
)
_TASK_RULES: list[tuple[re.Pattern[str], str, SectionKind]] = [
    (re.compile(rf"\blet(?:'s| us) ({CLAUSE_END}+)", re.I), "Current task: {0}", TASK),
    (
        re.compile(rf"\bwe(?: are|'re) working on ({CLAUSE_END}+)", re.I),
        "Current task: {0}",
        TASK,
    ),
    (re.compile(rf"\bthis task is ({CLAUSE_END}+)", re.I), "Current task: {0}", TASK),
    (
        re.compile(rf"\bfor this conversation,?\s*({CLAUSE_END}+)", re.I),
        "For this conversation: {0}",
        TASK,
    ),
    (re.compile(rf"这个任务是?({CLAUSE_END}+)"), "当前任务：{0}", TASK),
    (re.compile(rf"我们在做({CLAUSE_END}+)"), "当前任务：做{0}", TASK),
    (re.compile(rf"这次({CLAUSE_END}+)"), "本次对话：{0}", TASK),
]
# Facts that hold one value at a time: a new one replaces the old ("User lives in …").
_SINGLE_VALUED = frozenset(
    {
        "User's {0} is {1}",
        "User lives in {0}",
        "User works at {0}",
        "用户的{0}是{1}",
        "用户叫{0}",
        "用户住在{0}",
    }
)
_FORGET = re.compile(
    r"\bforget\b(?:\s+(?:about|that))?\s*(.*)|(?:忘掉|忘记|别记着)(.*)", re.I | re.S
)
_STOP_WORDS = frozenset(
    {"a", "an", "the", "my", "me", "i", "i'm", "im", "is", "are", "was", "about", "that"}
    | {"what", "where", "who", "please", "and", "of", "to", "in", "at", "do", "does", "user"}
    | {"user's", "you", "it", "this", "now"}
)


def extract_memories(text: str) -> list[tuple[str, str, str]]:
    """What to remember from `text` as (description, theme, scope); questions are skipped.

    First-person facts are "user" scope; a sentence about this conversation's task ("let's …",
    "we are working on …", "这次…", "这个任务…", "我们在做…") gives "branch" scope memories.
    """
    return [(fact.description, fact.theme, fact.scope) for fact in extract_facts_with_keys(text)]


class Fact(NamedTuple):
    """One rule's finding; `key` is the start shared by every value of a one-valued fact
    ("User lives in "), empty for facts that can hold many values ("User likes …")."""

    description: str
    theme: str
    scope: str
    key: str


def extract_facts_with_keys(text: str) -> list[Fact]:
    """`extract_memories` with each fact's key; sentences asking to forget give no fact."""
    facts: list[Fact] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")) or _FORGET.search(sentence):
            continue
        if is_standing_instruction(sentence):  # how to answer them: one memory, every reply
            facts.append(_instruction(sentence))
            continue
        scope = "branch" if _TASK_MARKER.search(sentence) else "user"
        for clause in _CLAUSE_SPLIT.split(sentence):
            if is_standing_instruction(clause):  # "My name is Zhang San, call me Xiao Zhang"
                facts.append(_instruction(clause))
                continue
            chinese = has_cjk(clause)
            rules = _CHINESE_RULES if chinese else _ENGLISH_RULES
            language = "zh" if chinese else "en"
            fact = (
                _first_match(clause, rules, language)
                or _first_match(clause, _TASK_RULES, language)
                or offline_facts.common_fact(clause, language)
            )
            if fact is not None:
                facts.append(Fact(fact[0], fact[1], scope, fact[2]))
        plan = plan_of(sentence)  # a plan on a day: a whole sentence, kept as said
        if plan is not None:
            facts = [fact for fact in facts if fact.description != plan[0]]
            facts.append(Fact(plan[0], plan[1], scope, ""))
    return list(dict.fromkeys(facts))


def _instruction(sentence: str) -> Fact:
    language = "zh" if has_cjk(sentence) else "en"
    text = _INSTRUCTION_TEMPLATES[language].format(sentence.rstrip(" .。!！"))
    return Fact(text, current_app_text().section_name(INSTRUCTION, language), "user", "")


def forget_requests(text: str) -> list[str]:
    """What the user asked to forget ("forget where I live" → "where I live", "忘掉我住哪" →
    "我住哪"), one per sentence."""
    topics = []
    for sentence in _SENTENCE_SPLIT.split(text):
        match = _FORGET.search(sentence.strip())
        if match:
            topic = (match.group(1) or match.group(2) or "").strip(" .。!！")
            if topic:
                topics.append(topic)
    return topics


def _topic_terms(text: str) -> set[str]:
    """Word stems (first four letters, stop words left out) and Chinese character pairs."""
    words = {w[:4] for w in re.findall(r"[a-z']+", text.lower()) if w not in _STOP_WORDS}
    chinese = "".join(re.findall(r"[\u4e00-\u9fff]", text)).replace("用户", "").replace("我", "")
    return words | {chinese[i : i + 2] for i in range(len(chinese) - 1)}


def best_matches(topic: str, listed: dict[int, str]) -> list[int]:
    """The listed memories sharing the most terms and kinds of statement (`topics_of`: "where I
    live" names "User's address is …") with `topic` (none when nothing is shared)."""
    wanted, kinds = _topic_terms(topic), topics_of(topic)
    scores = {
        mid: len(wanted & _topic_terms(text)) + len(kinds & topics_of(text))
        for mid, text in listed.items()
    }
    top = max(scores.values(), default=0)
    return [mid for mid, score in scores.items() if score == top] if top else []


def extract_facts(text: str) -> list[tuple[str, str]]:
    """`extract_memories` without the scope: (description, theme)."""
    return [(description, theme) for description, theme, _ in extract_memories(text)]


def _first_match(
    clause: str, rules: list[tuple[re.Pattern[str], str, SectionKind]], language: str
) -> tuple[str, str, str] | None:
    """One fact per clause: the first (most specific) rule that matches wins; its section is
    the first of the rule's kind in `language`."""
    for pattern, template, kind in rules:
        match = pattern.search(clause)
        if match:
            parts = [part.strip(" '\"") for part in match.groups()]
            if not all(parts):
                return None
            key = ""
            if template in _SINGLE_VALUED:
                key = template.rsplit("{", 1)[0].format(*parts[:-1])
            return template.format(*parts), current_app_text().section_name(kind, language), key
    return None
