"""Whether a memory states what the user likes or avoids, and whether a query asks for a
recommendation among things, where taste decides the answer."""

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

# Asking what to do about what happened to the user ("what should I do?", "how do I get over
# this?", "我该怎么办？"): the answer depends on the event, not on what they like.
_WHAT_TO_DO_EN = re.compile(
    r"\b(what (should|can|could|do) i do(?! (in|during|at|on|while|for fun|when|this|tonight))|"
    r"(what|how) to (do|deal|cope|handle|get over|move on|say)|supposed to do|no idea|"
    r"(need|want|seeking|looking for|get|some) (some |any )?(advice|help|support)\b"
    r"(?! (on|with|for) (choosing|picking|finding|buying))|how can you help|"
    r"what (do|would) you (think i should|suggest i|do)|(don'?t|do not) know what to do|"
    r"how (do|can|could|should|would) i (deal|cope|handle|get over|get through|stop|tell|talk|"
    r"move on|overcome|fix|approach|forgive|trust|confront|convince|let go|face|feel|"
    r"make (him|her|them|it))|any (advice|suggestions?|tips|ideas)\W*$|"
    r"(advice|suggestions?|tips) (on|about|for) (how|what|dealing|coping|handling|getting))",
    re.IGNORECASE,
)
_WHAT_TO_DO_ZH = re.compile(
    r"(怎么办|该怎么|应该怎么|要怎么|怎么做|"
    r"如何(面对|处理|应对|走出|克服|调整|改善|缓解|解决|是好|才能|做)|"
    r"怎么(面对|处理|应对|走出|克服|调整|改善|缓解|解决|才能)|怎样(才能|面对|处理|应对)|"
    r"(有什么|给我一些|给我点)(建议|办法|方法))"
)


def states_preference(text: str, max_words: int = 40) -> bool:
    """Whether `text` says what someone likes, prefers, avoids or cannot have (en, zh): a
    statement of at most `max_words` words (two Chinese characters a word). A long story that
    mentions an allergy on the way ("…咳嗽两周，头孢过敏，…") is about something else."""
    if word_count(text) > max_words:
        return False
    return bool(_PREFERENCE_EN.search(text) or _PREFERENCE_ZH.search(text))


def asks_recommendation(text: str, max_words: int = 40) -> bool:
    """Whether `text` asks for something chosen among things (a book, music, food, a place, a
    gift, a product, ways to spend time: `asks_advice`), where taste decides the answer. Not a
    question about what to do in the user's own situation ("what should I do?", "我该怎么办？"),
    nor a story of more than `max_words` words (two Chinese characters a word) that asks on the
    way ("…my wife cheated on me… any advice?"): there the event decides, not what they like."""
    if word_count(text) > max_words or not asks_advice(text):
        return False
    return not (_WHAT_TO_DO_EN.search(text) or _WHAT_TO_DO_ZH.search(text))


def asks_advice(text: str) -> bool:
    """Whether `text` asks for a recommendation, suggestions or advice now (en, zh), not what
    was advised before."""
    if _PAST_ADVICE_EN.search(text) or _PAST_ADVICE_ZH.search(text):
        return False
    return bool(_ADVICE_EN.search(text) or _ADVICE_ZH.search(text))
