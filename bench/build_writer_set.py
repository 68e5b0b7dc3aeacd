"""Build tests/data/writer_set.json, the labelled turns of bench/writer_quality.py, from public
dialogue data fetched to /work/coord/data (see tests/data/README.md for sources and licences).

- English facts: Synthetic-Persona-Chat (test split): a "User 2" utterance that restates one of
  that user's persona lines; the gold words are the persona line's rarer content words that the
  utterance also holds (the dataset's own annotation, matched mechanically).
- Chinese facts: MemoryBank (SiliconFriend) Chinese dialogues: user queries that state a name or
  a liking, gold words picked by hand (listed below).
- Small talk: XDailyDialog utterances (en and zh, parallel) without a first-person word.
- Updates and forget requests: a fact from the sets above, then a change or a request to forget
  it, written here from templates (said so in each case's `source`).

Every case gets a split, "dev" or "heldout", from a hash of its id (about one in three held out).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from pathlib import Path

DATA = Path("/work/coord/data")
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "writer_set.json"
STOP_WORDS = (
    "i i'm im a an the my me to and of in on at is am are be have has for with like love really "
    "very so just also it that this do not but or from as go going been was were favorite "
    "favourite enjoy lot lots new one two"
)
# Words too common to show that a memory kept the fact (WEAK), or any content (STOP).
WEAK_WORDS = "work live want hate many listen meet build ride lead under spend play time"
STOP, WEAK = frozenset(re.findall(r"\S+", STOP_WORDS)), frozenset(re.findall(r"\S+", WEAK_WORDS))
# fmt: off
ZH_FACTS = [  # (query as in memory_bank_cn.json, gold words: any one of them)
    ("你好，我叫张曼婷，很高兴认识你。", ["张曼婷"]),
    ("嗯，我们可以聊聊我的兴趣爱好吧。我喜欢徒步、长跑、打篮球、军事史研究和攀岩。",
     ["徒步", "攀岩", "篮球"]),
    ("我喜欢喜剧和爱情片。", ["喜剧", "爱情"]),
    ("恩，我喜欢唱歌跳舞，健身，旅游，电影，摄影。", ["唱歌", "跳舞", "摄影", "健身"]),
    ("哈哈，我喜欢做红烧鱼，今天午饭就吃了它。", ["红烧鱼"]),
    ("你好，我叫周立。", ["周立"]),
    ("是的，我喜欢户外活动，像滑板、攀岩和街舞等等。", ["滑板", "攀岩", "街舞"]),
    ("我喜欢摇滚音乐，我喜欢AC/DC、枪与玫瑰等摇滚乐队。", ["摇滚"]),
    ("我喜欢听古典音乐、看文艺电影，也喜欢写作、品茶、收藏一些东西。", ["古典", "品茶", "写作"]),
    ("你好，我叫宫晓燕，很高兴认识你！", ["宫晓燕"]),
    ("你好，我叫郝明，很高兴认识你。", ["郝明"]),
    ("我喜欢晴朗、温暖的天气。你昨天有新的任务吗？", ["晴朗", "温暖"]),
]
# fmt: on
UPDATES = [  # (first fact, change, old word, new word)
    (
        "I work as a nurse at the city hospital.",
        "I changed jobs: I am a teacher now.",
        "nurse",
        "teacher",
    ),
    ("I live in Boston.", "I just moved to Denver.", "Boston", "Denver"),
    (
        "My favorite season is autumn.",
        "Actually, spring is my favorite season now.",
        "autumn",
        "spring",
    ),
    ("I drive a red Honda.", "I sold my Honda and bought a bicycle instead.", "Honda", "bicycle"),
    ("我住在杭州。", "我上个月搬到上海了。", "杭州", "上海"),
    ("我最喜欢的水果是苹果。", "我现在最喜欢的水果是芒果了。", "苹果", "芒果"),
]  # fmt: skip
FORGETS = [  # (fact, forget request, word that must be gone)
    ("I have a turtle named Timothy.", "Please forget that I have a turtle.", "Timothy"),
    ("I like to dance at the club.", "Forget what I said about dancing at the club.", "dance"),
    ("我喜欢做红烧鱼。", "请忘掉我喜欢做红烧鱼这件事。", "红烧鱼"),
    ("我养了一只叫豆豆的猫。", "把我养猫的事忘了吧。", "豆豆"),
]  # fmt: skip


def split_of(case_id: str) -> str:
    return "heldout" if int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z']+", text.lower()) if w not in STOP and len(w) > 3]


def english_facts(limit: int) -> list[dict[str, object]]:
    with open(DATA / "synthetic-persona-chat" / "test.csv") as source:
        rows = list(csv.DictReader(source))
    cases: list[dict[str, object]] = []
    for number, row in enumerate(rows):
        personas = [p.strip() for p in row["user 2 personas"].splitlines() if p.strip()]
        for line in row["Best Generated Conversation"].splitlines():
            if not line.startswith("User 2:") or len(line) > 160 or "[" in line:
                continue
            said = line.removeprefix("User 2:").strip()
            for persona in personas:
                matched = [w for w in words(persona) if w in words(said)]
                gold = [w for w in matched if w not in WEAK]  # words a memory must keep
                if len(matched) >= 2 and gold and said.lower().startswith(("i ", "i'm", "my ")):
                    cases.append({
                        "id": f"spc-{number}", "kind": "fact", "language": "en",
                        "turns": [said], "gold": gold[:3], "persona": persona,
                        "source": f"Synthetic-Persona-Chat test.csv row {number}",
                    })  # fmt: skip
                    break
            else:
                continue
            break
        if len(cases) >= limit:
            break
    return cases


def small_talk(limit: int) -> list[dict[str, object]]:
    base = DATA / "xdailydialog"
    english = (base / "dialogues_text_En.txt").read_text().splitlines()
    chinese = (base / "dialogues_text_Zh.txt").read_text().splitlines()
    cases: list[dict[str, object]] = []
    for number, (en, zh) in enumerate(zip(english, chinese, strict=False)):
        pairs = zip(en.split("__eou__"), zh.split("__eou__"), strict=False)
        for en_line, zh_line in pairs:
            en_line, zh_line = " ".join(en_line.split()), zh_line.strip()
            if not (20 <= len(en_line) <= 90) or re.search(r"\b(i|my|me|i'm|we|our)\b",
                                                           en_line.lower()):  # fmt: skip
                continue
            if "我" in zh_line or not zh_line:
                continue
            for language, text in (("en", en_line), ("zh", zh_line)):
                cases.append({
                    "id": f"xdd-{number}-{language}", "kind": "small_talk", "language": language,
                    "turns": [text], "gold": [], "source": f"XDailyDialog dialogue {number}",
                })  # fmt: skip
            break
        if len(cases) >= limit:
            break
    return cases


def build() -> list[dict[str, object]]:
    cases = english_facts(16)
    for number, (query, gold) in enumerate(ZH_FACTS):
        cases.append({"id": f"mb-zh-{number}", "kind": "fact", "language": "zh", "turns": [query],
                      "gold": gold, "source": "MemoryBank memory_bank_cn.json query"})  # fmt: skip
    cases += small_talk(16)
    for number, (fact, change, old, new) in enumerate(UPDATES):
        language = "zh" if re.search(r"[\u4e00-\u9fff]", fact) else "en"
        cases.append({"id": f"update-{number}", "kind": "update", "language": language,
                      "turns": [fact, change], "gold": [new], "gone": [old],
                      "source": "template on a persona-style fact"})  # fmt: skip
    for number, (fact, request, gone) in enumerate(FORGETS):
        language = "zh" if re.search(r"[\u4e00-\u9fff]", fact) else "en"
        cases.append({"id": f"forget-{number}", "kind": "forget", "language": language,
                      "turns": [fact, request], "gold": [], "gone": [gone],
                      "source": "template on a fact from the sets above"})  # fmt: skip
    for case in cases:
        case["split"] = split_of(str(case["id"]))
    return cases


if __name__ == "__main__":
    built = build()
    OUT.write_text(json.dumps(built, ensure_ascii=False, indent=1) + "\n")
    kinds = {k: sum(1 for c in built if c["kind"] == k) for k in ("fact", "small_talk", "update",
                                                                   "forget")}  # fmt: skip
    print(f"{len(built)} cases -> {OUT} {kinds}", file=sys.stderr)
