"""Build the recall development sets of issue 31 (tests/data/recall_sets/*.json) from the raw
public files in /work/coord/data (each folder holds the repository and commit in `COMMIT`).

    python tests/data/build_recall_sets.py [RAW_DIR]

Deterministic: every choice (subsample, grouping into users, split, insertion point) is made by
a SHA-1 of a fixed key, never by chance or by looking at any retrieval result. The splits were
fixed here before any bench was run. tests/data/README.md ("recall_sets/") documents each set.

Common format of a set:
  {"about", "source", "licence", "kind", "lang", "text_source" (null, or where the bench reads
   the memories' text when the licence does not let the set carry it),
   "memories": [{"id", "text", "said_at", "thread", "pool"}],
   "queries": [{"id", "question", "asked_at", "relevant", "type", "split", "pool"}]}
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

RAW = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/coord/data")
OUT = Path(__file__).resolve().parent / "recall_sets"
HERE = Path(__file__).resolve().parent


def digest(key: str) -> int:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16)


def split_of(key: str) -> str:
    """About a third held-out, by the hash of the user / chat / persona group."""
    return "held-out" if digest(key) % 3 == 0 else "tuning"


def commit_of(name: str) -> str:
    return (RAW / name / "COMMIT").read_text(encoding="utf-8").strip()


def write(name: str, data: dict) -> None:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    queries = data["queries"]
    counts = {s: sum(q["split"] == s for q in queries) for s in ("tuning", "held-out")}
    print(
        f"{name}: {len(data['memories'])} memories, {len({m['pool'] for m in data['memories']})}"
        f" pools, queries {counts}, {path.stat().st_size / 1e6:.2f} MB"
    )


# ── 1. long chats between people: REALTALK ──────────────────────────────────────────────


def realtalk() -> None:
    """Every message with text a memory (text not committed: the source states no licence),
    each session its thread, each chat its own pool; the dataset's questions and evidence, with
    the split of tests/data/conversation_recall.json (chats 1-5 tuning, 6-10 held-out)."""
    labels = json.loads((HERE / "conversation_recall.json").read_text(encoding="utf-8"))
    memories, queries = [], []
    for chat in labels["chats"]:
        data = json.loads((RAW / "realtalk" / f"{chat}.json").read_text(encoding="utf-8"))
        sessions = sorted((k for k in data if k.startswith("session_") and k[8:].isdigit()),
                          key=lambda k: int(k[8:]))  # fmt: skip
        ids, last = set(), None
        for session in sessions:
            for line in data[session]:
                if not str(line.get("clean_text") or "").strip():
                    continue
                when = datetime.strptime(line["date_time"], "%d.%m.%Y, %H:%M:%S")
                memories.append({"id": f"{chat}/{line['dia_id']}", "text": None,
                                 "said_at": when.isoformat(), "thread": f"{chat}/{session}",
                                 "pool": chat})  # fmt: skip
                ids.add(line["dia_id"])
                last = when if last is None or when > last else last
        asked = (last + timedelta(days=1)).date().isoformat() if last else None
        for number, raw in enumerate(q for q in labels["questions"] if q["chat"] == chat):
            relevant = [f"{chat}/{e}" for e in raw["evidence"] if e in ids]
            if not relevant:
                continue
            queries.append({"id": f"{chat}/q{number}", "question": raw["question"],
                            "asked_at": asked, "relevant": relevant,
                            "type": labels["categories"][str(raw["category"])],
                            "split": raw["split"], "pool": chat})  # fmt: skip
    write("chats_realtalk_en", {
        "about": "REALTALK: 21 days of messaging-app chat between real people, ten pairs. Every "
                 "message a memory ('<speaker>: <text>'), each session its thread, each chat one "
                 "pool; the dataset's memory-probing questions, gold = their evidence messages.",
        "source": commit_of("realtalk"),
        "licence": "none stated: message text not in this file (the bench reads it from "
                   "text_source); ids, dates, questions and evidence ids only",
        "kind": "chats", "lang": "en",
        "text_source": {"format": "realtalk", "dir": "/work/coord/data/realtalk",
                        "env": "REALTALK_DIR"},
        "memories": memories, "queries": queries,
    })  # fmt: skip


# ── the user's own plain statements: Persona-Chat lines (English and Chinese) ────────────

STOP_EN = set(
    """a an the i i'm im my me mine myself am is are was were be been being do does did
have has had to of in on at for with and or but so as it its it's that this these those there
their they them you your yours we our us he she his her him not no yes very really just also too
like love enjoy from by about up out into over than then when what who how all some any can will
would could should one get got go going lot lots much many more most own""".split()  # noqa: SIM905
)
PUNCT = re.compile(r"[\s，。！？、；：“”‘’（）《》…—,.!?;:\"'()\[\]~·\-]+")


def words_en(text: str) -> set[str]:
    found = set()
    for word in re.findall(r"[a-z0-9']+", text.lower()):
        word = word.strip("'")
        if len(word) < 3 or word in STOP_EN:
            continue
        for suffix in ("ing", "es", "s", "ed"):  # crude stemming: "dogs"/"dog", "played"/"play"
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        found.add(word)
    return found


STOP_ZH_CHARS = set("我你他她它的了是在有和也都很就不吗呢吧啊呀哦嗯一个这那么")


def words_zh(text: str) -> set[str]:
    """Character bigrams of the text without punctuation; a bigram holding a function
    character ("我每", "个小") is left out."""
    chars = PUNCT.sub("", text)
    return {
        chars[i : i + 2]
        for i in range(len(chars) - 1)
        if chars[i] not in STOP_ZH_CHARS and chars[i + 1] not in STOP_ZH_CHARS
    }


def states(fact: set[str], line: set[str], lang: str) -> bool:
    """The labelling rule: a line states a persona fact when it holds at least half of the
    fact's content words (English, at least 2) or character bigrams (Chinese, at least 3)."""
    shared = len(fact & line)
    least = 2 if lang == "en" else 3
    return bool(fact) and shared >= least and shared >= 0.5 * len(fact)


def statements(name: str, lang: str, dialogues: list[dict], about: str, source: str,
               licence: str, group: int = 10) -> None:  # fmt: skip
    """dialogues: [{key, persona: [sentences], lines: [the persona holder's lines]}], in a fixed
    order. Dialogues are put in users of `group` by the hash of their key (each dialogue one
    thread of that user); every persona line a memory; one question per persona sentence that
    at least one of the user's lines states, gold = those lines."""
    users: dict[str, list[dict]] = defaultdict(list)
    count = max(1, len(dialogues) // group)
    for dialogue in dialogues:
        users[f"{name}-u{digest('user:' + dialogue['key']) % count:03d}"].append(dialogue)
    memories, queries = [], []
    words = words_en if lang == "en" else words_zh
    for user in sorted(users):
        split = split_of(user)
        for number, dialogue in enumerate(users[user]):
            thread = f"{user}/d{number:02d}"
            line_ids = []
            for position, line in enumerate(dialogue["lines"]):
                memory_id = f"{thread}/{position}"
                memories.append({"id": memory_id, "text": line, "said_at": None,
                                 "thread": thread, "pool": user})  # fmt: skip
                line_ids.append((memory_id, words(line)))
            for fact_number, fact in enumerate(dialogue["persona"]):
                gold = [m for m, line in line_ids if states(words(fact), line, lang)]
                if not gold:
                    continue
                sentence = fact.strip().rstrip(".。!！")
                if lang == "en":
                    first = sentence.split()[0]
                    if first not in ("I", "I'm", "I've", "I'll", "I'd"):
                        sentence = sentence[0].lower() + sentence[1:]
                    question = f"Did I mention that {sentence}?"
                else:
                    question = f"我跟你说过{sentence}吗？"
                queries.append({"id": f"{thread}/p{fact_number}", "question": question,
                                "asked_at": None, "relevant": gold, "type": "single-fact",
                                "split": split, "pool": user})  # fmt: skip
    write(name, {"about": about, "source": source, "licence": licence, "kind": "statements",
                 "lang": lang, "text_source": None, "memories": memories,
                 "queries": queries})  # fmt: skip


def spc_dialogues(file: str, speaker: str) -> list[dict]:
    rows = list(csv.DictReader((RAW / "spc" / file).open(encoding="utf-8")))
    column = "user 1 personas" if speaker == "User 1" else "user 2 personas"
    found = []
    for row in rows:
        lines = [line.split(":", 1)[1].strip() for line in
                 row["Best Generated Conversation"].splitlines()
                 if line.startswith(speaker + ":") and line.split(":", 1)[1].strip()]  # fmt: skip
        lines = [line for line in lines if "[" not in line]  # "[User 1's name]" placeholders
        if not lines:
            continue
        persona = [p.strip() for p in row[column].splitlines() if p.strip()]
        found.append({"key": row[column] + "|" + lines[0], "persona": persona, "lines": lines})
    return found


def statements_en() -> None:
    dialogues = [
        d
        for d in spc_dialogues("Synthetic-Persona-Chat_test.csv", "User 1")
        if digest("spc:" + d["key"]) % 3 == 0
    ]  # one dialogue in three, by a hash
    statements(
        "statements_spc_en",
        "en",
        dialogues,
        "Synthetic-Persona-Chat (test split, one dialogue in three by a hash): the lines of "
        "'User 1', each a memory, each dialogue a thread, ten dialogues (by a hash) one user's "
        "pool. A question per persona sentence a line of the user states ('Did I mention that "
        "<persona sentence>?'); gold = the lines holding at least half (and 2) of its content "
        "words. Mechanical labels; undated.",
        commit_of("spc"),
        "CC BY 4.0 (Synthetic-Persona-Chat)",
    )


def statements_zh() -> None:
    dialogues = []
    for file in ("Zh_persona_split_valid_human_annotated.json",
                 "Zh_persona_split_test_human_annotated.json"):  # fmt: skip
        for raw in json.loads((RAW / "xpersona" / file).read_text(encoding="utf-8")):
            lines = [pair[1].strip() for pair in raw["dialogue"] if len(pair) > 1 and pair[1]]
            key = "".join(raw["persona"]) + "|" + (lines[0] if lines else "")
            dialogues.append({"key": key, "persona": raw["persona"], "lines": lines})
    seen, unique = set(), []
    for dialogue in dialogues:  # a persona met twice keeps its first dialogue only
        if dialogue["key"] not in seen:
            seen.add(dialogue["key"])
            unique.append(dialogue)
    statements(
        "statements_xpersona_zh",
        "zh",
        unique,
        "XPersona Chinese (valid + test, human-corrected translation of Persona-Chat): the "
        "persona holder's lines (the second of each pair), each a memory, each dialogue a "
        "thread, ten dialogues (by a hash) one user's pool. A question per persona sentence a "
        "line states ('我跟你说过<persona sentence>吗？'); gold = the lines holding at least "
        "half (and 3) of its character bigrams. Mechanical labels; undated.",
        commit_of("xpersona"),
        "MIT (XPersona)",
    )


# ── assistant sessions with stated preferences: PrefEval in Synthetic-Persona-Chat sessions ──


def assistant_prefeval() -> None:
    """Mechanical construction (no labelled public set of this kind could be fetched): users of
    25 sessions each, a session = the 'User 1' lines of one Synthetic-Persona-Chat (valid split)
    dialogue, one session a day from 2024-03-01 at 20:00 (a message a minute). Into 10 of a
    user's sessions (by a hash) one PrefEval explicit preference each (10 topics, by a hash) is
    inserted as a user turn at a hashed position; after the last session the user asks that
    preference's PrefEval question. Gold = the turn stating the preference."""
    sessions = spc_dialogues("Synthetic-Persona-Chat_valid.csv", "User 1")
    sessions.sort(key=lambda d: digest("session:" + d["key"]))
    topics = sorted(p.stem for p in (RAW / "prefeval" / "explicit_preference").glob("*.json"))
    prefs = {t: json.loads((RAW / "prefeval" / "explicit_preference" / f"{t}.json").read_text())
             for t in topics}  # fmt: skip
    users, per_user, stated = 20, 25, 10
    start = datetime(2024, 3, 1, 20, 0, tzinfo=UTC)
    memories, queries = [], []
    used: set[tuple[str, int]] = set()
    for number in range(users):
        user = f"assistant_prefeval_en-u{number:02d}"
        split = split_of(user)
        mine = sessions[number * per_user : (number + 1) * per_user]
        chosen_topics = sorted(topics, key=lambda t: digest(f"{user}:{t}"))[:stated]
        chosen_sessions = sorted(range(per_user), key=lambda s: digest(f"{user}:s{s}"))[:stated]
        inserted: dict[int, tuple[str, int]] = {}
        for topic, session in zip(chosen_topics, chosen_sessions, strict=True):
            candidates = [i for i in range(len(prefs[topic])) if (topic, i) not in used]
            pick = min(candidates, key=lambda i: digest(f"{user}:{topic}:{i}"))
            used.add((topic, pick))
            inserted[session] = (topic, pick)
        for session, dialogue in enumerate(mine):
            lines = list(dialogue["lines"])
            gold_at = None
            if session in inserted:
                topic, pick = inserted[session]
                gold_at = 1 + digest(f"{user}:at{session}") % max(1, len(lines) - 1)
                lines.insert(gold_at, prefs[topic][pick]["preference"])
            day = start + timedelta(days=session)
            thread = f"{user}/s{session:02d}"
            for position, line in enumerate(lines):
                memory_id = f"{thread}/{position}"
                said = day + timedelta(minutes=position)
                memories.append({"id": memory_id, "text": line, "said_at": said.isoformat(),
                                 "thread": thread, "pool": user})  # fmt: skip
                if position == gold_at:
                    topic, pick = inserted[session]
                    asked = (start + timedelta(days=per_user)).isoformat()
                    queries.append({"id": f"{user}/{topic}", "question":
                                    prefs[topic][pick]["question"], "asked_at": asked,
                                    "relevant": [memory_id], "type": "preference",
                                    "split": split, "pool": user})  # fmt: skip
    write("assistant_prefeval_en", {
        "about": "Built mechanically (see build_recall_sets.assistant_prefeval): 20 users x 25 "
                 "daily sessions, each session the user turns of one Synthetic-Persona-Chat "
                 "(valid) dialogue; 10 PrefEval explicit preferences per user inserted as user "
                 "turns in 10 sessions; each preference's PrefEval question asked after the last "
                 "session, gold = the preference turn. Dates are the construction's.",
        "source": commit_of("prefeval") + "; " + commit_of("spc"),
        "licence": "PrefEval: CC BY-NC 4.0; Synthetic-Persona-Chat: CC BY 4.0",
        "kind": "assistant", "lang": "en", "text_source": None,
        "memories": memories, "queries": queries,
    })  # fmt: skip


# ── independent memory events: ESConv situations called up by the seeker's first words ──


def events_esconv() -> None:
    """ESConv (all 1,300 conversations): each conversation's `situation`, written by the
    help-seeker before the chat, is one memory (an independent event, undated, no thread); the
    question is the seeker's first two messages of at least six words (their own words in the
    chat, not the situation), gold = that conversation's situation. Conversations are split by
    a hash first; each split is then dealt into pools of about 100 in the order (problem type,
    hash), so every pool mixes the problem types and a held-out pool holds only held-out
    conversations. Type `restated` when the question holds at least 80% of the situation's
    content words, else `own-words`."""
    rows = [json.loads(line) for name in ("train", "valid", "test")
            for line in (RAW / "esconv" / f"{name}.txt").read_text(encoding="utf-8").splitlines()
            if line.strip()]  # fmt: skip
    found = []
    for raw in rows:
        said = [
            d["text"].strip() for d in raw["dialog"] if d["speaker"] == "usr" and d["text"].strip()
        ]
        longer = [text for text in said if len(text.split()) >= 6]
        question = " ".join(longer[:2])
        situation = " ".join(raw["situation"].split())
        if not question or not situation:
            continue
        key = situation + "|" + (said[0] if said else "")
        found.append({"key": key, "situation": situation, "question": question,
                      "problem": raw["problem_type"].lower()})  # fmt: skip
    memories, queries = [], []
    for split in ("tuning", "held-out"):
        mine = sorted((f for f in found if split_of("esconv:" + f["key"]) == split),
                      key=lambda f: (f["problem"], digest("esconv-order:" + f["key"])))  # fmt: skip
        pools = max(1, round(len(mine) / 100))
        for number, item in enumerate(mine):
            pool = f"events_esconv_en-{split}-p{number % pools:02d}"
            memory_id = f"{pool}/{digest('esconv-id:' + item['key']):08x}"
            memories.append({"id": memory_id, "text": item["situation"], "said_at": None,
                             "thread": None, "pool": pool})  # fmt: skip
            fact = words_en(item["situation"])
            shared = len(fact & words_en(item["question"])) / max(1, len(fact))
            queries.append({"id": memory_id + "/q", "question": item["question"],
                            "asked_at": None, "relevant": [memory_id],
                            "type": "restated" if shared >= 0.8 else "own-words",
                            "split": split, "pool": pool})  # fmt: skip
    same: dict[tuple[str, str], list[str]] = defaultdict(list)  # a situation written twice
    for memory in memories:
        same[(memory["pool"], memory["text"].lower())].append(memory["id"])
    text_of = {m["id"]: m["text"].lower() for m in memories}
    for query in queries:
        query["relevant"] = sorted(same[(query["pool"], text_of[query["relevant"][0]])])
    memories.sort(key=lambda m: m["id"])
    queries.sort(key=lambda q: q["id"])
    write("events_esconv_en", {
        "about": "ESConv (1,300 emotional-support chats): each help-seeker's situation, written "
                 "before the chat, is a memory; the question is the seeker's first two messages "
                 "of six words or more; gold = that chat's situation. Conversations split by a "
                 "hash, then dealt into pools of about 100 mixing the problem types (each "
                 "question competes with about 99 other people's events). Undated, no threads.",
        "source": commit_of("esconv"),
        "licence": "CC BY-NC 4.0 (ESConv)",
        "kind": "events", "lang": "en", "text_source": None,
        "memories": memories, "queries": queries,
    })  # fmt: skip


# ── independent memory events in Chinese: COVID-Dialogue patients' own descriptions ──

COVID_FIELD = re.compile(r"^([^：\s]{1,16})：\s*(.*)$")
COVID_META = re.compile(r"^[^：\s]{2,12}： ")  # "疾病诊断： ...", "药品： ..." inside a turn
COVID_SECTION = re.compile(
    r"(?m)^(Description|Dialogue|Diagnosis and suggestions|Doctor faculty)\s*$"
)


def coviddialog_records(path: Path) -> dict[str, dict]:
    """COVID-Dialogue-Dataset-Chinese.txt: consultations "id=N", each of "Description"
    blocks (fields "疾病：", "病情描述：", ...) and "Dialogue" blocks ("病人：" / "医生："
    lines, the text on the lines below). Returns {N: {"situation": the 病情描述 of the
    consultation's first Description block holding one, "said": the patient's messages of the
    Dialogue block after it}}; consultations without such a block are left out
    (tests/data/README.md; bench/recall_kinds.py reads the text with it)."""
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"(?m)^id=(\d+)\s*$", text)
    records: dict[str, dict] = {}
    for number, body in zip(parts[1::2], parts[2::2], strict=True):
        blocks = COVID_SECTION.split(body)
        found: dict | None = None
        for head, content in zip(blocks[1::2], blocks[2::2], strict=True):
            if head == "Description" and found is None:
                fields = {}
                for raw in content.splitlines():
                    match = COVID_FIELD.match(raw.strip())
                    if match:
                        fields.setdefault(match.group(1), match.group(2).strip())
                situation = " ".join(fields.get("病情描述", "").split())
                if situation:
                    found = {"situation": situation, "said": None}
            elif head == "Dialogue" and found is not None and found["said"] is None:
                turns: list[list[str]] = []
                for raw in content.splitlines():
                    line = raw.strip()
                    if line in ("病人：", "医生："):
                        turns.append([line[:-1], ""])
                    elif line and turns and not COVID_META.match(line):
                        turns[-1][1] = (turns[-1][1] + " " + line).strip()
                found["said"] = [said for who, said in turns if who == "病人" and said]
        if found is not None:
            found["said"] = found["said"] or []
            records[number] = found
    return records


def coviddialog_question(said: list[str]) -> str:
    """The patient's first two messages holding at least 10 characters besides punctuation
    (about the six words of events_esconv_en)."""
    return " ".join([text for text in said if len(PUNCT.sub("", text)) >= 10][:2])


def events_coviddialog() -> None:
    """COVID-Dialogue Chinese (1,393 haodf.com consultations, 2020): a patient's own 病情描述
    (the description written when opening the consultation) is one memory (undated, no
    thread); the question is the same patient's first two messages of at least 10 characters in
    the consultation's dialogue, gold = that description. A description posted in several
    consultations (the same words, word for word) is one memory, gold for each of their
    questions; a (description, question) pair met twice (a consultation copied) is asked once.
    Descriptions are split by a hash, then dealt into pools of about 100 in hash order. No text
    in the file (copyright of haodf.com, no licence): memory ids end in `c<consultation>`, question
    ids in `c<consultation>/q`, and the bench reads both from text_source. Type `restated` when
    the question holds at least 80% of the description's character bigrams, else `own-words`."""
    records = coviddialog_records(RAW / "coviddialog" / "COVID-Dialogue-Dataset-Chinese.txt")
    asks: dict[str, list[str]] = defaultdict(list)  # description -> consultations asking it
    first: dict[str, str] = {}  # description -> the first consultation holding it
    seen = set()
    for number in sorted(records, key=int):
        situation = records[number]["situation"]
        first.setdefault(situation, number)
        question = coviddialog_question(records[number]["said"])
        if question and (situation, question) not in seen:
            seen.add((situation, question))
            asks[situation].append(number)
    memories, queries = [], []
    for split in ("tuning", "held-out"):
        mine = sorted((s for s in asks if split_of("coviddialog:" + s) == split),
                      key=lambda s: digest("coviddialog-order:" + s))  # fmt: skip
        pools = max(1, round(len(mine) / 100))
        for position, situation in enumerate(mine):
            pool = f"events_coviddialog_zh-{split}-p{position % pools:02d}"
            memory_id = f"{pool}/c{first[situation]}"
            memories.append({"id": memory_id, "text": None, "said_at": None, "thread": None,
                             "pool": pool})  # fmt: skip
            fact = words_zh(situation)
            for number in asks[situation]:
                question = coviddialog_question(records[number]["said"])
                shared = len(fact & words_zh(question)) / max(1, len(fact))
                queries.append({"id": f"{pool}/c{number}/q", "question": None,
                                "asked_at": None, "relevant": [memory_id],
                                "type": "restated" if shared >= 0.8 else "own-words",
                                "split": split, "pool": pool})  # fmt: skip
    memories.sort(key=lambda m: m["id"])
    queries.sort(key=lambda q: q["id"])
    write("events_coviddialog_zh", {
        "about": "COVID-Dialogue Chinese (haodf.com consultations about COVID-19 and other "
                 "pneumonia, 2020; real patients and doctors, not generated): each patient's own "
                 "description of their illness (病情描述, written when opening the consultation) "
                 "is a memory; the question is the same patient's first two messages of ten "
                 "characters or more in the dialogue; gold = that description. Descriptions "
                 "split by a hash, then dealt into pools of about 100 (each question competes "
                 "with about 99 other patients' descriptions, mostly fever, cough and "
                 "COVID-19 worries). Undated, no threads.",
        "source": commit_of("coviddialog"),
        "licence": "none stated (the README gives all copyrights to haodf.com): no text in this "
                   "file (the bench reads descriptions and questions from text_source); ids and "
                   "labels only",
        "kind": "events", "lang": "zh",
        "text_source": {"format": "coviddialog", "dir": "/work/coord/data/coviddialog",
                        "env": "COVIDDIALOG_DIR", "file": "COVID-Dialogue-Dataset-Chinese.txt"},
        "memories": memories, "queries": queries,
    })  # fmt: skip


# ── the user's own statements asked about in other words: ConvAI2's revised personas ──


def convai2_episodes(path: Path) -> list[dict]:
    """ParlAI's ConvAI2 text format: an episode starts at line number 1; "your persona: ..."
    lines, then "<partner>\t<self>" turns. Returns [{persona: [...], lines: [self line or ""]}]
    (tests/data/README.md; bench/recall_kinds.py reads the text with it)."""
    episodes: list[dict] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        number, _, rest = raw.partition(" ")
        if number == "1":
            episodes.append({"persona": [], "lines": []})
        if rest.startswith("your persona: "):
            episodes[-1]["persona"].append(rest[len("your persona: ") :].strip())
        else:
            parts = rest.split("\t")
            episodes[-1]["lines"].append(parts[1].strip() if len(parts) > 1 else "")
    return episodes


def statements_convai2_revised(group: int = 20) -> None:
    """ConvAI2 valid (1,000 dialogues, ParlAI's files with the original and the revised
    personas of the same dialogues): the persona holder's lines are the memories, each dialogue
    a thread, `group` dialogues (by a hash) one user's pool. One question per (user, original
    persona sentence): "Did I mention that <the REVISED sentence>?" (the crowdworkers'
    rephrasing, aligned by position); gold = every line of that user stating the ORIGINAL
    sentence by the rule of `states`; questions without gold are dropped. No text in the file
    (no licence stated): memory ids carry the episode and turn, question ids the episode and
    persona position, and the bench reads both from text_source."""
    folder = RAW / "convai2_revised"
    original = convai2_episodes(folder / "valid_self_original_no_cands.txt")
    revised = convai2_episodes(folder / "valid_self_revised_no_cands.txt")
    assert len(original) == len(revised)
    users: dict[str, list[int]] = defaultdict(list)
    count = max(1, len(original) // group)
    for number, episode in enumerate(original):
        first = next((line for line in episode["lines"] if line), "")
        key = "|".join(episode["persona"]) + "|" + first
        users[f"statements_convai2rev_en-u{digest('user:' + key) % count:03d}"].append(number)
    memories, queries = [], []
    for user in sorted(users):
        split = split_of(user)
        lines = []
        for number in users[user]:
            thread = f"{user}/e{number:04d}"
            for turn, line in enumerate(original[number]["lines"]):
                if line:
                    memories.append({"id": f"{thread}/{turn}", "text": None, "said_at": None,
                                     "thread": thread, "pool": user})  # fmt: skip
                    lines.append((f"{thread}/{turn}", words_en(line)))
        asked = set()
        for number in users[user]:
            pairs = zip(original[number]["persona"], revised[number]["persona"], strict=True)
            for position, (fact, rephrased) in enumerate(pairs):
                if fact.lower() in asked:
                    continue
                gold = [m for m, line in lines if states(words_en(fact), line, "en")]
                if not gold:
                    continue
                asked.add(fact.lower())
                shared = words_en(fact) & words_en(rephrased)
                queries.append({"id": f"{user}/e{number:04d}/p{position}", "question": None,
                                "asked_at": None, "relevant": gold,
                                "type": "shares-words" if shared else "no-shared-word",
                                "split": split, "pool": user})  # fmt: skip
    write("statements_convai2rev_en", {
        "about": "ConvAI2 / Persona-Chat valid (1,000 dialogues): the persona holder's lines, "
                 "each a memory, each dialogue a thread, 20 dialogues (by a hash) one user's "
                 "pool. A question per original persona sentence a line of the user states, "
                 "asked with the crowd-REVISED rephrasing of that sentence ('Did I mention that "
                 "<revised sentence>?'); gold = the user's lines holding at least half (and 2) "
                 "of the ORIGINAL sentence's content words. Mechanical labels; undated.",
        "source": commit_of("convai2_revised"),
        "licence": "none stated in the copy used: no text in this file (the bench reads the "
                   "lines and the revised sentences from text_source); ids and labels only",
        "kind": "statements", "lang": "en",
        "text_source": {"format": "convai2", "dir": "/work/coord/data/convai2_revised",
                        "env": "CONVAI2_DIR", "question": "Did I mention that {}?"},
        "memories": memories, "queries": queries,
    })  # fmt: skip


def main() -> None:
    realtalk()
    statements_en()
    statements_zh()
    assistant_prefeval()
    events_esconv()
    statements_convai2_revised()
    events_coviddialog()


if __name__ == "__main__":
    main()
