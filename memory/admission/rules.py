"""The admission rules: the table the scorer runs, and the signs of what is not worth keeping."""

from __future__ import annotations

import re

from memory.admission import signals as keep
from memory.admission.text import I, Message, Rule, matches_any
from memory.text.language import CJK_CLASS
from memory.text.tokenize import tokenize

# ── what is not ─────────────────────────────────────────────────────────────────────────────────
_SMALL_TALK_WORDS = re.compile(
    r"\b(hi|hello|hey|yo|hiya|good (morning|evening|night|afternoon)|how are you|what'?s up|again"
    r"|you there|ok(ay)?|k|cool|got it|sure|yes|yeah|yep|no|nope|thank you|thanks?|thx|cheers"
    r"|a lot|so much|you'?re the best|that helped|lol|lmao|rofl|ha(ha)+|he(he)+|nice|great"
    r"|perfect|awesome|sounds good|makes sense|fair enough|alright|all right|i see|i think so"
    r"|that'?s fine|fine|bye|see you|tomorrow|later|hmm+|interesting|anyway|wow|right|indeed"
    # politeness and non-answers: "yes, please", "no, thank you, madam", "not really", "no idea"
    r"|please|sir|madam|ma'?am|not (really|quite|yet|sure)|quite|yet|i don'?t know|no idea"
    r"|maybe|perhaps|probably|of course|me too|same here|i am|certainly|exactly)\b"
    r"|你好|嗨|哈喽|在吗|在不在|早上好|晚上好|下午好|早安|晚安|又见面了|最近怎么样|好的|好|嗯+|行|可以|明白了?"
    r"|知道了|对|是的|不是|没问题|有道理|懂了|谢谢你?|多谢|感谢|太感谢了|你真棒|辛苦了|帮大忙了|哈+|笑死"
    r"|h{3,}|拜拜|再见|明天见|算了|有意思"
    r"|请|女士|先生|我?不知道|还没有?|没有|也许|可能吧|当然|我也是|我也一样|[啊呀吧哦噢呢啦是不]",
    I,
)
_ASKS = matches_any(
    r"\?\s*$|^(what|how|why|who|whom|when|where|which|is|are|can|could|do|does|did|should|would"
    r"|will|was|were)\b",
    r"[？?]\s*$|吗[？?]?\s*$|呢[？?]?\s*$|什么|怎么|为什么|哪|几|多少|是不是|能不能|可不可以|要不要",
    flags=I,
)
# A message ending in a full stop or an exclamation states something: Chinese question words
# double as indefinites in statements ("几分钟" a few minutes, "什么都" anything).
_STATES = re.compile(r"[。！.!]\s*$")


# A sentence that ends as a statement, before the message's last sentence: "Turks and Caicos is
# amazing for water sports. I'm going snorkeling! Have you been?" tells before it asks.
_TOLD_FIRST = re.compile(r"[^。！.!？?]{12,}[。！.!]\s*\S")


def _question(message: Message) -> bool:
    """A question: a question mark, a question particle, or a question word in a message that
    does not end as a statement does, and that does not first tell something in a sentence of
    its own (the question back at its end is politeness, not the message)."""
    if _TOLD_FIRST.search(message.lowered):
        return False
    if re.search(r"[？?]\s*$", message.lowered):
        return True
    return _ASKS(message) and not _STATES.search(message.lowered)


_REQUEST = matches_any(
    r"^(please |pls |can you |could you )?(translate|write|summari[sz]e|give me|tell me|explain"
    r"|list|generate|rewrite|make|try again|continue|show me|recommend|suggest|describe|draft"
    r"|compose|convert|calculate|check|fix|help me understand)\b",
    r"\bi need (a|an|some) (synonym|word|name|idea|example)\b|\bi'?m trying to understand\b",
    r"^(请|帮我|麻烦)?(翻译|写|总结|给我|讲|解释|列出|生成|改|再来|继续|推荐|算|检查)|帮我用|能再|我需要一个"
    r"|解释一下|列出|翻译成|总结一下|改得|生成一",
    flags=I,
)
_CODE = matches_any(
    r"```|\btraceback\b|\b\w+error\b|\bexception\b|\bselect .{1,80} from\b|\bgit (push|pull|commit"
    r"|merge|rebase)\b|\b(npm|pip|docker|kubectl) \w+|=>|\bdef \w+\(|console\.log|;\s*$",
    flags=I,
)
_ABOUT_ASSISTANT = matches_any(
    r"\b(are you|you are) (an? )?(ai|bot|robot|human|real)\b|\bwhat model\b|\bcan you browse\b"
    r"|\bdo you (remember|know|recall)\b|\bwhat do you know about me\b",
    r"你是(ai|人工智能|机器人|真人)|你用的是|你能上网|你还记得|你对我了解|你知道我",
    flags=I,
)
_REACTION = matches_any(
    r"\b(that'?s|this is|that was|it'?s|your (answer|reply))\b.{0,20}\b(not what i|wrong|right"
    r"|great|helpful|useful|too (long|short)|funny|perfect|not it)\b|^(nah|wow|hmm+|good point)\b"
    r"|\b(double check|add an example|explain (it )?again|try (a different|another) \w+)\b",
    r"这个(答案|回答)|回答得|说得(对|好)|太长|太短|不对吧|不太对|有用|再讲一遍|再检查|加个例子"
    r"|不是我问的|换个(角度|说法|方式)",
    flags=I,
)
_META = matches_any(
    r"\bi (wonder|was wondering|have (a|an|one|another) (question|idea|doubt)|just want(ed)? to"
    r" (ask|know)|am (just )?curious)\b|\bquick question\b|\bwhere were we\b",
    r"我(想知道|想问|有个.{0,8}问题|觉得好像|不确定|没意见)|问一下|请问|说到哪",
    flags=I,
)
_HYPOTHETICAL = matches_any(
    # "I can imagine" and "I'm supposed to" are a reaction and a duty, not a what-if.
    r"\bif i were\b|\bwhat would happen if\b|(?<!can )(?<!can't )(?<!cannot )\bimagine\b"
    r"|\bsuppose\b(?! to\b)",
    r"如果我是|要是.{0,12}会",
    flags=I,
)
_MOMENTARY = matches_any(
    r"\b(brb|be right back|one sec(ond)?|just a (sec|moment|minute)|i'?m back|afk|gtg)\b",
    r"等我一下|稍等|等一下|我回来了|马上回来",
    flags=I,
)


# Coming and going, or a reaction to the answer, is what the whole of a short message says; a
# longer one says something else besides ("稍等一分钟。哦，是被病毒感染了…").
WHOLE_MESSAGE_WORDS = 8


def _momentary(message: Message) -> bool:
    return message.words <= WHOLE_MESSAGE_WORDS and _MOMENTARY(message)


# Asking about asking ("请问一下", "quick question") is the whole of a short message; in a longer
# one "请问" is the politeness before an account ("一直咳嗽，体温正常，已经两周了，请问要拍CT吗？"),
# and the account is what is kept. Chosen among 8-40 on the public recall sets' tuning splits
# (bench/admission.py): from 8 down the labelled small talk is kept more, from 20 up less is.
META_MAX_WORDS = 15


def _meta(message: Message) -> bool:
    return message.words <= META_MAX_WORDS and _META(message)


def _reaction(message: Message) -> bool:
    return message.words <= WHOLE_MESSAGE_WORDS and _REACTION(message)


def _small_talk(message: Message) -> bool:
    """The whole message is greetings, acknowledgements, thanks, laughter or fillers."""
    rest = _SMALL_TALK_WORDS.sub(" ", message.lowered)
    return not re.search(rf"[a-z0-9{CJK_CLASS}]", rest)  # a number says something ("2002.")


def _short(message: Message) -> bool:
    """Too short to hold a fact: fewer than four words (or Chinese characters)."""
    return message.words < 4


_NEGATION = re.compile(
    r"\b(not|no|never|don'?t|doesn'?t|didn'?t|isn'?t|aren'?t|can'?t|won'?t)\b|[不没别未非]"
)
_CLAUSE = re.compile(r"[,;，；。.!?！？]\s*|\s+(?:but|and)\s+")
_PERSONAL_CJK = frozenset("我你您他她它的了是在很也都就")


def _content_tokens(text: str) -> set[str]:
    """Words a repeat is judged on: English stems, single Chinese characters (word boundaries
    differ between the user's "我家猫" and the stored "用户家的橘猫"), no pronouns or particles."""
    return {
        token
        for token in tokenize(text)
        if (token.isascii() and len(token) > 1) or (len(token) == 1 and token not in _PERSONAL_CJK)
    }


def _repeats_memory(message: Message) -> bool:
    """Everything the message says is already in one stored memory, negations alike: nothing new
    is said ("I live in Rotterdam" against "User lives in Rotterdam with their partner")."""
    words = _content_tokens(message.text)
    if not words:
        return False
    negated = bool(_NEGATION.search(message.lowered))
    clauses = [c for memory in message.memories for c in _CLAUSE.split(memory.lower()) if c]
    return any(
        words <= _content_tokens(clause) and bool(_NEGATION.search(clause)) == negated
        for clause in clauses
    )


RULES: tuple[Rule, ...] = (
    Rule("remember", 10, keep.REMEMBER, forces=True),
    Rule("forget", 10, keep.forget_request, forces=True),
    Rule("correction", 6, keep.correction, forces=True),
    Rule("first_person_fact", 3, keep.FIRST_PERSON),
    Rule("possession_or_relation", 3, keep.POSSESSION),
    Rule("preference", 3, keep.PREFERENCE),
    Rule("standing_instruction", 3, keep.STANDING_INSTRUCTION),
    # A task's set-up becomes a branch memory, seen below the checkpoint it is written at: written
    # at once, it belongs to its own turn's checkpoint, not to the last turn of a later batch.
    Rule("task_setup", 3, keep.TASK, urgent=True),
    Rule("life_event", 3, keep.LIFE_EVENT),
    Rule("plan_or_date", 2, keep.PLAN),
    Rule("emotion", 2, keep.EMOTION),
    Rule("health", 2, keep.HEALTH),
    Rule("other_person", 2, keep.OTHER_PERSON),
    # What the user tells when the assistant asked ("在一楼。", "2002.") is what it wanted to know.
    Rule("answer", 3, lambda message: message.answers_question),
    Rule("statement", 2, keep.statement),
    # A number or a time is what a later question asks for (an age, a price, a date): with
    # nothing against it, enough on its own.
    Rule("number_or_time", 2, keep.NUMBER),
    Rule("detailed", 1, keep.detailed),
    Rule("question", -2, _question),
    Rule("generic_request", -3, _REQUEST),
    Rule("about_assistant", -3, _ABOUT_ASSISTANT),
    Rule("reaction", -3, _reaction),
    Rule("conversation_meta", -3, _meta),
    Rule("hypothetical", -5, _HYPOTHETICAL),
    Rule("momentary", -5, _momentary),
    Rule("code", -3, _CODE),
    Rule("short", -1, _short),
    Rule("small_talk", -6, _small_talk),
    Rule("repeats_memory", -8, _repeats_memory),
)
