"""Plans by day on other people's words (tests/data/dated_plans.json: SGD in English, RiSAWOZ in
Chinese): recall@1/@3 of the right plan for a later question naming its day, per kind of
expression and language, tuning vs held-out split; before (plans kept as said, the question read
without the run's time) and after (relative days anchored when written, `now` given when asked);
and the precision of the coming-up lines.

    .venv/bin/python bench/dated_recall.py
    .venv/bin/python bench/dated_recall.py --embeddings default   # fused with the offline model

Each language is one store holding every plan of the set (both splits, all said on the set's
own "today"), BM25 (and the semantic channel with --embeddings default). A question is asked at
20:00 on a day before the plan's; its rank counts only plans on other days ("among the plans of
other days": two plans on one day are both right for "what do I have on Friday?", and the
topic word tells them apart only as well as BM25 does). Nothing was tuned on this set; the
resolver's English forms "Nth of this month", "Friday next week" and "day after tomorrow"
without "the", and "查一下下周四", were added after reading the tuning split's misses.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from datetime import date, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.long_term import LongTermMemory
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.branch import Provenance
from memory.store.document import Change
from memory.text.days import anchor_days, named_days

SET = Path(__file__).resolve().parents[1] / "tests/data/dated_plans.json"
ZONE = ZoneInfo("Asia/Shanghai")
WINDOW = 7
# Deep enough to hold every plan of the busiest day (SGD's dialogues crowd a few days of March):
# the rank that counts is among the other days' plans.
DEPTH = 200


def _store(plans: list[dict], anchored: bool, folder: Path, embeddings: str) -> LongTermMemory:
    manager = SqliteMemoryManager(folder / "memory.sqlite", "bench")
    memory = LongTermMemory(manager, embeddings=embeddings)
    ids = {}
    for number, plan in enumerate(plans):
        said = date.fromisoformat(plan["said_on"])
        text = anchor_days(plan["text"], said) if anchored else plan["text"]
        # Written on the day it was said (a date without a year is read from that day).
        when = datetime.combine(said, time(12), ZONE).isoformat()
        change = Change("add", id=f"plan{number:05d}", description=text, theme="moments")
        manager.apply([change], f"turn{number}", Provenance("bench", "", f"t{number}", 1, when))
        named = {day.isoformat() for day in named_days(anchor_days(plan["text"], said), said)}
        ids[f"plan{number:05d}"] = {**plan, "names": named}
    if embeddings != "off":
        memory.retrievers.catch_up(max_missing=len(plans) + 1)
    memory.plan_of = ids  # type: ignore[attr-defined]
    return memory


def _rank(found: list[str], ids: dict[str, dict], plan: dict) -> int | None:
    """The plan's rank among the found plans of other days (1-based); None when not found. A
    plan whose words name the day too ("from the 1st to the 6th") is not of another day."""
    rank = 0
    for memory_id in found:
        other = ids[memory_id]
        if other["id"] == plan["id"]:
            return rank + 1
        if other["day"] != plan["day"] and plan["day"] not in other["names"]:
            rank += 1
    return None


def recall(memory: LongTermMemory, plans: dict[str, dict], questions: list[dict], after: bool):
    ids = memory.plan_of  # type: ignore[attr-defined]
    hits: dict[tuple[str, str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    for question in questions:
        plan = plans[question["plan"]]
        asked = datetime.combine(date.fromisoformat(question["asked_on"]), time(20), ZONE)
        found = memory.get_related_memory_from(
            question["text"], "mechanical", DEPTH, now=asked if after else None
        )
        found_ids = [m["id"] for m in found]
        rank = _rank(found_ids, ids, plan)
        first = bool(found_ids) and ids[found_ids[0]]["id"] == plan["id"]
        for kind in (question["kind"], "all"):
            row = hits[(plan["language"], plan["split"], kind)]
            row[0] += rank == 1
            row[1] += rank is not None and rank <= 3
            row[2] += 1
            row[3] += first  # first among every plan, that day's others included
    return hits


def coming_up_precision(memory: LongTermMemory, language: str, days: list[date]) -> str:
    ids = memory.plan_of  # type: ignore[attr-defined]
    shown = right = 0
    for day in days:
        now = datetime.combine(day, time(20), ZONE)
        for line in memory.coming_up(now, WINDOW, 3):
            labelled = date.fromisoformat(ids[line["id"]]["day"])
            shown += 1
            right += 0 <= (labelled - day).days <= WINDOW
    return f"{language}: {right}/{shown} coming-up lines within the window by the labels"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embeddings", default="off")
    parser.add_argument("--limit", type=int, default=0, help="questions per language (0: all)")
    args = parser.parse_args()
    data = json.loads(SET.read_text(encoding="utf-8"))
    plans = {plan["id"]: plan for plan in data["plans"]}
    table: dict[str, dict] = {}
    for language in ("en", "zh"):
        mine = [p for p in data["plans"] if p["language"] == language]
        asked = [q for q in data["questions"] if plans[q["plan"]]["language"] == language]
        asked = asked[: args.limit] if args.limit else asked
        for after in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                memory = _store(mine, after, Path(folder), args.embeddings)
                table[f"{language}:{after}"] = recall(memory, plans, asked, after)
                if after:
                    days = sorted({date.fromisoformat(q["asked_on"]) for q in asked})
                    print(coming_up_precision(memory, language, days))
        print(f"{language}: {len(mine)} plans, {len(asked)} questions")
    print(f"\nrecall of the right plan among other days' plans ({args.embeddings=})")
    print("language split     kind                    n   before @1/@3     after @1/@3"
          "   after @1 among all")  # fmt: skip
    keys = sorted({key for hits in table.values() for key in hits})
    for language, split, kind in keys:
        before = table[f"{language}:False"][(language, split, kind)]
        after = table[f"{language}:True"][(language, split, kind)]
        n = after[2]
        figures = f"{before[0] / n:5.2f} / {before[1] / n:4.2f}   {after[0] / n:5.2f} / "
        print(f"{language:8} {split:9} {kind:22} {n:5}   {figures}{after[1] / n:4.2f}"
              f"   {after[3] / n:5.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
