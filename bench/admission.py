"""The admission scorer: its time per turn, and its recall and skip share on the labelled set.

Run: `.venv/bin/python bench/admission.py` (seconds).

Time: every turn of tests/data/admission_set.json scored 20 times; p50 and p99 per turn, against
the hand-off it sits in front of, measured in the same run: appending the turn to the local
write journal (one SQLite commit, durability "normal"). Target: well under 5 ms.
Quality: recall on "must be written" (admitted as write or batch; target >= 0.97) and the share
of "nothing worth keeping" skipped (target >= 0.6), per split and language, with every miss.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.admission import score_turn
from memory.turn import Turn
from memory.writer.journal import TurnJournal

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "admission_set.json"
ROUNDS = 20
BUDGET_MS = 5.0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def timing(turns: list[dict]) -> tuple[list[float], list[float]]:
    scored = []
    for _ in range(ROUNDS):
        for turn in turns:
            started = time.perf_counter()
            score_turn(turn["text"], memories=turn.get("memories", ()))
            scored.append((time.perf_counter() - started) * 1000)
    appended = []
    with tempfile.TemporaryDirectory() as folder:
        journal = TurnJournal(Path(folder) / "journal.sqlite")
        for number, turn in enumerate(turns):
            value = Turn.of("bench", [{"role": "user", "content": turn["text"]}],
                            turn_id=f"t{number}", thread_id="t")  # fmt: skip
            started = time.perf_counter()
            journal.append(value)
            appended.append((time.perf_counter() - started) * 1000)
        journal.close()
    return scored, appended


def quality(turns: list[dict]) -> bool:
    print(f"{'split':9} {'lang':5} {'keep':>5} {'recall':>7} {'drop':>5} {'skipped':>8}")
    groups = [(s, lang) for s in ("dev", "dev-late", "holdout", "all") for lang in ("en", "zh", "")]
    met = True
    misses: list[str] = []
    for split, lang in groups:
        chosen = [t for t in turns if split in ("all", t["split"]) and lang in ("", t["lang"])]
        keep = [t for t in chosen if t["label"] == "keep"]
        drop = [t for t in chosen if t["label"] == "drop"]
        admitted = [t for t in keep if score_turn(t["text"]).admitted]
        skipped = [
            t for t in drop if not score_turn(t["text"], memories=t.get("memories", ())).admitted
        ]
        recall, share = len(admitted) / len(keep), len(skipped) / len(drop)
        print(f"{split:9} {lang or 'both':5} {len(keep):5} {recall:7.3f} {len(drop):5} "
              f"{share:8.3f}")  # fmt: skip
        if split == "all" and not lang:
            met = recall >= 0.97 and share >= 0.6
            misses += [f"  missed {t['id']}: {t['text']!r}" for t in keep if t not in admitted]
            misses += [f"  kept   {t['id']}: {t['text']!r}" for t in drop if t not in skipped]
    print("\n".join(misses) or "  no misses")
    return met


def main() -> int:
    turns = json.loads(LABELLED.read_text(encoding="utf-8"))["turns"]
    scored, appended = timing(turns)
    p50, p99 = statistics.median(scored), percentile(scored, 0.99)
    journal = statistics.median(appended)
    print(f"score_turn over {len(turns)} labelled turns x {ROUNDS}: p50 {p50:.3f} ms, "
          f"p99 {p99:.3f} ms, max {max(scored):.3f} ms")  # fmt: skip
    print(f"  against the journal append it precedes (median {journal:.3f} ms): "
          f"p50 {p50 / journal:.2f}x, p99 {p99 / journal:.2f}x; "
          f"p99 is {p99 / BUDGET_MS:.1%} of the {BUDGET_MS:g} ms budget")  # fmt: skip
    met = quality(turns) and p99 < BUDGET_MS
    print(f"targets: p99 < {BUDGET_MS:g} ms, recall >= 0.97, skip share >= 0.6 -> "
          f"{'met' if met else 'MISSED'}")  # fmt: skip
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
