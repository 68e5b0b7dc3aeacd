"""Whether a memory states what the user likes or avoids, and whether a query asks for advice."""

from __future__ import annotations

import re

from memory.text.language import word_count

# A standing taste or constraint in the user's words or the writer's ("I refuse to use Apple
# products", "User is vegan", "我不吃辣"): what a recommendation for them has to respect.
_PREFERENCE_EN = re.compile(
    r"\b(prefers?|preferred|preference|favou?rites?|fan of|hates?|hated|dislikes?|disliked|"
    r"despises?|detests?|can'?t stand|cannot stand|avoids?|avoiding|refuses?|"
    r"(i|i'd|we|user|they|he|she)( \w+)? (like|likes|love|loves|enjoy|enjoys)|"
    r"never (eat|eats|drink|drinks|use|uses|buy|wear)|"
    r"(don'?t|do not|doesn'?t|does not|won'?t|will not) (like|eat|drink|use|consume|want|"
    r"enjoy|buy|wear)|not (a fan|interested)|no interest|aversion|allergic|allergy|"
    r"intoleran(t|ce)|(can'?t|cannot) (tolerate|eat|have|handle)|vegan|vegetarian|"
    r"pescatarian|keto|gluten|halal|kosher|diet)\b",
    re.IGNORECASE,
)
# Not "受不了" or "不用" (in a story: "I couldn't bear it", "no need"), nor "不吃药" (medicine).
_PREFERENCE_ZH = re.compile(
    r"(喜欢|喜爱|爱吃|爱喝|爱看|爱听|最爱|偏好|偏爱|更爱|讨厌|厌恶|反感|不喜欢|不吃(?!药)|不喝(?!药)|"
    r"不碰|忌口|过敏|素食|吃素|宁愿|宁可|避免|拒绝|不感兴趣|没兴趣|口味)"
)
# Asking for something chosen for the user ("Can you recommend a hotel in Lisbon?", "有什么适合
# 我的书？"): their tastes matter even when the question names none of them.
_ADVICE_EN = re.compile(
    r"\b(recommend\w*|suggest\w*|advice|advise|tips?|ideas?|options|what are (some|the best)|"
    r"(should|could|can|might) i (try|do|follow|use|wear|play|visit|consider|check|watch|read|"
    r"listen|eat|buy|get|go|start|learn|enjoy|experience)|(what|which|where|how) should i|"
    r"i should (try|consider|check|watch|read|visit|use|experience|start)|"
    r"how (can|could|do) i (best |better )?(learn|make|improve|enhance|prepare|boost|get|find|"
    r"choose|travel|study)|best (way|ways|\w+ for (me|my))|help me (choose|pick|find|plan|"
    r"decide|identify)|can you (create|find|plan|provide|help|put together)|any good|"
    r"worth (trying|watching|reading|visiting)|must-try)\b",
    re.IGNORECASE,
)
_ADVICE_ZH = re.compile(
    r"(推荐|建议|有什么好|有哪些好|适合我|给我找|帮我选|帮我挑|帮我找|怎么选|该选|主意|点子|"
    r"值得(一)?(看|去|试|买|读|听))"
)

# Asking what was advised before ("what did you recommend to me?", "你给我推荐过哪些书？") is a
# question about a past answer, not a request for a new one.
_PAST_ADVICE_EN = re.compile(
    r"\b(recommended|suggested|advised|(did|have) you (ever )?(recommend|suggest|advise|give|"
    r"given|share|shared|tell|told)|you (gave|told|shared|once)|(advice|tips?|suggestions?) "
    r"(did|have) you)\b",
    re.IGNORECASE,
)
_PAST_ADVICE_ZH = re.compile(r"(推荐过|推荐了|建议过|给了我|给过我|曾经)")


def states_preference(text: str, max_words: int = 40) -> bool:
    """Whether `text` says what someone likes, prefers, avoids or cannot have (en, zh): a
    statement of at most `max_words` words (two Chinese characters a word). A long story that
    mentions an allergy on the way ("…咳嗽两周，头孢过敏，…") is about something else."""
    if word_count(text) > max_words:
        return False
    return bool(_PREFERENCE_EN.search(text) or _PREFERENCE_ZH.search(text))


def asks_advice(text: str) -> bool:
    """Whether `text` asks for a recommendation, suggestions or advice now (en, zh), not what
    was advised before."""
    if _PAST_ADVICE_EN.search(text) or _PAST_ADVICE_ZH.search(text):
        return False
    return bool(_ADVICE_EN.search(text) or _ADVICE_ZH.search(text))
