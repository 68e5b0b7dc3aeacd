"""A seeded store with planted near-duplicate groups (English and Chinese) and look-alike traps:
distinct facts that differ only in a number, a date, a name, a negation or one word."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = [
    "Anna",
    "Maria",
    "Tom",
    "Lucas",
    "Sofia",
    "Ken",
    "Mei",
    "Omar",
    "Ivan",
    "Lena",
    "Raj",
    "Nora",
    "Paul",
    "Yuki",
    "Elena",
    "Sam",
    "Zoe",
    "Hugo",
    "Iris",
    "Leo",
]
CITIES = [
    "Paris",
    "Tokyo",
    "Berlin",
    "Lisbon",
    "Oslo",
    "Seoul",
    "Madrid",
    "Vienna",
    "Dublin",
    "Prague",
    "Milan",
    "Boston",
    "Denver",
    "Austin",
    "Lima",
    "Cairo",
]
RELATIONS = [
    "sister",
    "brother",
    "mother",
    "father",
    "cousin",
    "friend",
    "colleague",
    "aunt",
    "uncle",
    "neighbour",
    "manager",
    "roommate",
]
JOBS = [
    "nurse",
    "teacher",
    "engineer",
    "pilot",
    "chef",
    "lawyer",
    "designer",
    "dentist",
    "farmer",
    "writer",
    "baker",
    "plumber",
    "architect",
    "painter",
]
LIKES = [
    "jazz",
    "tennis",
    "sushi",
    "hiking",
    "chess",
    "opera",
    "gardening",
    "climbing",
    "photography",
    "pottery",
    "yoga",
    "cycling",
    "baking",
    "poetry",
    "karaoke",
    "surfing",
    "knitting",
    "astronomy",
    "birdwatching",
    "origami",
]
ZH_NAMES = ["小红", "小明", "阿强", "丽丽", "建国", "秀英", "志强", "桂英", "晓东", "海燕"]
ZH_CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "重庆"]
ZH_RELATIONS = ["妹妹", "哥哥", "妈妈", "爸爸", "表姐", "同事", "室友", "邻居"]
ZH_LIKES = [
    "爵士乐",
    "网球",
    "寿司",
    "爬山",
    "围棋",
    "京剧",
    "园艺",
    "摄影",
    "瑜伽",
    "骑行",
    "烘焙",
    "书法",
    "钓鱼",
    "游泳",
    "茶艺",
]
ZH_FOODS = ["火锅", "饺子", "面条", "烤鸭", "包子", "米饭", "粥", "月饼"]
ZH_JOBS = ["护士", "老师", "工程师", "医生", "律师", "厨师", "设计师", "会计"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


Vocabulary = dict[str, list[str]]
_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ra",
    "ten",
    "vo",
    "shu",
    "ne",
    "di",
    "pa",
    "rin",
    "zo",
    "bel",
    "ta",
    "gor",
    "fi",
    "mu",
    "sel",
    "an",
    "ko",
]
# Characters spread over the common block, without numerals, negations, fillers and stop
# characters (they have a meaning to the detector).
_NOT_IN_POOL = set(
    "一二三四五六七八九十百千万两零不没别很挺用户的了是我你他她它们在和与也就都吗呢吧啊呀么这那有个被把给让着过"
)
_CJK_POOL = [chr(c) for c in range(0x4E00, 0x9FA0, 37) if chr(c) not in _NOT_IN_POOL]


def _vocabulary(total: int, rng: random.Random) -> Vocabulary:
    """The word lists; beyond 1,000 memories each grows with the store (pseudo-words), as a real
    store's vocabulary does, so a large set is not a thousand copies of twenty names."""
    lists = {
        name: list(globals()[name])
        for name in (
            "NAMES",
            "CITIES",
            "RELATIONS",
            "JOBS",
            "LIKES",
            "ZH_NAMES",
            "ZH_CITIES",
            "ZH_RELATIONS",
            "ZH_LIKES",
            "ZH_FOODS",
            "ZH_JOBS",
        )
    }
    extra = max(0, total // 40 - 20)
    for name, words in lists.items():
        chinese = name.startswith("ZH_")
        while len(words) < len(globals()[name]) + extra:
            if chinese:
                word = "".join(rng.choice(_CJK_POOL) for _ in range(2))
            else:
                word = "".join(rng.choice(_SYLLABLES) for _ in range(3))
                word = word.capitalize() if name in ("NAMES", "CITIES") else word
            if word not in words:
                words.append(word)
    return lists


@dataclass
class PlantedSet:
    """`memories` id → (description, theme); `groups` the planted duplicates; `traps` pairs of
    ids that look alike but are distinct facts."""

    memories: dict[str, tuple[str, str]] = field(default_factory=dict)
    groups: list[list[str]] = field(default_factory=list)
    traps: list[tuple[str, str]] = field(default_factory=list)

    def add(self, text: str, theme: str) -> str:
        memory_id = f"m{len(self.memories):06d}"
        self.memories[memory_id] = (text, theme)
        return memory_id


def _fact(rng: random.Random, chinese: bool, v: Vocabulary) -> tuple[str, str, list[str], str]:
    """A fact, its theme, variants that say the same thing, and a look-alike distinct fact."""
    if chinese:
        kind = rng.randrange(5)
        rel, city, name = (
            rng.choice(v["ZH_RELATIONS"]),
            rng.choice(v["ZH_CITIES"]),
            rng.choice(v["ZH_NAMES"]),
        )
        if kind == 0:
            like = rng.choice(v["ZH_LIKES"])
            return (
                f"用户喜欢{like}",
                "爱好",
                [f"用户很喜欢{like}", f"用户非常喜爱{like}。", f"用户特别喜欢{like}"],
                f"用户不喜欢{like}",
            )
        if kind == 1:
            job = rng.choice(v["ZH_JOBS"])
            other = rng.choice([c for c in v["ZH_CITIES"] if c != city])
            return (
                f"用户的{rel}{name}在{city}当{job}",
                "家人",
                [f"用户{rel}{name}在{city}当{job}", f"用户的{rel}{name}在{city}当{job}。"],
                f"用户的{rel}{name}在{other}当{job}",
            )
        if kind == 2:
            month, day = rng.randint(1, 12), rng.randint(1, 27)
            return (
                f"用户{month}月{day}日要去{city}出差",
                "计划",
                [f"用户{month}月{day}号要去{city}出差", f"{month}月{day}日用户要去{city}出差"],
                f"用户{month}月{day + 1}日要去{city}出差",
            )
        if kind == 3:
            food = rng.choice(v["ZH_FOODS"])
            return (
                f"用户爱吃{food}",
                "饮食",
                [f"用户很喜欢吃{food}", f"用户非常爱吃{food}"],
                f"用户不爱吃{food}",
            )
        count = rng.randint(2, 5)
        return (
            f"用户养了{count}只猫",
            "宠物",
            [f"用户养了{count}只猫。", f"用户家里养了{count}只猫"],
            f"用户养了{count + 1}只猫",
        )
    kind = rng.randrange(5)
    rel, city, name, job = (
        rng.choice(v["RELATIONS"]),
        rng.choice(v["CITIES"]),
        rng.choice(v["NAMES"]),
        rng.choice(v["JOBS"]),
    )
    if kind == 0:
        like = rng.choice(v["LIKES"])
        return (
            f"User likes {like}",
            "Interests",
            [f"User enjoys {like}", f"User really loves {like}", f"user likes {like}."],
            f"User dislikes {like}",
        )
    if kind == 1:
        other = rng.choice([n for n in v["NAMES"] if n != name])
        return (
            f"User's {rel} {name} lives in {city}",
            "Family",
            [f"The user's {rel} {name} lives in {city}.", f"User's {rel}, {name}, lives in {city}"],
            f"User's {rel} {other} lives in {city}",
        )
    if kind == 2:
        month, day = rng.choice(MONTHS), rng.randint(1, 27)
        return (
            f"User's flight to {city} is on {day} {month}",
            "Plans",
            [
                f"User flies to {city} on {day} {month}",
                f"user's flight to {city} is on {month} {day}",
            ],
            f"User's flight to {city} is on {day + 2} {month}",
        )
    if kind == 3:
        other = rng.choice([j for j in v["JOBS"] if j != job])
        base = f"User's {rel} {name} works as a {job} at the big hospital near the old river"
        return (
            base,
            "Family",
            [
                base + ".",
                f"The user's {rel} {name} works as a {job} at the big hospital near the old river",
            ],
            base.replace(f" {job} ", f" {other} "),
        )
    hours = rng.randint(2, 9)
    return (
        f"User runs {hours} km every morning before work",
        "Health",
        [
            f"User runs {hours} km every single morning before work",
            f"Every morning before work user runs {hours} km",
        ],
        f"User runs {hours + 3} km every morning before work",
    )


def _filler(rng: random.Random, n: int, v: Vocabulary) -> tuple[str, str]:
    """A distinct fact that duplicates nothing (names, cities and numbers make it unique)."""
    if n % 3 == 2:
        return (
            f"用户的{rng.choice(v['ZH_RELATIONS'])}{rng.choice(v['ZH_NAMES'])}住在{rng.choice(v['ZH_CITIES'])}，"
            f"编号{n}",
            "杂项",
        )
    return (
        f"User's {rng.choice(v['RELATIONS'])} {rng.choice(v['NAMES'])} moved to "
        f"{rng.choice(v['CITIES'])} in {1950 + n % 70} with item {n}",
        "Notes",
    )


def planted_set(total: int = 1000, groups: int = 150, seed: int = 14) -> PlantedSet:
    """`total` memories, `groups` planted duplicate groups (sizes 2-4, half Chinese), one trap
    beside every other group, the rest distinct fillers; deterministic for a seed."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(total, rng)
    planted = PlantedSet()
    seen: set[str] = set()
    while len(planted.groups) < groups:
        chinese = len(planted.groups) % 2 == 1
        base, theme, variants, trap = _fact(rng, chinese, vocabulary)
        if base in seen or trap in seen or any(v in seen for v in variants):
            continue
        size = 2 if len(planted.groups) % 5 < 3 else (3 if len(planted.groups) % 5 < 4 else 4)
        members = [base, *variants][: max(2, min(size, len(variants) + 1))]
        seen.update([base, trap, *variants])
        planted.groups.append([planted.add(text, theme) for text in members])
        if len(planted.groups) % 2 == 0:
            planted.traps.append((planted.groups[-1][0], planted.add(trap, theme)))
    n = 0
    while len(planted.memories) < total:
        text, theme = _filler(rng, n, vocabulary)
        n += 1
        if text not in seen:
            seen.add(text)
            planted.add(text, theme)
    return planted


def score(planted: PlantedSet, found: list[list[str]]) -> tuple[float, float, int]:
    """(share of planted groups found whole, pairwise precision of `found`, traps merged)."""
    group_of = {m: i for i, group in enumerate(planted.groups) for m in group}
    where = {m: i for i, group in enumerate(found) for m in group}
    whole = sum(
        1 for group in planted.groups if len({where.get(m, f"alone:{m}") for m in group}) == 1
    )
    right = wrong = 0
    for group in found:
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                same = first in group_of and group_of[first] == group_of.get(second)
                right, wrong = (right + 1, wrong) if same else (right, wrong + 1)
    traps = sum(1 for a, b in planted.traps if a in where and where[a] == where.get(b))
    precision = right / (right + wrong) if right + wrong else 1.0
    return whole / len(planted.groups), precision, traps
