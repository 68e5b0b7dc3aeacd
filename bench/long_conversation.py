"""A 300-turn conversation through the compiled graph, with and without compaction: prompt
tokens per turn, checkpoint bytes after 100, 200 and 300 turns, and the time of a turn.

Run: `.venv/bin/python bench/long_conversation.py` (about a minute).

Both runs use the offline model (chat, extractive summaries, memory writer), the SQLite
checkpointer of `make chat`, SQLite memories and the archive; the user says a sentence of about
twenty words per turn, every fifth one about themselves. "without" sets
GULFSTREAM_CONTEXT_BUDGET_TOKENS=off (every message is sent every turn, as before compaction);
"with" uses a budget of BUDGET tokens. Prompt tokens are what the cost accounting counts for the
chat call (about four characters a token). Checkpoint bytes are the sizes of the checkpoint and
pending-write blobs in the SQLite checkpointer.
"""

from __future__ import annotations

import logging
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.sqlite import SqliteSaver

from graph.agent import compile_graph
from graph.context import Context
from graph.settings import Settings, use_settings
from memory.writer.local import local_writer

TURNS = 300
BUDGET = 4_000
MARKS = (100, 200, 300)


def said(turn: int) -> str:
    if turn % 5 == 0:
        return f"I went to the market on day {turn} and bought apples, pears and a loaf of bread."
    return (f"Turn {turn}: the weather report says light rain in the afternoon, about {turn} "
            "millimetres, and a clear evening after that.")  # fmt: skip


def checkpoint_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        blobs = db.execute("SELECT SUM(LENGTH(checkpoint)) FROM checkpoints").fetchone()[0]
        writes = db.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()[0]
    return int(blobs or 0) + int(writes or 0)


def run(folder: Path, budget: str) -> dict[str, Any]:
    settings = Settings(
        memory_backend=f"sqlite:{folder / 'memory.db'}", data_dir=str(folder / "data"),
        snapshot_seconds=None, embeddings="off", context_budget_tokens=budget,
    )  # fmt: skip
    prompts, seconds, sizes = [], [], {}
    path = folder / "threads.sqlite"
    with use_settings(settings), SqliteSaver.from_conn_string(str(path)) as saver:
        app = compile_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "long"}}
        context = Context(user_id="bench", model="offline/rules")
        for turn in range(1, TURNS + 1):
            started = time.perf_counter()
            state = app.invoke({"messages": [{"role": "user", "content": said(turn)}]}, config,
                               context=context)  # fmt: skip
            seconds.append(time.perf_counter() - started)
            prompts.append(state["cost"]["chat"]["input_tokens"])
            if turn in MARKS:
                sizes[turn] = checkpoint_bytes(path)
        local_writer.stop(60)
    return {"prompts": prompts, "seconds": seconds, "sizes": sizes}


def main() -> None:
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as without_dir, tempfile.TemporaryDirectory() as with_dir:
        without = run(Path(without_dir), "off")
        compacted = run(Path(with_dir), str(BUDGET))
    print(f"{TURNS}-turn conversation, offline model; compaction budget {BUDGET} tokens")
    print(f"{'':<24} {'without':>12} {'with':>12} {'ratio':>8}")

    def row(label: str, a: float, b: float, unit: str = "") -> None:
        print(f"{label:<24} {a:>11,.0f}{unit} {b:>11,.0f}{unit} {a / b:>7.1f}x")

    for mark in MARKS:
        row(f"prompt tokens, turn {mark}", without["prompts"][mark - 1],
            compacted["prompts"][mark - 1])  # fmt: skip
    row("prompt tokens, largest", max(without["prompts"]), max(compacted["prompts"]))
    row("prompt tokens, all turns", sum(without["prompts"]), sum(compacted["prompts"]))
    for mark in MARKS:
        row(f"checkpoint KB, turn {mark}", without["sizes"][mark] / 1024,
            compacted["sizes"][mark] / 1024)  # fmt: skip
    for label, data in (("without", without), ("with", compacted)):
        s = data["sizes"]
        print(f"checkpoint growth {label:<8}: turns 101-200 {(s[200] - s[100]) / 1024:,.0f} KB, "
              f"201-300 {(s[300] - s[200]) / 1024:,.0f} KB")  # fmt: skip
    late = [statistics.median(d["seconds"][-20:]) * 1000 for d in (without, compacted)]
    early = [statistics.median(d["seconds"][10:30]) * 1000 for d in (without, compacted)]
    print(f"median turn, turns 11-30 : without {early[0]:.0f} ms, with {early[1]:.0f} ms")
    print(f"median turn, last 20     : without {late[0]:.0f} ms, with {late[1]:.0f} ms")
    sent = compacted["prompts"]
    first = next(i for i in range(1, len(sent)) if sent[i] < sent[i - 1])  # the first compaction
    print(
        f"largest prompt from the first compaction on (turn {first + 1}): "
        f"{max(sent[first:]):,} tokens (budget {BUDGET:,})"
    )


if __name__ == "__main__":
    main()
