"""The recall floor (issue 46): every recall development set's held-out figures, pinned in
bench/recall_floor.json and checked by tests/integration/test_recall_floor.py in `make test`.

    .venv/bin/python bench/recall_floor.py            # the sample's figures against the file
    .venv/bin/python bench/recall_floor.py --write    # pin them (say why in the commit message)
    .venv/bin/python bench/recall_floor.py --full figures.json  # pin the whole held-out splits'
                                                      # figures of bench/recall_kinds.py --json
    .venv/bin/python bench/recall_floor.py --sets events_esconv_advice_en  # some sets only

The test cannot run bench/recall_kinds.py's whole held-out splits (several minutes): it runs the
default fused retrieval, BM25 alone and the vector channel alone on a sample of each set's
held-out split, the first held-out pools by name until SAMPLE questions (a pool whole: its
questions compete with the same memories as in the bench). The retrieval is deterministic, so
the sample's figures repeat exactly run after run (`--runs 2` shows it); the noise a set is
allowed is one question of its sample, which a tie broken otherwise can move. A set whose
figure falls by more fails the test; one that rises is reported, to be pinned.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_kinds import item_of, load_sets, scores, vector_alone

from memory.long_term import LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.backends.sqlite_db import SqliteMemoryManager

FLOOR = Path(__file__).resolve().with_name("recall_floor.json")
SAMPLE = 30  # held-out questions a set, at least (whole pools)
COLUMNS = ("bm25", "vector", "fused")


def sample_pools(data: dict[str, Any], size: int = SAMPLE) -> list[str]:
    """The first held-out pools by name holding at least `size` questions together."""
    held_out: dict[str, int] = defaultdict(int)
    for query in data["queries"]:
        if query["split"] == "held-out":
            held_out[query["pool"]] += 1
    chosen, count = [], 0
    for pool in sorted(held_out):
        if count >= size:
            break
        chosen.append(pool)
        count += held_out[pool]
    return chosen


def sample_figures(data: dict[str, Any], folder: Path) -> dict[str, float | int]:
    """Recall@5/@10 of the three retrievals on the set's held-out sample."""
    rows = []
    for number, pool in enumerate(sample_pools(data)):
        where = folder / f"p{number}"
        manager = SqliteMemoryManager(where / "memory.db", pool)
        write_items(manager, {m["id"]: item_of(m, data["kind"])
                              for m in data["memories"] if m["pool"] == pool})  # fmt: skip
        fused = LongTermMemory(manager, data_dir=where)
        plain = LongTermMemory(manager, data_dir=where, embeddings="off")
        if not fused.retrievers.catch_up(max_missing=10**9, timeout=600):
            raise RuntimeError(f"pool {pool}: the semantic vectors were not all made")
        for query in data["queries"]:
            if query["pool"] != pool or query["split"] != "held-out":
                continue
            row: dict[str, Any] = {"relevant": set(query["relevant"])}
            for name, memory in (("bm25", plain), ("fused", fused)):
                found = memory.get_related_memory_from(query["question"], "mechanical", 10)
                row[name] = [r["id"] for r in found]
            row["vector"] = vector_alone(fused, query["question"])
            rows.append(row)
        plain.close()
        fused.close()
    figures: dict[str, float | int] = {"n": len(rows)}
    for name in COLUMNS:
        at5, at10, _ = scores(rows, name)
        figures[f"{name}@5"], figures[f"{name}@10"] = round(at5, 4), round(at10, 4)
    return figures


def measure(names: list[str] | None = None) -> dict[str, dict[str, float | int]]:
    """The sample figures of every set whose text is committed (a set read from a raw folder,
    `text_source`, is on one machine only: bench/recall_kinds.py measures it there)."""
    sets = {name: data for name, data in load_sets().items() if not data.get("text_source")}
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, data in sets.items():
            if names is None or name in names:
                found[name] = sample_figures(data, Path(folder) / name)
    return found


def falls(pinned: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    """The fused figures that fell below the pinned ones by more than one question."""
    fallen = []
    for name, floor in pinned["sets"].items():
        now = measured.get(name)
        if now is None:
            continue
        allowed = 1.0 / floor["sample"]["n"] + 1e-9
        for key in ("fused@5", "fused@10"):
            if now[key] < floor["sample"][key] - allowed:
                fallen.append(f"{name} {key}: {now[key]:.3f}, pinned {floor['sample'][key]:.3f} "
                              f"(noise {allowed:.3f}, n={now['n']})")  # fmt: skip
    return fallen


def pin_full(full: dict[str, Any]) -> None:
    """Put the whole held-out splits' figures of bench/recall_kinds.py --json into the file."""
    pinned = json.loads(FLOOR.read_text(encoding="utf-8"))
    for name, floor in pinned["sets"].items():
        if name in full:
            floor["held_out"] = full[name]["held-out"]
    FLOOR.write_text(json.dumps(pinned, indent=1) + "\n", encoding="utf-8")
    print(f"whole held-out figures pinned in {FLOOR}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="pin the figures measured now")
    parser.add_argument("--full", default="", help="bench/recall_kinds.py --json output to pin")
    parser.add_argument("--runs", type=int, default=1, help="measure this many times")
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    args = parser.parse_args()
    if args.full and not args.write:
        pin_full(json.loads(Path(args.full).read_text(encoding="utf-8")))
        return
    started = time.perf_counter()
    names = args.sets.split(",") if args.sets else None
    runs = [measure(names) for _ in range(args.runs)]
    measured = runs[0]
    spread = {name: max(abs(r[name]["fused@5"] - measured[name]["fused@5"]) for r in runs)
              for name in measured}  # fmt: skip
    print(f"{'set':<28} {'n':>4} | {'BM25@5':>6} {'@10':>6} | {'vec@5':>6} {'@10':>6} | "
          f"{'fused@5':>7} {'@10':>6} | run-to-run")  # fmt: skip
    for name, f in measured.items():
        print(f"{name:<28} {f['n']:>4} | {f['bm25@5']:6.3f} {f['bm25@10']:6.3f} | "
              f"{f['vector@5']:6.3f} {f['vector@10']:6.3f} | {f['fused@5']:7.3f} "
              f"{f['fused@10']:6.3f} | {spread[name]:.3f}")  # fmt: skip
    print(f"{time.perf_counter() - started:.0f} s for {args.runs} run(s)")
    if FLOOR.exists() and not args.write:
        fallen = falls(json.loads(FLOOR.read_text(encoding="utf-8")), measured)
        print("\n".join(["fell below the floor:", *fallen]) if fallen else "no set fell")
    if args.write and names is None:
        full = json.loads(Path(args.full).read_text(encoding="utf-8")) if args.full else {}
        old = json.loads(FLOOR.read_text(encoding="utf-8"))["sets"] if FLOOR.exists() else {}
        pinned = {
            "about": "Held-out recall pinned by bench/recall_floor.py --write: `sample` is what "
            "tests/integration/test_recall_floor.py measures again (it fails when fused@5 or "
            "@10 falls by more than one question of the sample); `held_out` is the whole "
            "split from bench/recall_kinds.py --json (any gold memory in the first k).",
            "sets": {
                name: {"sample": figures,
                       "held_out": full.get(name, {}).get("held-out")
                       or old.get(name, {}).get("held_out")}
                for name, figures in measured.items()
            },
        }  # fmt: skip
        FLOOR.write_text(json.dumps(pinned, indent=1) + "\n", encoding="utf-8")
        print(f"pinned in {FLOOR}")


if __name__ == "__main__":
    main()
