"""A 300-turn conversation through the compiled graph, with and without compaction: prompt
tokens per turn, checkpoint bytes after 100, 200 and 300 turns, and the time of a turn; then
the same conversation with a verbose summariser: the size of the running summary over time and
the largest prompt the chat model was sent.

Run: `.venv/bin/python bench/long_conversation.py` (about two minutes; `--verbose-only` runs
the verbose summariser only).

Both runs use the offline model (chat, extractive summaries, memory writer), the SQLite
checkpointer of `make chat`, SQLite memories and the archive; the user says a sentence of about
twenty words per turn, every fifth one about themselves. "without" sets
GULFSTREAM_CONTEXT_BUDGET_TOKENS=off (every message is sent every turn, as before compaction);
"with" uses a budget of BUDGET tokens. Prompt tokens are what the cost accounting counts for the
chat call (about four characters a token). Checkpoint bytes are the sizes of the checkpoint and
pending-write blobs in the SQLite checkpointer.

The verbose run uses a budget of VERBOSE_BUDGET tokens and, for the summary, a stand-in model
that answers with its whole prompt twice and ignores `max_tokens` (as long as its input, or
longer: what many real models do when asked to summarise a long input); the chat model stays
the offline one. It prints what the summariser returned against what the summary kept, and the
largest prompt (characters, system prompt included) over the last 100 turns.
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

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.constants import TAG_NOSTREAM

import memory.integration.compaction as compaction
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.writer.local import local_writer
from tests.fakes import EchoingModel

TURNS = 300
BUDGET = 4_000
MARKS = (100, 200, 300)
VERBOSE_BUDGET = 2_000
SUMMARY_MARKS = (10, 20, 40, 100, 200, 300)
TARGET_PROMPT_CHARS = 16_000


class PromptSizes(BaseCallbackHandler):
    """The size in characters of each prompt the chat model is sent (summary calls apart)."""

    def __init__(self) -> None:
        self.chat: list[int] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        if TAG_NOSTREAM not in (kwargs.get("tags") or []):
            self.chat.append(sum(len(str(m.content)) for m in messages[0]))


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


def run(folder: Path, budget: str, summarizer: Any = None) -> dict[str, Any]:
    settings = Settings(
        memory_backend=f"sqlite:{folder / 'memory.db'}", data_dir=str(folder / "data"),
        snapshot_seconds=None, embeddings="off", context_budget_tokens=budget,
    )  # fmt: skip
    prompts, seconds, sizes, summaries, statuses = [], [], {}, [], []
    path = folder / "threads.sqlite"
    sent = PromptSizes()
    loader = compaction.load_chat_model
    if summarizer is not None:
        compaction.load_chat_model = lambda name, **_: summarizer  # type: ignore[assignment]
    try:
        with use_settings(settings), SqliteSaver.from_conn_string(str(path)) as saver:
            app = compile_graph(checkpointer=saver)
            config = {"configurable": {"thread_id": "long"}, "callbacks": [sent]}
            context = Context(user_id="bench", model="offline/rules")
            for turn in range(1, TURNS + 1):
                started = time.perf_counter()
                state = app.invoke({"messages": [{"role": "user", "content": said(turn)}]},
                                   config, context=context)  # fmt: skip
                seconds.append(time.perf_counter() - started)
                prompts.append(state["cost"]["chat"]["input_tokens"])
                summaries.append(len(state.get("summary", {}).get("text", "")))
                folded = state.get("summary", {}).get("messages", 0)
                statuses.append(state.get("compaction", {}).get("status", "") + f"@{folded}")
                if turn in MARKS:
                    sizes[turn] = checkpoint_bytes(path)
            local_writer.stop(60)
    finally:
        compaction.load_chat_model = loader  # type: ignore[assignment]
    return {"prompts": prompts, "seconds": seconds, "sizes": sizes, "summaries": summaries,
            "statuses": statuses, "chars": sent.chat}  # fmt: skip


def verbose() -> None:
    summarizer = EchoingModel(times=2)
    with tempfile.TemporaryDirectory() as folder:
        data = run(Path(folder), str(VERBOSE_BUDGET), summarizer)
    chars, kept = data["chars"], data["summaries"]
    print(f"\n{TURNS} turns, verbose summariser (answers its prompt twice, ignores max_tokens); "
          f"budget {VERBOSE_BUDGET:,} tokens")  # fmt: skip
    print(f"summariser calls {len(summarizer.answered)}; its answers: median "
          f"{statistics.median(summarizer.answered):,.0f} chars, largest "
          f"{max(summarizer.answered):,} chars")  # fmt: skip
    print("summary kept, characters: " + ", ".join(
        f"turn {mark} {kept[mark - 1]:,}" for mark in SUMMARY_MARKS))  # fmt: skip
    runs = sorted(set(data["statuses"]) - {"@0"})  # one per compaction: status@messages folded
    kinds = {
        kind: sum(r.startswith(kind + "@") for r in runs)
        for kind in {r.split("@")[0] for r in runs}
    }
    print(f"compactions: {len(runs)}, by status: {kinds}")
    print(f"largest chat prompt, last 100 turns: {max(chars[-100:]):,} chars "
          f"(target < {TARGET_PROMPT_CHARS:,}); all turns: {max(chars):,} chars; "
          f"tokens: {max(data['prompts'][-100:]):,} of {VERBOSE_BUDGET:,}")  # fmt: skip


def main() -> None:
    logging.disable(logging.WARNING)
    if "--verbose-only" in sys.argv:
        verbose()
        return
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
    verbose()


if __name__ == "__main__":
    main()
