"""Whether the user asks to keep this conversation, or what they just said, out of memory (en, zh):
no model."""

from __future__ import annotations

import re

# "Don't remember this conversation", "keep this chat off the record", "这段对话别记下来": the whole
# conversation, from here on, stays out of memory and the archive. Forgetting one fact ("forget
# where I live") is a forget request instead (memory/integration/models/offline_rules.py).
_OFF_RECORD_EN = re.compile(
    r"\b((don'?t|do not|never) (remember|save|store|record|keep|log|archive|memori[sz]e) "
    r"(any of )?(this|our|the|what we say in this) (conversation|chat|thread|talk|session|one)|"
    r"off the record|(keep|make) (this|our) (conversation|chat|thread|session) (private|secret|"
    r"off the record)|this (conversation|chat) (is|stays) (private|off the record|between us)|"
    r"private (mode|conversation|chat),? please)\b",
    re.IGNORECASE,
)
_OFF_RECORD_ZH = re.compile(
    r"(这段|这次|这个|本次|今天的|我们的)(对话|聊天|谈话|会话)(内容)?(都|也)?(别|不要|不用|不许|请勿|"
    r"别给我|不要给我)(记|记录|记住|保存|存|留)|"
    r"(别|不要|不用|请勿)(记|记录|记住|保存)(这段|这次|本次|我们的)(对话|聊天|谈话|会话)|"
    r"这段(话|对话)?不要留(下)?(记录|痕迹)|无痕(模式|聊天)|(私密|隐私)(模式|对话|聊天)"
)


def asks_off_the_record(text: str) -> bool:
    """Whether `text` asks that this conversation not be remembered ("Don't remember this
    conversation", "off the record", "这段对话别记下来")."""
    return bool(_OFF_RECORD_EN.search(text) or _OFF_RECORD_ZH.search(text))


# "Forget what I just said", "忘掉我刚才说的": the user's previous message and its replies.
_LAST_TURN_EN = re.compile(
    r"\b(forget|don'?t remember|do not remember|scratch) (what|everything) i (just )?"
    r"(said|told you|wrote|typed)|\bforget (my|that) last (message|sentence)|"
    r"\bforget i (just )?said (that|it)",
    re.IGNORECASE,
)
_LAST_TURN_ZH = re.compile(
    r"(忘掉|忘记|忘了|别记|不要记)(住)?(我)?刚才(说|讲)的(话|内容)?|刚才(说|讲)的(话)?(别记|不要记|忘掉|忘了吧)|"
    r"当我没说"
)


def asks_to_forget_last_turn(text: str) -> bool:
    """Whether `text` asks to forget what the user just said ("Forget what I just said",
    "忘掉我刚才说的", "当我没说")."""
    return bool(_LAST_TURN_EN.search(text) or _LAST_TURN_ZH.search(text))
