"""Build tests/data/public_consolidation_set.json from public paraphrase corpora, mechanically.

Run: `.venv/bin/python tests/data/build_public_consolidation.py [DATA_DIR]` (default
/work/coord/data). Sources, licences and the rules: tests/data/README.md. Every label is the
source's own annotation (SICK's entailment in both directions, Chinese STS-B's similarity score),
and XPersona's Chinese persona sentences are distinct memories. The split is fixed by a hash of
the pair, so the held-out store never moves.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "public_consolidation_set.json"
HELD_OUT_SHARE = 3  # one pair in three goes to held-out
# Pairs per kind and language in the tuning store; the held-out store gets half as many.
WANTED = {"group": 160, "trap": 60, "distinct": 200}
UNRELATED = 2.0  # SICK relatedness (1-5) at or under which a pair's sentences are unrelated
STS_SAME = 5  # Chinese STS-B similarity (0-5) of two sentences that say the same thing
STS_DIFFERENT = 2  # at or under it, two sentences do not say the same thing
CJK_TRAP_OVERLAP = 0.5  # character Jaccard from which a pair of different meaning is a trap


def digest(key: str) -> int:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16)


def split_of(key: str) -> str:
    return "held-out" if digest(key) % HELD_OUT_SHARE == 0 else "tuning"


def char_jaccard(a: str, b: str) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / max(len(sa | sb), 1)


def sick(path: Path) -> list[dict]:
    """SICK pairs: entailment both ways is one fact said twice (a group), contradiction both ways
    a look-alike of another fact (a trap), unrelated pairs give one distinct sentence."""
    with open(path, encoding="utf-8", newline="") as rows:
        pairs = list(csv.DictReader(rows, delimiter="\t"))
    items = []
    for pair in pairs:
        ab, ba = pair["entailment_AB"], pair["entailment_BA"]
        texts = [pair["sentence_A"], pair["sentence_B"]]
        if ab == "A_entails_B" and ba == "B_entails_A":
            kind = "group"
        elif ab == "A_contradicts_B" and ba == "B_contradicts_A":
            kind = "trap"
        elif (ab, ba) == ("A_neutral_B", "B_neutral_A") and float(
            pair["relatedness_score"]
        ) <= UNRELATED:
            kind, texts = "distinct", texts[:1]
        else:
            continue
        # The photo caption the sentences were made from: two items from one caption may say
        # the same thing without a label saying so, so a store takes one item per caption.
        origins = {pair["sentence_A_original"], pair["sentence_B_original"]}
        items.append({"key": f"sick:{pair['pair_ID']}", "lang": "en", "kind": kind,
                      "texts": texts, "origins": origins})  # fmt: skip
    return items


def chinese_sts(folder: Path) -> list[dict]:
    """Chinese STS-B pairs (CNSD): similarity 5 (the two say the same thing) is a group, 2 or
    less with CJK_TRAP_OVERLAP of their characters in common a trap (alike, not the same)."""
    items = []
    for name in ("cnsd-sts-train.txt", "cnsd-sts-dev.txt", "cnsd-sts-test.txt"):
        for number, line in enumerate((folder / name).read_text("utf-8").splitlines()):
            parts = line.split("||")
            if len(parts) != 4 or not parts[3].isdigit():
                continue
            _, a, b, score = parts
            if int(score) == STS_SAME:
                kind = "group"
            elif int(score) <= STS_DIFFERENT and char_jaccard(a, b) >= CJK_TRAP_OVERLAP:
                kind = "trap"
            else:
                continue
            items.append({"key": f"cnsd-sts:{name}:{number}", "lang": "zh", "kind": kind,
                          "texts": [a, b], "origins": {a, b}})  # fmt: skip
    return items


def chinese_personas(folder: Path) -> list[dict]:
    """XPersona's human-corrected Chinese persona sentences ("我有两只狗。"), each one distinct
    memory: what a user says about themselves, the kind of text a memory store holds."""
    sentences: set[str] = set()
    for name in ("Zh_persona_split_valid_human_annotated.json",
                 "Zh_persona_split_test_human_annotated.json"):  # fmt: skip
        for dialogue in json.loads((folder / name).read_text("utf-8")):
            sentences.update(s.strip() for s in dialogue["persona"] if s.strip())
    return [{"key": f"xpersona-zh:{s}", "lang": "zh", "kind": "distinct", "texts": [s],
             "origins": {s}} for s in sorted(sentences)]  # fmt: skip


_FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "is", "are", "was", "be", "being", "been", "of", "in", "on", "at", "to",
     "by", "with", "and", "or", "some", "one", "two", "there", "its", "his", "her", "their",
     "this", "that"}
)  # fmt: skip
ALIKE = 0.4  # word (or Chinese bigram) Jaccard from which two items' texts are too alike
# Chinese character Jaccard from which two texts are too alike: "我是一名医生。" and "我是个医生。"
# (two persona sentences, one fact) share 2 bigrams in 7 and 4 characters in 7.
CJK_ALIKE = 0.5


def words_of(text: str) -> frozenset[str]:
    """Content words (English), or character bigrams and characters (Chinese, the characters
    marked with "#"): what two texts share."""
    if any("\u4e00" <= char <= "\u9fff" for char in text):
        chars = [c for c in text if c.isalnum()]
        bigrams = {a + b for a, b in itertools.pairwise(chars)}
        return frozenset(bigrams | {f"#{c}" for c in chars})
    found = "".join(c.lower() if c.isalnum() else " " for c in text).split()
    return frozenset(w for w in found if w not in _FUNCTION_WORDS)


def too_alike(texts: list[str], index: dict[str, list[frozenset[str]]]) -> bool:
    """Whether a text is as alike as ALIKE to a text of an item already in the store: the
    sources label pairs, not a store, so two items that happen to say nearly the same thing
    would be a duplicate nobody labelled. Such an item is left out."""
    for text in texts:
        mine = words_of(text)
        for other in {o for word in mine for o in index.get(word, [])}:
            if _share(mine, other, chars=False) >= ALIKE or _share(mine, other, True) >= CJK_ALIKE:
                return True
    return False


def _share(first: frozenset[str], second: frozenset[str], chars: bool) -> float:
    """Jaccard of the two sets' characters (chars) or of their words and bigrams."""
    a = {w for w in first if w.startswith("#") == chars}
    b = {w for w in second if w.startswith("#") == chars}
    return len(a & b) / len(a | b) if a and b else 0.0


def stores(items: list[dict]) -> dict[str, list[dict]]:
    """Per split, the memories of a store: items taken in hash order, each text and each origin
    used once, none too alike to an item taken before, up to WANTED per kind and language (half
    in held-out)."""
    chosen: dict[str, list[dict]] = {"tuning": [], "held-out": []}
    used_texts: set[str] = set()
    used_origins: set[str] = set()
    index: dict[str, list[frozenset[str]]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for item in sorted(items, key=lambda i: digest(i["key"])):
        split = split_of(item["key"])
        limit = WANTED[item["kind"]] // (2 if split == "held-out" else 1)
        count_key = (split, item["lang"], item["kind"])
        if counts.get(count_key, 0) >= limit:
            continue
        texts = [t.strip() for t in item["texts"]]
        if (
            len(set(texts)) < len(texts)
            or used_texts & set(texts)
            or used_origins & item["origins"]
        ):
            continue
        if too_alike(texts, index):
            continue
        for text in texts:
            mine = words_of(text)
            for word in mine:
                index.setdefault(word, []).append(mine)
        used_texts.update(texts)
        used_origins.update(item["origins"])
        counts[count_key] = counts.get(count_key, 0) + 1
        label = item["key"]
        for number, text in enumerate(texts):
            memory = {"id": f"{label}:{number}", "lang": item["lang"], "kind": item["kind"],
                      "text": text}  # fmt: skip
            if item["kind"] != "distinct":
                memory["pair"] = label  # a group's members, or the two sides of a trap
            chosen[split].append(memory)
    return chosen


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else "/work/coord/data")
    items = (
        sick(data / "sick" / "SICK.txt")
        + chinese_sts(data / "cnsd-sts")
        + chinese_personas(data / "xpersona")
    )
    split_stores = stores(items)
    about = ("Memories for the consolidation pass from public paraphrase corpora, labelled by "
             "the sources' own annotations (tests/data/README.md, "
             "tests/data/build_public_consolidation.py). kind 'group': the memories sharing a "
             "'pair' say one thing and must merge; 'trap': the two memories of a 'pair' look "
             "alike and say different things, never merged; 'distinct': kept.")  # fmt: skip
    parts = [f'{{"about": {json.dumps(about)},']
    for split, memories in split_stores.items():
        lines = ",\n".join(json.dumps(m, ensure_ascii=False) for m in memories)
        parts.append(f'"{split}": [\n{lines}\n]' + ("," if split == "tuning" else "}"))
    OUT.write_text("\n".join(parts) + "\n", encoding="utf-8")
    for split, memories in split_stores.items():
        for lang in ("en", "zh"):
            kinds = [m["kind"] for m in memories if m["lang"] == lang]
            print(split, lang, {k: kinds.count(k) for k in WANTED})


if __name__ == "__main__":
    main()
