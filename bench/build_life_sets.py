"""Build the recall sets of the kinds that fell (issue 46) into tests/data/recall_sets/.

    python bench/build_life_sets.py RAW_DIR

RAW_DIR holds the public files, copied unchanged from these repositories and commits:

- `cpsycound/case_*.txt`: github:CAS-SIAT-XinHai/CPsyCoun 1954f2e2d01d3b0f568e1673a525a6d3d9a34c03,
  `CPsyCounD/Data/` (3,084 Chinese counselling dialogues, licence CC BY 4.0, LICENSE there).
- `esconv_{train,valid,test}.txt`: github:yulinlp/T5-PEFT be2ffc3fc712312221043fc1bd5e70992a06b13f,
  `dataset/esconv/` (ESConv, CC BY-NC 4.0; the same copy as events_esconv_en).
- `xpersona_zh_{valid,test}.json`: github:HLTCHKUST/Xpersona
  1da049a1bbf3b01548f98cc23ba75ef871416e50,
  `dataset/Zh_persona_split_{valid,test}_human_annotated.json` (MIT).
- `spc_{valid,test}.csv`: github:google-research-datasets/Synthetic-Persona-Chat
  1f367a0f05d388ca96ebbbc9e5752ab19ac76510, `data/Synthetic-Persona-Chat_{valid,test}.csv`
  (CC BY 4.0).

Four sets, in the format of tests/data/build_recall_sets.py (whose hash split and helpers this
reuses); every choice by a SHA-1 of a fixed key, the splits fixed before any retrieval ran:

- `events_cpsycoun_zh`: a client's first message in a counselling session (the event or worry
  they open with) is a memory; the question is the conversation so far in the client's later
  words: their next messages up to and including the first that asks what to do (type
  `advice`), else their next two (type `telling`); gold = the opening message. 1,200 sessions
  in pools of about 100 (each question among about 99 other people's openings).
- `events_esconv_advice_en`: ESConv's situation (written by the help-seeker before the chat)
  is a memory; the question is the seeker's messages from the first up to the first that asks
  what to do (only chats with such a message; type `advice`); pools of about 100.
- `facts_xpersona_zh` / `facts_spc_en`: a user's store of everyday facts (a persona sentence
  about where they live, their work, car, pet, family, favourite things) among about ten times as
  many lines of their chats on other days; a direct question per fact ("我住在哪里？", "What car do
  I drive?", type the slot); one fact of a slot per store, so each question has one answer.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "data"))

from build_recall_sets import digest, split_of

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "recall_sets"
POOL_SIZE = 100

# Asking what to do about one's own situation (not a recommendation among things).
_WHAT_TO_DO_ZH = re.compile(
    r"怎么办|该怎么|应该怎么|如何|怎样才能|怎么才能|有什么建议|有什么办法|我该|我应该"
)
_WHAT_TO_DO_EN = re.compile(
    r"\b(what (should|can|could|do you think) i|how (can|could|do|should) i|any (advice|tips|"
    r"suggestions)|do you have any (advice|suggestions|tips|ideas)|what would you (do|suggest)|"
    r"should i)\b",
    re.IGNORECASE,
)


def write(name: str, data: dict) -> None:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    counts = {s: sum(q["split"] == s for q in data["queries"]) for s in ("tuning", "held-out")}
    pools = len({m["pool"] for m in data["memories"]})
    print(f"{name}: {len(data['memories'])} memories, {pools} pools, queries {counts}")


def dealt(name: str, found: list[dict], key: Callable[[dict], str]) -> tuple[list, list]:
    """Split `found` (each {"memory", "question", "type"}) by the hash of its key, deal each
    split into pools of about POOL_SIZE in hash order: (memories, queries)."""
    memories, queries = [], []
    for split in ("tuning", "held-out"):
        mine = sorted((f for f in found if split_of(f"{name}:{key(f)}") == split),
                      key=lambda f: digest(f"{name}-order:{key(f)}"))  # fmt: skip
        pools = max(1, round(len(mine) / POOL_SIZE))
        for number, item in enumerate(mine):
            pool = f"{name}-{split}-p{number % pools:02d}"
            memory_id = f"{pool}/{digest(f'{name}-id:{key(item)}'):08x}"
            memories.append({"id": memory_id, "text": item["memory"], "said_at": None,
                             "thread": None, "pool": pool})  # fmt: skip
            queries.append({"id": memory_id + "/q", "question": item["question"],
                            "asked_at": None, "relevant": [memory_id], "type": item["type"],
                            "split": split, "pool": pool})  # fmt: skip
    return memories, queries


def client_messages(path: Path) -> list[str]:
    said = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("来访者："):
            said.append(line.removeprefix("来访者：").strip())
    return [text for text in said if text]


def events_cpsycoun(raw: Path) -> None:
    cases = sorted(raw.glob("cpsycound/case_*.txt"), key=lambda p: digest("cpsycoun:" + p.name))
    found = []
    for path in cases:
        said = client_messages(path)
        if len(said) < 3 or len(said[0]) < 10:
            continue
        later = said[1:5]
        asking = next((i for i, text in enumerate(later) if _WHAT_TO_DO_ZH.search(text)), None)
        kind = "advice" if asking is not None else "telling"
        question = " ".join(later[: asking + 1] if asking is not None else later[:2])
        found.append({"memory": said[0], "question": question, "type": kind, "key": path.stem})
        if len(found) == 1200:
            break
    memories, queries = dealt("events_cpsycoun_zh", found, lambda f: f["key"])
    write("events_cpsycoun_zh", {
        "about": "CPsyCounD (Chinese counselling dialogues): a client's first message (the event "
                 "or worry they open with) is a memory; the question is the client's next "
                 "messages up to the first asking what to do (type advice), else the next two "
                 "(type telling); gold = the opening. 1,200 sessions by a hash, pools of about "
                 "100. Undated, no threads. Built by bench/build_life_sets.py.",
        "source": "github:CAS-SIAT-XinHai/CPsyCoun 1954f2e2d01d3b0f568e1673a525a6d3d9a34c03 "
                  "CPsyCounD/Data/case_*.txt",
        "licence": "CC BY 4.0 (CPsyCoun)",
        "kind": "events", "lang": "zh", "text_source": None,
        "memories": memories, "queries": queries,
    })  # fmt: skip


def events_esconv_advice(raw: Path) -> None:
    rows = [json.loads(line) for name in ("train", "valid", "test")
            for line in (raw / f"esconv_{name}.txt").read_text(encoding="utf-8").splitlines()
            if line.strip()]  # fmt: skip
    found = []
    for row in rows:
        said = [d["text"].strip() for d in row["dialog"] if d["speaker"] == "usr"]
        said = [text for text in said if text]
        asking = next((i for i, text in enumerate(said) if _WHAT_TO_DO_EN.search(text)), None)
        situation = " ".join(row["situation"].split())
        if asking is None or not situation:
            continue
        question = " ".join(said[: asking + 1])
        if len(question.split()) > 120:  # the ask comes late: keep its last 120 words
            question = " ".join(question.split()[-120:])
        found.append({"memory": situation, "question": question, "type": "advice",
                      "key": situation + "|" + said[0]})  # fmt: skip
    memories, queries = dealt("events_esconv_advice_en", found, lambda f: f["key"])
    write("events_esconv_advice_en", {
        "about": "ESConv (emotional-support chats): each help-seeker's situation, written before "
                 "the chat, is a memory; the question is the seeker's messages from the first up "
                 "to the first asking what to do (at most its last 120 words; chats without such "
                 "a message left out); gold = that chat's situation. Pools of about 100 by a "
                 "hash. Undated, no threads. Built by bench/build_life_sets.py.",
        "source": "github:yulinlp/T5-PEFT be2ffc3fc712312221043fc1bd5e70992a06b13f "
                  "dataset/esconv/{train,valid,test}.txt (ESConv)",
        "licence": "CC BY-NC 4.0 (ESConv)",
        "kind": "events", "lang": "en", "text_source": None,
        "memories": memories, "queries": queries,
    })  # fmt: skip


# A fact's slot and the direct question asking it; the first pattern that matches decides.
SLOTS_ZH: list[tuple[str, re.Pattern[str], str]] = [
    ("home", re.compile(r"^我(现在)?住在"), "我住在哪里？"),
    ("origin", re.compile(r"^我(来自|出生在|出生于)"), "我来自哪里？"),
    ("car", re.compile(r"^我(开|有一辆|拥有一辆|驾驶)"), "我开什么车？"),
    ("pet", re.compile(r"^我(养了|有一只|有两只|有三只|有一条|拥有一只)"), "我养了什么宠物？"),
    (
        "work",
        re.compile(
            r"^我(是一名|是一位|在.{1,12}工作|的工作是|从事|是(一个|个)?(医生|老师|教师|"
            r"护士|律师|工程师|程序员|厨师|司机|推销员|图书馆员|会计|警察|消防员|农民|作家|"
            r"演员|歌手|画家|教授|模特|服务员|销售员|店员|经理|记者|兽医|牙医|飞行员))"
        ),
        "我是做什么工作的？",
    ),
    ("children", re.compile(r"^我有(一|两|三|四|五|六|\d)个(孩子|儿子|女儿)"), "我有几个孩子？"),
    (
        "school",
        re.compile(r"^我(在.{1,10}(上学|读书|读大学|上大学)|是(一名)?(大学生|高中生|学生))"),
        "我在哪里上学？",
    ),
    ("married", re.compile(r"^我(已婚|结婚了|单身|离婚了|离异)"), "我结婚了吗？"),
    (
        "family",
        re.compile(
            r"^我的?(父亲|母亲|爸爸|妈妈|妻子|丈夫|老公|老婆|哥哥|姐姐|弟弟|妹妹|儿子|女儿)(是|在|当)"
        ),
        "我{0}是做什么的？",
    ),
    ("favourite", re.compile(r"^我最喜欢的(.{1,4}?)是"), "我最喜欢的{0}是什么？"),
    ("age", re.compile(r"^我(今年)?\d+岁"), "我多大了？"),
]
SLOTS_EN: list[tuple[str, re.Pattern[str], str]] = [
    ("home", re.compile(r"^i (currently )?live (in|on|near)\b", re.I), "Where do I live?"),
    (
        "origin",
        re.compile(r"^i (am|'m) (originally )?from\b|^i was born in\b", re.I),
        "Where am I from?",
    ),
    ("car", re.compile(r"^i (drive|own a car|have a car)\b", re.I), "What car do I drive?"),
    (
        "pet",
        re.compile(
            r"^i (have|own) (a|an|two|three|\d+) (dogs?|cats?|pets?|fish|birds?|"
            r"hamsters?|rabbits?|horses?|snakes?|parrots?)\b",
            re.I,
        ),
        "What pets do I have?",
    ),
    (
        "work",
        re.compile(
            r"^i (work (as|at|in|for)|am a (nurse|teacher|doctor|lawyer|"
            r"\w+ (engineer|teacher|manager|worker|designer|developer))\b)",
            re.I,
        ),
        "What do I do for work?",
    ),
    (
        "family",
        re.compile(
            r"^my (father|mother|dad|mom|wife|husband|brother|sister|son|"
            r"daughter) (is an? |was an? |works)",
            re.I,
        ),
        "What does my {0} do?",
    ),
    (
        "children",
        re.compile(
            r"^i have (one|two|three|four|five|\d+) (kids|children|sons|daughters)"
            r"\b",
            re.I,
        ),
        "How many kids do I have?",
    ),
    (
        "school",
        re.compile(r"^i (am a (college |high school )?student|go to|study at|attend)\b", re.I),
        "Where do I go to school?",
    ),
    ("married", re.compile(r"^i (am|'m) (married|single|divorced)\b", re.I), "Am I married?"),
    (
        "favourite",
        re.compile(r"^my favou?rite (\w+( \w+)?) (is|are)\b", re.I),
        "What is my favorite {0}?",
    ),
    ("age", re.compile(r"^i am \d+ years old\b|^i'm \d+ years old\b", re.I), "How old am I?"),
]


def slot_of(fact: str, slots: list) -> tuple[str, str] | None:
    """(slot, question) of a fact, the slot naming its object (`family:妈妈`), or None."""
    for name, pattern, template in slots:
        match = pattern.search(fact.strip())
        if match:
            detail = match.group(1).lower() if "{0}" in template else ""
            return f"{name}:{detail}", template.format(detail)
    return None


def facts_sets(personas: list[tuple[list[str], list[str]]], name: str, lang: str,
               slots: list, about: str, source: str, licence: str) -> None:  # fmt: skip
    """`personas`: (persona sentences, the persona holder's chat lines). Each store (pool):
    at most one fact a slot, in hash order, each with its question, and ten times as many
    other lines (persona sentences without a slot, chat lines) of the same split."""
    facts: list[tuple[str, str, str]] = []  # (slot, question, fact)
    other: list[str] = []
    seen = set()
    for sentences, lines in personas:
        for sentence in sentences:
            text = sentence.strip()
            if text in seen:
                continue
            seen.add(text)
            asked = slot_of(text, slots)
            if asked:
                facts.append((asked[0], asked[1], text))
            else:
                other.append(text)
        other.extend(line.strip() for line in lines if line.strip() and line.strip() not in seen)
    facts.sort(key=lambda f: digest(f"{name}-fact:{f[2]}"))
    other = sorted(dict.fromkeys(other), key=lambda t: digest(f"{name}-other:{t}"))
    memories, queries = [], []
    for split in ("tuning", "held-out"):
        mine = [f for f in facts if split_of(f"{name}:{f[2]}") == split]
        fillers = [t for t in other if split_of(f"{name}:{t}") == split]
        pools: list[dict[str, tuple[str, str]]] = []
        for slot, question, fact in mine:  # one fact of a slot per store
            home = next((p for p in pools if slot not in p and len(p) < 18), None)
            if home is None:
                home = {}
                pools.append(home)
            home[slot] = (question, fact)
        per_pool = len(fillers) // max(1, len(pools))
        for number, pool_facts in enumerate(pools):
            pool = f"{name}-{split}-p{number:02d}"
            count = min(per_pool, 10 * len(pool_facts))
            for position, text in enumerate(fillers[number * per_pool :][:count]):
                memories.append({"id": f"{pool}/o{position:03d}", "text": text, "said_at": None,
                                 "thread": None, "pool": pool})  # fmt: skip
            for slot, (question, fact) in sorted(pool_facts.items()):
                memory_id = f"{pool}/{digest(f'{name}-id:{fact}'):08x}"
                memories.append({"id": memory_id, "text": fact, "said_at": None,
                                 "thread": None, "pool": pool})  # fmt: skip
                queries.append({"id": memory_id + "/q", "question": question, "asked_at": None,
                                "relevant": [memory_id], "type": slot.split(":")[0],
                                "split": split, "pool": pool})  # fmt: skip
    write(name, {"about": about, "source": source, "licence": licence, "kind": "facts",
                 "lang": lang, "text_source": None, "memories": memories,
                 "queries": queries})  # fmt: skip


def facts_xpersona(raw: Path) -> None:
    personas = []
    for split in ("valid", "test"):
        for dialogue in json.loads((raw / f"xpersona_zh_{split}.json").read_text("utf-8")):
            personas.append((dialogue["persona"], [pair[1] for pair in dialogue["dialogue"]
                                                   if len(pair) > 1]))  # fmt: skip
    facts_sets(
        personas,
        "facts_xpersona_zh",
        "zh",
        SLOTS_ZH,
        "XPersona Chinese: a store of a user's everyday facts (persona sentences about "
        "home, origin, car, pet, work, family, favourites, age; one per slot a store) "
        "among ten times as many other lines (persona sentences of no slot, chat lines "
        "of other days); a direct question per fact from a template (我住在哪里？, "
        "我开什么车？, 我妈妈是做什么的？). Built by bench/build_life_sets.py.",
        "github:HLTCHKUST/Xpersona 1da049a1bbf3b01548f98cc23ba75ef871416e50 "
        "dataset/Zh_persona_split_{valid,test}_human_annotated.json",
        "MIT (XPersona)",
    )


def facts_spc(raw: Path) -> None:
    personas = []
    for split in ("valid", "test"):
        with (raw / f"spc_{split}.csv").open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                lines = [line.removeprefix("User 1:").strip()
                         for line in row["Best Generated Conversation"].splitlines()
                         if line.startswith("User 1:")]  # fmt: skip
                personas.append((row["user 1 personas"].splitlines(), lines))
    facts_sets(
        personas,
        "facts_spc_en",
        "en",
        SLOTS_EN,
        "Synthetic-Persona-Chat: a store of a user's everyday facts (persona sentences "
        "about home, origin, car, pet, work, family, favourites, age; one per slot a "
        "store) among ten times as many other lines (persona sentences of no slot, "
        "User 1's chat lines); a direct question per fact from a template (Where do I "
        "live?, What car do I drive?). Built by bench/build_life_sets.py.",
        "github:google-research-datasets/Synthetic-Persona-Chat "
        "1f367a0f05d388ca96ebbbc9e5752ab19ac76510 data/Synthetic-Persona-Chat_"
        "{valid,test}.csv",
        "CC BY 4.0 (Synthetic-Persona-Chat)",
    )


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/coord/data/life")
    events_cpsycoun(folder)
    events_esconv_advice(folder)
    facts_xpersona(folder)
    facts_spc(folder)
