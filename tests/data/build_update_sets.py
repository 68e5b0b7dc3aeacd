"""Build the recall sets of issue 31 with knowledge updates and questions about time
(tests/data/recall_sets/assistant_updates_spc_en.json, assistant_updates_xpersona_zh.json) from
the raw public files in /work/coord/data (each folder holds the repository and commit in
`COMMIT`).

    python tests/data/build_update_sets.py [RAW_DIR]

No labelled public set of this kind could be used (tests/data/README.md, "Knowledge updates and
questions about time"), so the histories are put together mechanically from real lines: a
synthetic user talks with the assistant over many dated sessions, each session the lines of one
public dialogue. Lines that state a value of a slot (where the user lives, their work, their pet,
a favourite thing, what they study) are found by regular expressions; for each chosen slot two
such lines from different dialogues, with different values, are placed in the user's history,
the older in an early session and the newer in a late one. The user then asks

  knowledge-update  "Where do I live now?"  gold = the newer line, `outdated` = the older one
  temporal          "When did I tell you that I live in Ohio?" (the older line's own matched
                    words) gold = the older line, `conflicting` = the newer one

The question templates are the only text written here; every memory is a line of the source,
unchanged. Lines of the filler sessions that could state another value of one of the user's
slots (a looser expression per slot) are left out, so no unlabelled third value competes.
Deterministic: every choice by a SHA-1 of a fixed key; the split (whole users, about a third
held-out) was fixed here before any bench ran on these sets. Same format as
build_recall_sets.py, plus `outdated` / `conflicting` ids on the questions.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from build_recall_sets import RAW, commit_of, digest, split_of, write

START = datetime(2024, 1, 8, tzinfo=UTC)
VAGUE = re.compile(r"^(?:there|here|it|that|那儿|那里|这里|这儿|我们这里|那边|这边)$")
# a line of a persona that is a program, or with a placeholder ("[User 1's name]"): not a user's
BOT = re.compile(r"\b(?:AI|A\.I\.|language model|chatbot|the cloud|computer program|virtual "
                 r"assistant|Google)\b|\[|云里|云端|云中|机器人|人工智能|计算机程序")  # fmt: skip


@dataclass(frozen=True)
class Slot:
    key: str  # "live", "job", "favorite:color", ...
    strict: re.Pattern[str]  # states a value: group "value" holds it
    loose: re.Pattern[str]  # could state a value: kept out of the user's filler lines
    update: str  # the question asking for the current value
    when: str  # the question asking when a value was told ("{span}": the matched words)


# ── English: Synthetic-Persona-Chat lines ────────────────────────────────────────────────

ANIMALS = ("dog|cat|hamster|fish|parrot|bird|rabbit|bunny|turtle|tortoise|snake|horse|lizard|"
           "guinea pig|ferret|goldfish|puppy|kitten|pig|goat|chicken|cow|iguana")  # fmt: skip
FAVORITES_EN = ("color", "food", "movie", "book", "band", "season", "sport", "animal", "singer",
                "show", "team", "drink", "genre", "artist", "game", "holiday", "subject",
                "restaurant", "fruit", "flower", "car", "author", "song", "music", "hobby",
                "place", "actor", "dessert", "video game", "tv show", "city")  # fmt: skip
END_EN = r"(?=\s*(?:[.,!?;:]|\band\b|\bbut\b|\bwith\b|\bso\b|\bwhich\b|\bwhere\b|$))"


def slots_en() -> list[Slot]:
    value = r"(?P<value>[^.,!?;:]{2,60}?)" + END_EN
    found = [
        Slot(
            "live",
            re.compile(r"\bI (?:currently |now )?live in " + value),
            re.compile(
                r"\bI(?: currently| now| still|'ve| have)? (?:live|lived|living|moved|"
                r"grew up)\b|\bI'm (?:living|moving|from)\b|\bI am (?:living|moving|"
                r"from)\b|\bmy (?:home ?town|city|town|state|neighborhood)\b",
                re.I,
            ),
            "Where do I live now?",
            "When did I tell you that {span}?",
        ),
        Slot(
            "job",
            re.compile(r"\bI work (?:as|at|for) " + value),
            re.compile(
                r"\bI(?:'m| am)? (?:work|worked|working)\b|\bmy (?:job|work|boss|"
                r"co-?workers?|colleagues?|office|shift|career)\b|\bby (?:trade|"
                r"profession)\b",
                re.I,
            ),
            "What do I do for work now?",
            "When did I tell you that {span}?",
        ),
        Slot(
            "pet",
            re.compile(
                r"\bI (?:have|own) (?:a|an|one|two|three|four|\d+) (?:pet |little |"
                r"big |old |young )?(?P<value>" + ANIMALS + r")(?:s|es)?\b"
            ),
            re.compile(
                r"\b(?:my|I have|I've got|I own|I adopted|I got|I rescued)\b[^.!?]{0,40}"
                r"\b(?:pets?|" + ANIMALS + r")(?:s|es)?\b",
                re.I,
            ),
            "What pet do I have now?",
            "When did I tell you that {span}?",
        ),
        Slot(
            "study",
            re.compile(r"\bI(?:'m| am) (?:studying|majoring in) " + value),
            re.compile(
                r"\bI(?:'m| am)? (?:study|studying|majoring|a student)\b|\bmy (?:major|"
                r"studies|degree|classes|college|university)\b",
                re.I,
            ),
            "What am I studying now?",
            "When did I tell you that {span}?",
        ),
    ]
    for thing in FAVORITES_EN:
        found.append(Slot(
            f"favorite:{thing}",
            re.compile(r"\b[Mm]y (?:all-time |absolute )?favou?rite " + thing + r" is " + value),
            re.compile(r"\bfavou?rite " + thing + r"s?\b", re.I),
            f"What is my favorite {thing} now?", "When did I tell you that {span}?"))  # fmt: skip
    return found


def spc_rows() -> list[dict[str, str]]:
    rows = []
    for name in ("valid", "test"):
        path = RAW / "spc" / f"Synthetic-Persona-Chat_{name}.csv"
        rows += list(csv.DictReader(path.open(encoding="utf-8")))
    return rows


def english() -> dict:
    rows = spc_rows()
    dialogues, pool = [], []  # filler sessions (User 1's lines), every line of every dialogue
    for row in rows:
        said = [
            (line[:6], line.split(":", 1)[1].strip())
            for line in row["Best Generated Conversation"].splitlines()
            if line.startswith(("User 1:", "User 2:")) and line.split(":", 1)[1].strip()
        ]
        mine = [text for who, text in said if who == "User 1" and not BOT.search(text)]
        if len(mine) >= 4:
            dialogues.append({"key": row["user 1 personas"] + "|" + mine[0], "lines": mine})
        pool += [text for _, text in said]
    return build("assistant_updates_spc_en", "en", slots_en(), dialogues, pool,
                 sessions=16, slots_per_user=4, users=48)  # fmt: skip


# ── Chinese: XPersona lines and persona sentences ────────────────────────────────────────

FAVORITES_ZH = ("颜色", "食物", "电影", "书", "乐队", "歌手", "季节", "运动", "动物", "音乐",
                "节目", "电视节目", "游戏", "饮料", "水果", "花", "歌", "演员", "作家", "节日",
                "爱好", "活动", "城市", "菜", "甜点", "车")  # fmt: skip
COUNT_ZH = r"(?:一|两|三|二|几)(?:只|条|匹|头)"  # "一只", "两条", ...
PLACE_ZH = r"(?P<place>[^，。！？,.!?；;\s]{1,15})"
END_ZH = r"(?P<value>[^，。！？,.!?；;：:、\s]{1,20})"
ANIMAL_ZH = r"(?P<value>[^，。！？,.!?；;\s的]{1,8})"


def slots_zh() -> list[Slot]:
    found = [
        Slot("live", re.compile(r"我(?:现在)?住在" + END_ZH),
             re.compile(r"住在|住的|搬到|搬家|老家|家乡|来自|我住"),
             "我现在住在哪里？", "我是什么时候跟你说{span}的？"),
        Slot("job", re.compile(r"我是一名" + END_ZH + r"|我在" + PLACE_ZH + r"工作"),
             re.compile(r"工作|职业|上班|老板|同事|我是一名|我是一位"),
             "我现在做什么工作？", "我是什么时候跟你说{span}的？"),
        Slot("pet", re.compile(r"我(?:有|养了|养)" + COUNT_ZH + ANIMAL_ZH),
             re.compile(r"宠物|狗|猫|仓鼠|鹦鹉|乌龟|兔子|金鱼|我养|我有" + COUNT_ZH),
             "我现在养的是什么宠物？", "我是什么时候跟你说{span}的？"),
    ]  # fmt: skip
    for thing in FAVORITES_ZH:
        found.append(Slot(
            f"favorite:{thing}", re.compile(r"我(?:最)?喜欢的" + thing + r"是" + END_ZH),
            re.compile(r"喜欢的" + thing), f"我现在最喜欢的{thing}是什么？",
            "我是什么时候跟你说{span}的？"))  # fmt: skip
    return found


def chinese() -> dict:
    raw = []
    for name in ("valid", "test"):
        path = RAW / "xpersona" / f"Zh_persona_split_{name}_human_annotated.json"
        raw += json.loads(path.read_text(encoding="utf-8"))
    dialogues, pool, seen = [], [], set()
    for item in raw:
        said = [pair[1].strip() for pair in item["dialogue"] if len(pair) > 1 and pair[1]]
        lines = [text for text in said if not BOT.search(text)]
        key = "".join(item["persona"]) + "|" + (lines[0] if lines else "")
        if key in seen or len(lines) < 4:
            continue
        seen.add(key)
        dialogues.append({"key": key, "lines": lines})
        pool += [text.strip() for pair in item["dialogue"] for text in pair if text.strip()]
        pool += [p.strip() for p in item["persona"]]
    return build("assistant_updates_xpersona_zh", "zh", slots_zh(), dialogues, pool,
                 sessions=11, slots_per_user=3, users=40)  # fmt: skip


# ── the common construction ──────────────────────────────────────────────────────────────


def norm(value: str) -> str:
    value = value.lower().strip(" '\"")
    for lead in ("a ", "an ", "the ", "my "):
        if value.startswith(lead):
            value = value[len(lead) :]
    return value.rstrip("s")


def stated(line: str, slots: list[Slot]) -> tuple[Slot, re.Match[str]] | None:
    """The one slot the line states a value of, when it states exactly one slot and could
    state no other (a line saying where the user lives and what they work at is not used)."""
    strict = [(slot, m) for slot in slots if (m := slot.strict.search(line))]
    if len(strict) != 1:
        return None
    slot, match = strict[0]
    if any(other.loose.search(line) for other in slots if other.key != slot.key):
        return None
    return slot, match


def value_of(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return norm(groups.get("value") or groups.get("place") or "")


def pairs_of(pool: list[str], slots: list[Slot], lang: str) -> dict[str, list[tuple]]:
    """Per slot, pairs (older, newer) of distinct lines with different values, each line used
    once, paired in the order of a hash of the line."""
    by_slot: dict[str, list[tuple[str, re.Match[str]]]] = defaultdict(list)
    seen = set()
    for line in pool:
        if line in seen or BOT.search(line):
            continue
        seen.add(line)
        found = stated(line, slots)
        if found and value_of(found[1]) and not VAGUE.match(value_of(found[1])):
            by_slot[found[0].key].append((line, found[1]))
    pairs: dict[str, list[tuple]] = {}
    for key, lines in by_slot.items():
        lines.sort(key=lambda item: digest(f"{lang}:line:{item[0]}"))
        free, made = list(lines), []
        while free:
            first = free.pop(0)
            for index, second in enumerate(free):
                a, b = value_of(first[1]), value_of(second[1])
                if a in b or b in a or a in second[0].lower() or b in first[0].lower():
                    continue
                made.append((first, second))
                free.pop(index)
                break
        if made:
            pairs[key] = made
    return pairs


def span_of(match: re.Match[str], lang: str) -> str:
    span = match.group(0).strip()
    if lang == "en" and span.startswith("My "):
        span = "my " + span[3:]
    return span


def build(name: str, lang: str, slots: list[Slot], dialogues: list[dict], pool: list[str],
          sessions: int, slots_per_user: int, users: int) -> dict:  # fmt: skip
    by_key = {slot.key: slot for slot in slots}
    pairs = pairs_of(pool, slots, lang)
    dialogues = sorted(dialogues, key=lambda d: digest(f"{lang}:session:{d['key']}"))
    early = list(range(1, sessions // 3 + 2))  # the older value: an early session
    late = list(range(sessions - sessions // 3 - 2, sessions))  # the newer: a late one
    memories, queries, next_dialogue = [], [], 0
    for number in range(users):
        user = f"{name}-u{number:02d}"
        split = split_of(user)
        order = sorted(pairs, key=lambda key: digest(f"{user}:slot:{key}"))
        chosen, favorites = [], 0
        for key in order:
            if len(chosen) == slots_per_user or not pairs[key]:
                continue
            if key.startswith("favorite:"):
                if favorites == 2:  # at most two favourites a user: the slots stay varied
                    continue
                favorites += 1
            chosen.append((key, pairs[key].pop(0)))
        if len(chosen) < 2:
            break  # the pairs ran out
        olds = sorted(early, key=lambda s: digest(f"{user}:early:{s}"))
        news = sorted(late, key=lambda s: digest(f"{user}:late:{s}"))
        inserted: dict[int, tuple[str, str, str]] = {}  # session -> (slot, role, line)
        older_match: dict[str, re.Match[str]] = {}
        for index, (key, (first, second)) in enumerate(chosen):
            swap = digest(f"{user}:{key}:order") % 2 == 0
            older, newer = (second, first) if swap else (first, second)
            inserted[olds[index]] = (key, "old", older[0])
            inserted[news[index]] = (key, "new", newer[0])
            older_match[key] = older[1]
        keep_out = [by_key[key].loose for key, _ in chosen]
        ids: dict[tuple[str, str], str] = {}
        day = START + timedelta(days=digest(f"{user}:start") % 7)
        for session in range(sessions):
            while next_dialogue < len(dialogues):  # the next one with 4 lines left
                lines = [line for line in dialogues[next_dialogue]["lines"]
                         if not any(p.search(line) for p in keep_out)]  # fmt: skip
                next_dialogue += 1
                if len(lines) >= 4:
                    break
            else:
                raise SystemExit(f"{name}: the dialogues ran out at user {number}")
            slot_line = inserted.get(session)
            at = None
            if slot_line:
                at = 1 + digest(f"{user}:at{session}") % (len(lines) - 1)
                lines.insert(at, slot_line[2])
            if session:
                day += timedelta(days=2 + digest(f"{user}:gap{session}") % 5)
            hour = 8 + digest(f"{user}:hour{session}") % 14
            thread = f"{user}/s{session:02d}"
            for position, line in enumerate(lines):
                memory_id = f"{thread}/{position}"
                said = day + timedelta(hours=hour, minutes=position)
                memories.append({"id": memory_id, "text": line, "said_at": said.isoformat(),
                                 "thread": thread, "pool": user})  # fmt: skip
                if position == at:
                    ids[(slot_line[0], slot_line[1])] = memory_id
        asked = (day + timedelta(days=2, hours=10)).isoformat()
        for key, _ in chosen:
            slot = by_key[key]
            match = older_match[key]
            queries.append({"id": f"{user}/update/{key}", "question": slot.update,
                            "asked_at": asked, "relevant": [ids[(key, "new")]],
                            "outdated": [ids[(key, "old")]], "type": "knowledge-update",
                            "split": split, "pool": user})  # fmt: skip
            queries.append({"id": f"{user}/when/{key}",
                            "question": slot.when.format(span=span_of(match, lang)),
                            "asked_at": asked, "relevant": [ids[(key, "old")]],
                            "conflicting": [ids[(key, "new")]], "type": "temporal",
                            "split": split, "pool": user})  # fmt: skip
    return {"memories": memories, "queries": queries}


def main() -> None:
    english_set = english()
    write("assistant_updates_spc_en", {
        "about": "Built mechanically (see build_update_sets.py): synthetic users, each 16 "
                 "sessions 2-6 days apart, a session the 'User 1' lines of one "
                 "Synthetic-Persona-Chat (valid + test) dialogue. Per user up to 4 slots (where "
                 "they live, their work, their pet, what they study, a favourite thing): two "
                 "source lines stating different values of the slot, the older in an early "
                 "session and the newer in a late one. 'knowledge-update' asks the current "
                 "value (gold = the newer line, outdated = the older); 'temporal' asks when the "
                 "older value was told, in the line's own words (gold = the older line, "
                 "conflicting = the newer). Only the question templates were written here.",
        "source": commit_of("spc"),
        "licence": "CC BY 4.0 (Synthetic-Persona-Chat)",
        "kind": "assistant", "lang": "en", "text_source": None, **english_set,
    })  # fmt: skip
    chinese_set = chinese()
    write("assistant_updates_xpersona_zh", {
        "about": "Built mechanically as assistant_updates_spc_en, from XPersona Chinese (valid + "
                 "test): 11 sessions a user, a session the persona holder's lines of one "
                 "dialogue; slot lines from every line and persona sentence; up to 3 slots a "
                 "user (住在, 我是一名/我在…工作, 养的宠物, 最喜欢的…). Only the question "
                 "templates were written here.",
        "source": commit_of("xpersona"),
        "licence": "MIT (XPersona)",
        "kind": "assistant", "lang": "zh", "text_source": None, **chinese_set,
    })  # fmt: skip


if __name__ == "__main__":
    main()
