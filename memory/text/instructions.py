"""Whether a sentence is a standing instruction for replies (en, zh): no model."""

from __future__ import annotations

import re

# How the assistant answers or addresses the user: the reply's form, language, length, tone, the
# user's name, and what never to put in it.
_REPLY_EN = re.compile(
    r"\b(answers?|answering|reply|replies|replying|respond|responses?|write|writing|talk|"
    r"talking|speak|speaking|explain|format(ted)?|bullet( points?)?|lists?|emojis?|emoticons?|"
    r"english|chinese|mandarin|spanish|french|german|japanese|tone|formal(ly)?|casual(ly)?|"
    r"concise(ly)?|brief(ly)?|short(er)?|markdown|capital letters|lowercase|uppercase|"
    r"words?|sentences?|paragraphs?|swear(ing)?|jargon|titles?|headings?|commas?|quotes?|"
    r"quotation marks|sections?|placeholders?|postscript|p\.s\.|output|json|keywords?|hashtags?)\b",
    re.IGNORECASE,
)
# Said once, meant for every later reply ("from now on", "always", "never", "in all your
# answers"): without one, a format request is about the answer being asked for only.
_STANDING_EN = re.compile(
    r"\b(from now on|going forward|henceforth|always|never|every time|each time|whenever|"
    r"in (all|every|each) (of )?(your |future |my )?(answers?|repl(y|ies)|responses?|messages?|"
    r"chats?|conversations?)|in (your )?future (answers|replies|responses)|by default|"
    r"stop (using|calling|adding|writing|saying|putting)|no more|(don'?t|do not) ever|"
    r"any ?more|in the future|for all (your )?(answers|replies|responses))\b",
    re.IGNORECASE,
)
# The user's name for replies: a standing instruction in itself ("call me Mei").
_ADDRESS_EN = re.compile(
    r"\b(call me|address me as|refer to me as|my name for you to use)\b", re.IGNORECASE
)
# A sentence about the speaker's own habits ("I always use emoji", "we never write lists") is a
# fact about them, not an instruction to the assistant; "I want you to …" is one.
_FIRST_PERSON_EN = re.compile(
    r"^\s*(?:(?:from now on|going forward|also|and|but|so|ok(?:ay)?|well)[,\s]+)*"
    r"(i|i'm|i've|we|my|our|he|she|they|people)\b(?!\s+(?:want|would like|'d like|need|"
    r"prefer|expect|ask|am asking|wish)\s+(?:you|your|the assistant|answers|replies|responses))",
    re.IGNORECASE,
)
_QUESTION_EN = re.compile(r"^\s*(do|does|did|have|has|can|could|would|will|what|why|how|is|are)"
                          r"\b[^.!]*\?\s*$", re.IGNORECASE)  # fmt: skip

_REPLY_ZH = re.compile(
    r"(回答|回复|答复|作答|说话|用中文|用英文|用英语|用日语|中文|英文|表情|emoji|要点|分点|列表|"
    r"项目符号|简短|简洁|简单点|详细|语气|口吻|格式|字以内|字以上|字左右|字数|段落|分段|标题|"
    r"markdown|加粗|标点|书名号|引号|括号|正式|随意|文言文|拼音|结尾|开头|称呼|叫我|喊我)",
    re.IGNORECASE,
)
_STANDING_ZH = re.compile(
    r"(以后|今后|从现在开始|从现在起|从今往后|从今以后|往后|每次|每一次|每个回答|每条回复|总是|"
    r"一直|永远|始终|不要再|别再|不许再|不准再|再也不要|所有的?回答|所有回复|所有的?回复|凡是)"
)
_ADDRESS_ZH = re.compile(r"(?:^|请|你|就|可以|以后|今后|都)(?:叫我|称呼我|喊我|管我叫)")
_FIRST_PERSON_ZH = re.compile(
    r"^\s*(?:以后|今后|而且|还有|另外|平时|)(我|我们|他|她|他们|大家|朋友)"
    r"(?!(希望|想让|要|需要|请|要求|让)你)"
)


def is_standing_instruction(text: str) -> bool:
    """Whether `text` asks how every later reply should be, in English or Chinese: its format,
    language, length or tone, the name to call the user, or what never to put in it ("From now
    on, always answer in short bullet points", "以后请叫我小梅"). A taste ("I prefer tea"), a
    habit of the user's own ("I always use emoji") or a request about this answer alone
    ("answer in under 100 words") is not."""
    sentence = text.strip()
    if not sentence:
        return False
    if re.search(r"[\u4e00-\u9fff]", sentence):
        if _FIRST_PERSON_ZH.search(sentence) or sentence.endswith(("吗？", "吗?", "吗")):
            return False
        if _ADDRESS_ZH.search(sentence):
            return True
        return bool(_STANDING_ZH.search(sentence) and _REPLY_ZH.search(sentence))
    if _FIRST_PERSON_EN.search(sentence) or _QUESTION_EN.search(sentence):
        return False
    if _ADDRESS_EN.search(sentence):
        return True
    return bool(_STANDING_EN.search(sentence) and _REPLY_EN.search(sentence))


# What an instruction is about when it can hold one value at a time: the user is called one
# name and answered in one language, so a newer instruction about either replaces an older one.
_ONE_VALUED_TOPICS = {
    "name": re.compile(
        r"\b(call me|address me|refer to me|my name)\b|叫我|称呼我|喊我|管我叫", re.IGNORECASE
    ),
    "language": re.compile(
        r"\b(in|into) (english|chinese|mandarin|spanish|french|german|japanese)\b|"
        r"用(中文|英文|英语|日语|汉语)|说(中文|英文|英语|日语)",
        re.IGNORECASE,
    ),
}


def one_valued_topics(text: str) -> frozenset[str]:
    """The one-valued topics an instruction sets ("name", "language"): of two instructions on
    the same one, the newer holds."""
    return frozenset(topic for topic, cue in _ONE_VALUED_TOPICS.items() if cue.search(text))
