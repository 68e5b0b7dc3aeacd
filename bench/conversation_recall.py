"""Evidence recall of search_conversations on real long conversations, per ranking step: the
share of questions whose evidence message is among the best three hits.

Run: `.venv/bin/python bench/conversation_recall.py` (under a minute; `--embeddings` adds the
offline-embedding re-rank, several minutes).

The conversations are REALTALK's (github:danny911kr/REALTALK, data/Chat_*.json: 21 days of
messaging-app chat between real people, ten pairs), read from REALTALK_DIR (default
/work/coord/data/realtalk; tests/data/README.md says how to fetch them). Each chat is one
user's archive, each session a thread, each message at its own time. The questions and their
evidence (the message ids that hold the answer) are the dataset's own memory-probing set,
listed with the split in tests/data/conversation_recall.json: chats 1-5 are the tuning split,
6-10 the held-out one (never tuned on). A question counts as found when one of its evidence
messages is the anchor of one of the three hits ("anchor"), or is shown with a hit, as an
anchor or one of the messages around it ("shown"), which is what the chat model reads.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.archive import ArchivedMessage, Ranking, SearchResult
from memory.archive.dates import question_period
from memory.archive.sqlite_archive import SqliteArchive

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "tests" / "data" / "conversation_recall.json"
DATA = Path(os.environ.get("REALTALK_DIR", "/work/coord/data/realtalk"))
K = 3


def load_chat(name: str) -> list[ArchivedMessage]:
    data = json.loads((DATA / f"{name}.json").read_text())
    first = data["name"]["speaker_1"]
    rows = []
    sessions = sorted((k for k in data if k.startswith("session_") and k[8:].isdigit()),
                      key=lambda k: int(k[8:]))  # fmt: skip
    for session in sessions:
        for position, line in enumerate(data[session]):
            text = str(line.get("clean_text") or "").strip()
            if not text:
                continue
            when = datetime.strptime(line["date_time"], "%d.%m.%Y, %H:%M:%S").timestamp()
            role = "user" if line["speaker"] == first else "assistant"
            rows.append(ArchivedMessage(name.lower(), session, "", line["dia_id"], role, text,
                                        when, position))  # fmt: skip
    return sorted(rows, key=lambda m: (m.timestamp, m.position))


def found(result: SearchResult, evidence: set[str]) -> tuple[bool, bool]:
    hits = [h for h in result.hits if h.digest is None][:K]
    anchor = any(h.anchor.message_id in evidence for h in hits)
    shown = anchor or any(m.message_id in evidence for h in hits for m in h.around)
    return anchor, shown


def evaluate(
    archives: dict[str, SqliteArchive],
    asked: dict[str, datetime],
    questions: list[dict[str, Any]],
    ranking: Ranking,
) -> dict[str, Any]:
    """Recall per split; each chat's questions are asked the day after its last message."""
    by_split: dict[str, list[tuple[bool, bool]]] = {"tuning": [], "held-out": []}
    times = []
    for question in questions:
        archive = archives[question["chat"]]
        started = time.perf_counter()
        result = archive.search(question["question"], ranking=ranking, now=asked[question["chat"]])
        times.append((time.perf_counter() - started) * 1000)
        by_split[question["split"]].append(found(result, set(question["evidence"])))
    return {
        split: (sum(a for a, _ in rows) / len(rows), sum(s for _, s in rows) / len(rows))
        for split, rows in by_split.items()
    } | {"p50": statistics.median(times)}


STEPS: list[tuple[str, Callable[[Ranking], Ranking]]] = [
    ("baseline (all terms, then any)", lambda r: Ranking.baseline()),
    ("+ question words out, any term (FTS5 bm25)",
     lambda r: replace(r, bm25=False, dates=False)),
    ("+ BM25 again: index idf, b 0.3", lambda r: replace(r, dates=False)),
    ("+ dates in the question = default", lambda r: r),
    ("not kept: + neighbours' score x0.25", lambda r: replace(r, context=0.25)),
    ("not kept: + neighbours' score x0.5", lambda r: replace(r, context=0.5)),
]  # fmt: skip


def main() -> None:
    labels = json.loads(LABELS.read_text())
    questions = labels["questions"]
    if not DATA.exists():
        sys.exit(f"{DATA} holds no REALTALK chats: see tests/data/README.md")
    with tempfile.TemporaryDirectory() as folder:
        archives, asked = {}, {}
        for chat in labels["chats"]:
            archive = SqliteArchive(folder, chat.lower())
            rows = load_chat(chat)
            archive.add(rows)
            archives[chat] = archive
            asked[chat] = datetime.fromtimestamp(rows[-1].timestamp + 86400).astimezone()
        count = {s: sum(q["split"] == s for q in questions) for s in ("tuning", "held-out")}
        print(
            f"REALTALK: {len(archives)} chats, {sum(a.count() for a in archives.values()):,} "
            f"messages; questions: tuning {count['tuning']}, held-out {count['held-out']}"
        )
        print(f"evidence recall@{K}, anchor / shown")  # fmt: skip
        print(f"{'ranking':<44} {'tuning':>13} {'held-out':>13} {'p50 ms':>7}")
        steps = list(STEPS)
        if "--embeddings" in sys.argv:
            from memory.retrieval.embedder import OfflineEncoder

            encoder = OfflineEncoder()
            steps.append(("not kept: + offline-embedding re-rank",
                          lambda r: replace(r, embedder=encoder)))  # fmt: skip
        for label, make in steps:
            figures = evaluate(archives, asked, questions, make(Ranking()))
            t, h = figures["tuning"], figures["held-out"]
            print(f"{label:<44} {t[0]:>6.3f}/{t[1]:.3f} {h[0]:>6.3f}/{h[1]:.3f} "
                  f"{figures['p50']:>7.1f}")  # fmt: skip
        dated = [q for q in questions
                 if question_period(q["question"], asked[q["chat"]]) is not None]  # fmt: skip
        print(f"\nquestions naming a date ({len(dated)}, both splits), anchor / shown:")
        for label, ranking in (("dates off", replace(Ranking(), dates=False)),
                               ("dates on", replace(Ranking(), dates=True))):  # fmt: skip
            rows = [found(archives[q["chat"]].search(q["question"], ranking=ranking,
                                                     now=asked[q["chat"]]), set(q["evidence"]))
                    for q in dated]  # fmt: skip
            print(
                f"  {label:<10} {sum(a for a, _ in rows) / len(rows):.3f} / "
                f"{sum(s for _, s in rows) / len(rows):.3f}"
            )
        for archive in archives.values():
            archive.close()


if __name__ == "__main__":
    main()
