"""Reading a query before BM25 and the embedding: broad requests ("最近怎么样", "what's new"), time
cues, and a question about the user as the statement that answers it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.retrieval.date_cue import dates_in, iso_days
from memory.text.language import has_cjk, latin_words, word_count
from memory.text.preferences import asks_recommendation
from memory.text.tokenize import normalize, tokenize

# What makes a query broad: asking for "anything recent" rather than for a topic.
_BROAD_CUES_ZH = ("最近", "近来", "近期", "近况", "这几天", "这阵子", "这段时间", "新鲜事",
                  "有什么新", "有啥新", "忙什么", "忙啥", "动态", "最新",
                  "记得", "知道")  # fmt: skip
_BROAD_CUES_EN = frozenset(
    tokenize(
        "recent recently lately latest new news update updates happening nowadays up "
        "remember know memory memories everything"
    )
)
# Filler that may surround a cue ("最近怎么样", "what's been happening lately?"). Chinese phrases
# are removed from the text before tokenizing (bigrams would otherwise leave fragments like "怎么").
_FILLER_ZH = (*_BROAD_CUES_ZH, "怎么样", "如何", "在忙", "有什么", "什么", "发生", "一下", "告诉",
              "说说", "聊聊", "情况")  # fmt: skip
_FILLER_EN = _BROAD_CUES_EN | frozenset(
    tokenize("happened going on anything something doing been these days tell about what's how's")
)
# Questions about the user as a whole ("who am I?", "我是谁"): every memory is about them, so
# they get the broad order. Removed from the text before the content check, like the filler.
_ABOUT_ME_ZH = ("我是谁", "关于我", "我的情况", "我自己", "了解我")
_ABOUT_ME_EN = re.compile(r"\b(who am i|who i am|about me|about myself|myself)\b")
_TIME_CUES_ZH = ("最近", "近来", "近期", "上周", "这周", "本周", "昨天", "今天", "前几天", "这几天",
                 "刚才", "刚刚", "最新", "这阵子", "这段时间", "上个月", "这个月")  # fmt: skip
_TIME_CUES_EN = re.compile(
    r"\b(recent|recently|lately|latest|last (week|weekend|month|night)|this (week|month)|"
    r"yesterday|today|tonight|nowadays|these days|just now|new)\b"
)
# A question about the current value of something that may have changed ("where do I live
# now?", "我现在住在哪里？"): the newest of the memories that answer it comes first.
_CURRENT_CUES_ZH = ("现在", "目前", "如今", "当前")
_CURRENT_CUES_EN = re.compile(r"\b(now|currently|current|anymore|any more|still)\b")
# Unless it asks about the telling ("when did I tell you that I live in Florida now?", "did I
# mention that I still…?"): then "now" is part of what was said, and the words stay.
_ABOUT_THE_TELLING = re.compile(
    r"\b(did i|have i|i once) (ever |first |already )?(tell|told|say|said|mention|mentioned)\b|"
    r"(什么时候|哪天|是否|有没有)(跟你|和你|对你|向你)?(说|提|讲|告诉)"
)
_PUNCTUATION = re.compile(r"[\s\W_]+", re.UNICODE)
# A short question about the user is embedded as the statement that answers it (`as_statement`).
_ONE_QUESTION = re.compile(r"^[^.!?。！？]+[?？]\s*$")
_FIRST_PERSON = re.compile(r"\b(?:i|my|me|mine|myself)\b|我", re.IGNORECASE)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself)\b|你|您", re.IGNORECASE)
_WH_EN = "what|which|where|who|whom|whose|when|why|how"
_WH_LEAD_EN = re.compile(
    rf"^\W*(?:(?:so|and|but|hey|ok|okay|well)\W+)?(?:{_WH_EN})\b", re.IGNORECASE
)
_ASKING_WORDS_EN = re.compile(
    rf"\b(?:{_WH_EN})(?:'s)?\b|\b(?:do|does|did|am|is|are)\b(?=\s+(?:i|we|they|he|she|my|me)\b)",
    re.IGNORECASE,
)
# Chinese asking words: never BM25 search words (as "what" is not in English), and dropped from a
# question searched as its answer.
_ASKING_WORDS_ZH = re.compile(r"为什么|怎么样|怎么|什么|哪里|哪儿|哪个|哪些|哪|谁|多少|几|吗|呢")
# A longer Chinese question sets a scene before it asks ("在5月1号我曾告诉过你我的旅行计划，…？").
STATEMENT_MAX_CHARS_ZH = 30


@dataclass(frozen=True)
class QueryReading:
    """What the query asks for: `tokens` for BM25, whether it is broad, time cues, a bare theme,
    the calendar days it names (`dates`, month * 100 + day; `days`, full dates as ordinals),
    whether it asks for the current value (`current`) or for a recommendation among things
    (`advice`: "can you recommend a hotel?", not "what should I do?"), and whether it is a
    question about the user that no search word carries (`meaning_only`: "Where am I from?",
    all stop words; broad for BM25 alone, the embedding's to answer when it is on)."""

    tokens: list[str]
    broad: bool
    time_cue: bool
    theme_key: str | None = None
    dates: tuple[int, ...] = ()
    current: bool = False
    advice: bool = False
    days: tuple[int, ...] = ()  # the days asked about, ordinals (ISO dates in the query)
    meaning_only: bool = False


def theme_key(text: str) -> str:
    """A theme name compared loosely: case, width, spaces and punctuation ignored."""
    return _PUNCTUATION.sub("", normalize(text))


def read_query(query: str, theme_keys: frozenset[str] = frozenset()) -> QueryReading:
    """Classify a query.

    Broad: a recency cue and nothing else ("最近怎么样", "what's new?"), a question about the
    user as a whole ("who am I?", "我是谁？"), a query with no content words left after stop words
    and filler ("how are you"), or a bare theme name, possibly with a cue ("项目", "work lately").
    """
    asked_days, query = iso_days(query)
    text = normalize(query)
    time_cue = any(cue in text for cue in _TIME_CUES_ZH) or bool(_TIME_CUES_EN.search(text))
    current = not _ABOUT_THE_TELLING.search(text) and (
        any(cue in text for cue in _CURRENT_CUES_ZH) or bool(_CURRENT_CUES_EN.search(text))
    )
    # "now" in "what is my favourite book now?" asks when, not what: as a search word it finds
    # "so, what do we do now?". Like English's "what" and "where" (stop words), "什么" and "哪里"
    # ask and say nothing: as search words they find the history's other questions.
    words = _ASKING_WORDS_ZH.sub(" ", text)
    tokens = tokenize(_without_current_cues(words) if current else words) or tokenize(text)
    remainder = _ABOUT_ME_EN.sub(" ", text)
    for phrase in (*_ABOUT_ME_ZH, *_FILLER_ZH):
        remainder = remainder.replace(phrase, " ")
    content = [token for token in tokenize(remainder) if token not in _FILLER_EN]
    kept_words = [
        word
        for word in re.findall(r"\w+", remainder)
        if not all(token in _FILLER_EN for token in tokenize(word))
    ]
    remainder_key = theme_key(" ".join(kept_words))
    if remainder_key and remainder_key in theme_keys:
        return QueryReading(tokens, broad=True, time_cue=time_cue, theme_key=remainder_key)
    # Nothing left to search for: the broad order (recent, much-used) beats an empty answer;
    # but a question about the user made of stop words only ("Where am I from?") asks for one
    # fact, which the embedding can find when it reads the question as its answer ("I from").
    about_me = bool(_ABOUT_ME_EN.search(text)) or any(p in text for p in _ABOUT_ME_ZH)
    meaning_only = not tokens and not about_me and as_statement(query) != query
    return QueryReading(tokens, broad=not content, time_cue=time_cue, dates=dates_in(text),
                        current=current, advice=asks_recommendation(text),
                        days=asked_days, meaning_only=meaning_only)  # fmt: skip


def as_statement(query: str) -> str:
    """What the embedding reads of a query: a short question about the user ("What pet do I have
    now?", "我现在住在哪里？") as the statement that answers it ("pet I have now", "我现在住在"),
    any other query as it is. An embedding puts a question next to other questions ("Do you have
    any pets?"), a statement next to statements ("I have two horses"). A question to the
    assistant ("What did you recommend to me?", "When did I tell you…?") stays a question: what
    answers it is the assistant's words or the telling, not the user's statement."""
    text = query.strip()
    if (not _ONE_QUESTION.match(text) or not _FIRST_PERSON.search(text)
            or _SECOND_PERSON.search(text)):  # fmt: skip
        return query
    if _WH_LEAD_EN.search(text):
        statement = _ASKING_WORDS_EN.sub("", text)
    elif has_cjk(text) and len(text) <= STATEMENT_MAX_CHARS_ZH and _ASKING_WORDS_ZH.search(text):
        statement = _ASKING_WORDS_ZH.sub("", text)
    else:
        return query
    statement = re.sub(r"\s+", " ", statement.replace("?", "").replace("？", "")).strip(" ,，")
    return statement or query


def _without_current_cues(text: str) -> str:
    for cue in _CURRENT_CUES_ZH:
        text = text.replace(cue, " ")
    return _CURRENT_CUES_EN.sub(" ", text)


_CLAUSE_END = re.compile(r"[.!。！?？,，;；]")
_SPEAKER = re.compile(r"^[\w .'-]{1,30}:\s+")
# What may come before the question without saying anything about anyone ("So, what do you do
# for work?", "That's interesting! What's your favourite band?", "哈哈，你呢？"): reactions only.
_REACTIONS_EN = (
    "so well oh ok okay yeah yes yep no nope wow cool nice great awesome amazing interesting fun "
    "sweet neat lovely wonderful good true right sure really haha lol hmm ah aw hi hello hey "
    "thanks thank you that that's thats is sounds i agree me too same and but also"
)
_REACTION_WORDS = frozenset(_REACTIONS_EN.split())
_REACTIONS_ZH = re.compile(
    r"^(哈+|嗯+|哦+|噢+|啊+|哇+|好的?|对|是的?|真的|不错|太好了|有意思|厉害|酷|那|所以)+$"
)


def is_bare_question(text: str, max_words: int = 10) -> bool:
    """Whether a memory's text is only a short question ("What's your favorite band?", "Kate:
    how was the trip?", "你住在哪里？"), maybe after a reaction ("So, what do you do?", "That's
    interesting! Where do you live?"): a last clause of at most `max_words` words (two Chinese
    characters a word) ending in a question mark, and before it reaction words only. A turn
    that answers and then asks back is not, nor a question that carries a fact ("I just moved
    to Porto, any tips?")."""
    body = _SPEAKER.sub("", text.strip(), count=1).rstrip()
    if not body.endswith(("?", "？")):
        return False
    clauses = [c.strip() for c in _CLAUSE_END.split(body.rstrip("?？ ")) if c.strip()]
    if not clauses:
        return False
    *lead_in, question = clauses
    if not all(_only_reaction(clause) for clause in lead_in):
        return False
    return word_count(question) <= max_words


def _only_reaction(clause: str) -> bool:
    words = [word.lower().replace("’", "'") for word in latin_words(clause)]
    if has_cjk(clause):
        return not words and bool(_REACTIONS_ZH.match(clause))
    return bool(words) and all(word in _REACTION_WORDS for word in words)
