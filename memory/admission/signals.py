"""Signs that a message holds something lasting (and the explicit requests that force a write)."""

from __future__ import annotations

import re

from memory.admission.text import CJK, I, Message, matches_any

# ── explicit requests: always admitted, written at once ─────────────────────────────────────────
REMEMBER = matches_any(
    r"^(please |pls |can you |could you |would you )?(remember|memori[sz]e)\b"
    r"(?! (when|what|how|if)\b)",
    r"\b(please|pls|you should|you need to|make sure to|try to) (remember|memori[sz]e)\b",
    r"\b(can|could|would) you (remember|memori[sz]e) (that|this|my|i)\b",
    r"\bremember (that|this)\b|\bremember:",
    r"\b(keep|bear) in mind\b|\b(make|take) a note\b|\bnote that\b|\bsave this\b",
    r"\b(don'?t|do not|never) forget\b|\bfor (future reference|later)\b|\bjust so you know\b",
    r"以后(你)?要知道|备注一下|记住|记一下|记下来|记下|帮我记|你记着|记好了|别忘了|不要忘了|别忘记|不要忘记",
    flags=I,
)
FORGET = matches_any(
    r"\bforget\b(?! it\b[.!]?$)",
    r"\b(delete|erase|remove|drop|wipe)\b.{0,40}\b(memor\w*|everything|about me|my)\b",
    r"\b(don'?t|do not|stop) (remember|keep|store|sav)(e|ing)?\b",
    r"忘掉|忘记(这|那|我|关于|掉|吧)|忘了(吧|它)|可以忘了|把.{0,20}(忘|删)|(别|不要|不用)(再)?(记|保存|存)",
    r"(删掉|删除|删了|清除|抹掉).{0,12}(记忆|记录|信息|关于我|我的)",
    flags=I,
)
NOT_A_FORGET = re.compile(r"\b(don'?t|do not|never|won'?t) forget\b|别忘|不要忘|不会忘|忘不了", I)
CORRECTION_CUE = matches_any(
    r"\b(actually|correction|i misspoke|i meant|scratch that|no wait|i was wrong|my mistake)\b",
    r"\b(that'?s|that is) (not right|wrong|not correct)\b|\bsorry,? i said\b|\bnot \w+,? but\b",
    r", not \w+( \w+)?[.!]?$",
    r"其实|不对|更正|纠正|说错|搞错|改一下|不是.{1,12}[，,]?(而)?是",
    flags=I,
)


def forget_request(message: Message) -> bool:
    """A request to forget or delete what is stored ("forget my address", "把…删掉"); "don't
    forget" asks for the opposite."""
    cleaned = NOT_A_FORGET.sub(" ", message.lowered)
    return FORGET(Message(message.text, cleaned, (), 0, ()))


CONTRAST = matches_any(r"\b\w+, not \w+|\bnot \w+,? but\b", r"是.{1,10}不是|不是.{1,10}是", flags=I)


def correction(message: Message) -> bool:
    """A correction cue with something to correct: a first-person fact, a possession, a number
    or a contrast ("actually I quit smoking", "I meant Bristol, not Brighton", "改一下，航班是14号
    的"). A bare "that's wrong" disputes the assistant's answer and corrects nothing stored."""
    return CORRECTION_CUE(message) and (
        FIRST_PERSON(message) or POSSESSION(message) or NUMBER(message) or CONTRAST(message)
    )


# ── what is worth keeping ───────────────────────────────────────────────────────────────────────
# "I …" / "我…" followed by anything but thinking, asking or coming and going: a statement about
# the user. The exclusions are what people say about the conversation, not about themselves.
FIRST_PERSON = matches_any(
    r"(?<!\bdo )(?<!\bcan )(?<!should )(?<!\bdid )(?<!could )(?<!would )(?<!\bmay )(?<!what )"
    r"(?<!\blike )(?<!\bif )"
    r"\b(?:i(?:'m|’m|'ve|'d|'ll| am)?|im|ive)\s+(?!(think|guess|see|wonder|was wondering|mean"
    r"|suppose|hope|bet|asked|said|meant|was (asking|saying|talking)|agree|know|understand|get it"
    r"|don'?t (get|know|understand|think|see)|need (a|an|some|to know|help)"
    r"|have (a|an|one|another|some) (question|idea|doubt)|back|sure|not sure|confused|lost"
    r"|trying to (understand|figure out|get)|fine|ok|okay|good|here|done|ready"
    r"|just (asking|curious|wondering)|wanted to ask|would like to know|was just)\b)\w",
    r"\b(we(?:'re| are| have| live| own)|our (family|home|house|flat|apartment|kids|dog|cat))\b",
    r"(?<![帮给让叫跟和对等])我(?!(觉得|认为|想知道|想问|问一下|需要一个|没看懂|不懂|没懂|看看|回来了"
    r"|有个.{0,8}问题|是说|的意思|来了|在吗|也不知道|不知道|不确定|问|说的|说过"
    r"|(懂了|明白了?|也是|知道了?)[。！!.]*$))",
    flags=I,
)
POSSESSION = matches_any(
    r"\bmy (name|birthday|age|job|work|boss|flat|apartment|house|home|address|car|phone|laptop"
    r"|wife|husband|partner|girlfriend|boyfriend|fianc\w*|mom|mum|mother|dad|father|parents|son"
    r"|daughter|kids?|children|baby|brother|sister|siblings?|grand\w+|uncle|aunt|cousin|niece"
    r"|nephew|family|friend|best friend|roommates?|colleague|coworker|manager|team|cat|dog|pet"
    r"|ex|doctor|thesis|exam|flight|appointment|interview|parking|wifi|bakery|company|startup"
    r"|favou?rite|first language)\b",
    r"\b(the|our) (kids|children|twins)\b|\b(chewed|ate|broke|bit|stole) (through )?my\b",
    r"我的|我(老公|老婆|妻子|丈夫|对象|男朋友|女朋友|妈妈|妈|爸爸|爸|父母|儿子|女儿|孩子|哥|姐|弟|妹"
    r"|爷爷|奶奶|外公|外婆|姥姥|老板|领导|同事|闺蜜|朋友|室友|前任|猫|狗|家)|孩子|室友",
    flags=0,
)
PREFERENCE = matches_any(
    r"\bi(?:'m| am)? ?(really |really don'?t |don'?t |do not |absolutely |totally )?"
    r"(like|love|hate|prefer|enjoy|adore|can'?t stand|dislike)\b",
    r"\b(favou?rite|not (a |the )?(big |huge )?fan|my (thing|jam)|i'?m into|i'?d rather|allergic"
    r"|intolerant|vegetarian|vegan|avoid)\b",
    r"(喜欢|爱吃|爱喝|超爱|最爱|讨厌|受不了|偏好|更喜欢|不爱|只喝|只吃|过敏|不耐受|素食|吃素)",
    flags=I,
)
STANDING_INSTRUCTION = matches_any(
    r"\b(always|never|from now on|in future|going forward|please)\b.{0,30}"
    r"\b(answer|reply|respond|talk|write|speak|call me|use)\b.{0,40}\b(me|my|units|english"
    r"|chinese|language|points|short)\b",
    r"\b(use|give me|answer in) (metric|imperial|celsius|short|bullet)\b|\bwith me\b",
    r"(以后|今后|每次|总是|请).{0,12}(回答|跟我说|和我说|用|叫我)|回答我的时候",
    flags=I,
)
PLAN = matches_any(
    r"\b(i'?m going to|i will|i'll|i plan|i'?m planning|planning to|i want to|i'?d like to"
    r"|i'?m flying|i'?m moving|we'?re moving"
    r"|i have (a|an) (?!question).{0,30}\s(on|at|next|tomorrow)"
    r"|signed up|starts? (on|next)|we'?re launching)\b",
    r"\b(appointment|interview|deadline|defen[cs]e|exam|wedding|surgery|trip|flight|marathon)\b",
    r"打算|准备|计划|要去|想在|下周|下个月|明年|年底|预约|面试|答辩|截止|报了|婚礼|发布|开课|看牙",
    flags=I,
)
NUMBER = matches_any(
    r"\d",
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april"
    r"|may|june|july|august|september|october|november|december|tomorrow|tonight|next (week|month"
    r"|year|summer|winter)|last (week|month|year)|this (week|month|year|semester))\b",
    r"[一二三四五六七八九十两]+(岁|年|月|号|点|个月|周|次)|周[一二三四五六日天]|星期|明天|后天|昨天|今年"
    r"|去年|明年|月底|年底|上周|下周|上个月|下个月",
    flags=I,
)
EMOTION = matches_any(
    r"\bi(?:'ve been| have been|'m| am)? ?(feeling|felt|feel)\b",
    r"\b(anxious|stressed|depressed|lonely|nervous|scared|afraid|proud|excited|worried"
    r"|overwhelmed|burned out|burnt out|exhausted|heartbroken|grief|grieving|biggest fear)\b",
    r"\b(passed away|died|lost my (job|mom|dad|mother|father))\b",
    r"焦虑|难过|伤心|开心|高兴|压力|抑郁|孤独|孤单|寂寞|郁闷|紧张|害怕|担心|累垮|崩溃|去世|失业|睡不着"
    r"|骄傲",
    flags=I,
)
# The user's body and health, told without an "I" the way Chinese does ("喉咙干痒，时不时咳嗽几声，
# 没有发烧"): what a later question about a symptom, a visit or a medicine needs.
HEALTH = matches_any(
    r"\b(cough(ing)?|fever|headaches?|migraines?|sore throat|nause(a|ous)|dizz(y|iness)|insomnia"
    r"|asthma|diabetes|blood pressure|surgery|symptoms?|diagnos\w+|prescri\w+|medication|allerg\w+"
    r"|chronic|infection|pneumonia|back pain|chest pain)\b",
    r"咳嗽|发烧|发热|低烧|高烧|体温|胸闷|头晕|头疼|头痛|乏力|喉咙|嗓子|咽痛|咽干|鼻塞|流鼻涕|腹泻|拉肚子"
    r"|失眠|过敏|哮喘|糖尿病|血压|手术|症状|确诊|诊断|吃药|服药|住院|肺炎|感冒",
    flags=I,
)
LIFE_EVENT = matches_any(
    r"\b(promoted|promotion|got (married|engaged|divorced|hired|fired|laid off|accepted|into)"
    r"|pregnant|expecting (a|twins)|graduated|retired|new job|bought (a|our|my) (house|flat|home"
    r"|car)|broke up|breakup|diagnosed)\b",
    r"升职|结婚|订婚|离婚|怀孕|毕业|退休|辞职|跳槽|入职|被裁|买房|交房|搬家|分手|考上|被录取|查出",
    flags=I,
)
TASK = matches_any(
    r"\b(let'?s|let us)\b|\bwe(?:'re| are) working on\b|\b(for )?this (project|task)\b",
    r"我们来|这个任务|这次我们|我们在做|我们用|这次用",
    flags=I,
)


# Someone else in the user's life: he, she, they did or are something ("She fainted in class",
# "她去医院了"). Chinese has no articles or inflection: six characters say as much as five words.
OTHER_PERSON = matches_any(
    r"\b(he|she|his|her|him|they|their)\b(?! (is|are) (you|it)\b)",
    r"[他她](?!们说的)|[他她]们",
    flags=I,
)
CJK_STATEMENT_CHARS = 6


def statement(message: Message) -> bool:
    """A sentence long enough to say something: five English words, six Chinese characters.
    What it says may be lasting even without an "I" ("Been living in Melbourne for six years");
    the other rules take away what is a question, a request, code or a reaction."""
    cjk = len(CJK.findall(message.lowered))
    return message.words - cjk >= 5 or cjk >= CJK_STATEMENT_CHARS


def detailed(message: Message) -> bool:
    """A long message that speaks of the user: more room for something lasting."""
    return message.words >= 25 and (FIRST_PERSON(message) or POSSESSION(message))
