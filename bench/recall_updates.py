"""How often the outdated value outranks the current one (issue 31): for every knowledge-update
question of the recall sets that record `outdated` ids (tests/data/recall_sets/assistant_updates_*),
the share where the older, conflicting line ranks above the newer (gold) one in the first 10,
plain BM25 against the default fused retrieval, per split.

    .venv/bin/python bench/recall_updates.py                 # every set with `outdated` ids
    .venv/bin/python bench/recall_updates.py --sets assistant_updates_spc_en

Same stores and retrieval path as bench/recall_kinds.py (its run_set): each question is run
with gold = newer + older, and the two ranks are read apart. A line not in the first 10 ranks
below any line in it; "old above new" counts a question when the older line is in the first 10
and the newer is below it (or absent). Lower is better.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_kinds import SETS, SPLITS, run_set


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    args = parser.parse_args()
    started = time.perf_counter()
    names = args.sets.split(",") if args.sets else [p.stem for p in sorted(SETS.glob("*.json"))]
    print(f"{'set / split':<40} {'n':>4} | {'BM25 new@5':>10} {'old>new':>8} | "
          f"{'fused new@5':>11} {'old>new':>8}")  # fmt: skip
    for name in names:
        data = json.loads((SETS / f"{name}.json").read_text(encoding="utf-8"))
        queries = [q for q in data["queries"] if q.get("outdated")]
        if not queries:
            continue
        old = {i for q in queries for i in q["outdated"]}
        for query in queries:
            query["relevant"] = query["relevant"] + query["outdated"]
        data["queries"] = queries
        with tempfile.TemporaryDirectory() as folder:
            results = run_set(data, None, Path(folder))
        for split in SPLITS:
            rows = results[split]
            cells = []
            for way in ("bm25", "fused"):
                new5 = above = 0
                for row in rows:
                    ranks = row[way]
                    pos_old = min((ranks.index(i) for i in row["relevant"] & old if i in ranks),
                                  default=99)  # fmt: skip
                    pos_new = min((ranks.index(i) for i in row["relevant"] - old if i in ranks),
                                  default=99)  # fmt: skip
                    new5 += pos_new < 5
                    above += pos_old < pos_new
                cells.append((new5 / len(rows), above / len(rows)) if rows else (0.0, 0.0))
            (b5, bold), (f5, fold) = cells
            print(f"{name + ' ' + split:<40} {len(rows):>4} | {b5:>10.3f} {bold:>8.3f} | "
                  f"{f5:>11.3f} {fold:>8.3f}", flush=True)  # fmt: skip
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
