"""Build tests/data/public_admission_set.json from public dialogue corpora, by mechanical rules.

Run: `.venv/bin/python tests/data/build_public_admission.py [DATA_DIR]` (default
/work/coord/data). Sources, licences and the rules: tests/data/README.md. Nothing here is judged
per item: every label follows from the source's own annotations (DailyDialog's dialogue acts
and emotions, Persona-Chat's persona field) and the length of the utterance; the split is fixed
by a hash of the dialogue (or sentence), so the held-out part never moves.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "public_admission_set.json"
HELD_OUT_SHARE = 3  # one key in three goes to held-out
DIALOGUE_SHARE = 4  # one dialogue in four is used (the file stays small)
PERSONA_SENTENCES = 500  # Persona-Chat facts kept (the file stays small)
# DailyDialog annotations
INFORM, QUESTION, DIRECTIVE, COMMISSIVE = "1", "2", "3", "4"
NONE, ANGER, DISGUST, FEAR, HAPPINESS, SADNESS, SURPRISE = "0", "1", "2", "3", "4", "5", "6"
FEELING = {ANGER, DISGUST, FEAR, HAPPINESS, SADNESS}
MIN_KEEP_WORDS = 6  # long enough to say what the feeling, plan or answer is about
MAX_SMALL_TALK_WORDS = 3


def split_of(key: str) -> str:
    digest = int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16)
    return "held-out" if digest % HELD_OUT_SHARE == 0 else "tuning"


def words(text: str) -> int:
    return len(re.findall(r"[A-Za-z0-9']+", text.replace("’", "'")))


def clean(text: str) -> str:
    """DailyDialog's tokenised spacing back to normal text ("I ' m here ." -> "I'm here.")."""
    text = text.replace("’", "'").replace(" ' ", "'").replace(" 's", "'s").replace(" n't", "n't")
    return re.sub(r"\s+([.,!?;:])", r"\1", text).strip()


def dailydialog(folder: Path) -> list[dict]:
    """XDailyDialog's 1k part: DailyDialog dialogues with their act and emotion labels and a
    manual Chinese translation, utterance by utterance."""

    def read(name: str) -> list[list[str]]:
        with open(folder / name, encoding="utf-8") as lines:
            return [[u.strip() for u in line.split("__eou__") if u.strip()] for line in lines]

    def labels(name: str) -> list[list[str]]:
        return [line.split() for line in (folder / name).read_text("utf-8").splitlines()]

    english, chinese = read("dialogues_text_En.txt"), read("dialogues_text_Zh.txt")
    acts, emotions = labels("dialogues_action.txt"), labels("dialogues_emotion.txt")
    turns: list[dict] = []
    dialogues = zip(english, chinese, acts, emotions, strict=True)
    for number, (en, zh, act, emotion) in enumerate(dialogues):
        if not len(en) == len(zh) == len(act) == len(emotion):
            continue  # six dialogues whose translation is not aligned utterance by utterance
        key = f"dailydialog:{number}"
        if int(hashlib.sha1(f"use:{key}".encode()).hexdigest()[:8], 16) % DIALOGUE_SHARE:
            continue
        split = split_of(key)
        for at, (text, act_n, emo) in enumerate(zip(en, act, emotion, strict=True)):
            size = words(text)
            after_question = at > 0 and act[at - 1] == QUESTION
            kind = None
            if size >= MIN_KEEP_WORDS and act_n in (INFORM, COMMISSIVE) and emo in FEELING:
                kind, label = "feeling", "keep"
            elif size >= MIN_KEEP_WORDS and act_n == COMMISSIVE:
                kind, label = "plan", "keep"
            elif size >= MIN_KEEP_WORDS and act_n == INFORM and after_question:
                kind, label = "answer", "keep"
            elif size <= MAX_SMALL_TALK_WORDS and emo in (NONE, HAPPINESS, SURPRISE):
                kind, label = "small_talk", "drop"
            if kind is None:
                continue
            for lang, said, before in (("en", clean(text), en), ("zh", zh[at], zh)):
                turn = {"id": f"dd-{number}-{at}-{lang}", "lang": lang, "label": label,
                        "kind": kind, "text": said, "split": split}  # fmt: skip
                if at > 0:  # the other speaker's message it replies to
                    turn["after"] = clean(before[at - 1]) if lang == "en" else before[at - 1]
                turns.append(turn)
    return turns


def persona_chat(folder: Path) -> list[dict]:
    """Persona-Chat profile sentences as they appear in Synthetic-Persona-Chat's persona
    columns: each is a fact its speaker was given to tell about themselves."""
    sentences: set[str] = set()
    for name in ("valid.csv", "test.csv"):
        with open(folder / name, encoding="utf-8", newline="") as rows:
            for row in csv.DictReader(rows):
                for column in ("user 1 personas", "user 2 personas"):
                    sentences.update(s.strip() for s in row[column].split("\n") if s.strip())
    ranked = sorted(sentences, key=lambda s: hashlib.sha1(s.encode("utf-8")).hexdigest())
    return [
        {"id": f"pc-{hashlib.sha1(s.encode('utf-8')).hexdigest()[:10]}", "lang": "en",
         "label": "keep", "kind": "persona_fact", "text": s, "split": split_of(f"persona:{s}")}
        for s in ranked[:PERSONA_SENTENCES]
    ]  # fmt: skip


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/coord/data")
    turns = dailydialog(data / "xdailydialog") + persona_chat(data / "synthetic-persona-chat")
    about = ("User turns from public dialogue corpora, labelled by mechanical rules from the "
             "sources' annotations (tests/data/README.md, tests/data/build_public_admission.py)."
             " 'keep': must reach the memory writer; 'drop': plain small talk.")  # fmt: skip
    lines = ",\n".join(json.dumps(turn, ensure_ascii=False) for turn in turns)
    OUT.write_text(f'{{"about": {json.dumps(about)},\n"turns": [\n{lines}\n]}}\n', "utf-8")
    counts: dict[tuple[str, str, str], int] = {}
    for turn in turns:
        key = (turn["split"], turn["lang"], turn["label"])
        counts[key] = counts.get(key, 0) + 1
    for key in sorted(counts):
        print(*key, counts[key])


if __name__ == "__main__":
    main()
