"""First-turn retrieval of a new process on an existing store: with the offline model loaded at
start (the graph's import starts it) against loading it inside the first reply, in the same run.

Run: `.venv/bin/python bench/first_turn.py` (about a minute; offline).

A SQLite store of 2,000 memories whose vectors are already kept is made once. Each measurement
is a fresh Python process that imports the chat graph (what `langgraph dev` does at start), waits
`--gap` seconds (a first message never arrives in the same instant as the server is up; 0 is
the worst case), then times what the retrieve_memory node does for a user's first and later
turns: open the user's memory through the registry, then fused retrieval.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time
started = time.perf_counter()
import memory.integration.models.embeddings as embeddings
if sys.argv[3] == "lazy":  # the behaviour before: nothing is loaded until the first query
    embeddings.load_deployment_embeddings_in_background = lambda: None
import graph.agent  # noqa: F401  (the server's start: the graph module is imported)
from memory.registry import MemoryRegistry
imported = time.perf_counter() - started
time.sleep(float(sys.argv[2]))
registry = MemoryRegistry()
turns = []
for query in ["what music do I like?", "coffee piano", "我最近睡得怎么样", "weekend plans"]:
    began = time.perf_counter()
    memory = registry.open(sys.argv[1], "bench", snapshot_delay=None)
    memory.get_related_memory_from(query, "mechanical", limit=8)
    turns.append((time.perf_counter() - began) * 1000)
print(json.dumps({"imported_s": imported, "turns_ms": turns}))
"""


def make_store(folder: Path, size: int) -> str:
    from retrieval import synthetic_items

    from memory.long_term import LongTermMemory
    from memory.retrieval.evaluation import write_items
    from memory.store.factory import open_memory_manager

    spec = f"sqlite:{folder / 'memory.db'}"
    manager = open_memory_manager(spec, "bench")
    write_items(manager, synthetic_items(size, random.Random(5)))
    assert LongTermMemory(manager).retrievers.catch_up(max_missing=size, timeout=600)
    return spec


def run_child(spec: str, gap: float, variant: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GULFSTREAM_")}
    out = subprocess.run([sys.executable, "-c", CHILD, spec, str(gap), variant], cwd=ROOT,
                         env=env, capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    spec = make_store(Path(tempfile.mkdtemp()), args.size)
    print(f"store: {args.size} memories with kept vectors; {args.runs} new processes per row")
    print(f"{'':44s}{'first turn':>12s}{'later turns':>13s}{'graph import':>14s}")
    for gap in (0.0, 2.0):
        for variant, label in (("lazy", "model loaded by the first query (before)"),
                               ("start", "model loaded at start (now)")):  # fmt: skip
            firsts, laters, imports = [], [], []
            for _ in range(args.runs):
                result = run_child(spec, gap, variant)
                turns = result["turns_ms"]
                firsts.append(turns[0])  # type: ignore[index]
                laters.extend(turns[1:])  # type: ignore[index]
                imports.append(result["imported_s"])
            print(f"gap {gap:.0f} s, {label:36s}{statistics.median(firsts):9.0f} ms"
                  f"{statistics.median(laters):10.1f} ms{statistics.median(imports):11.2f} s")  # type: ignore[type-var]  # fmt: skip


if __name__ == "__main__":
    main()
