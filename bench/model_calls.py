"""Model calls per turn by purpose over a scripted 40-turn chat, before and after issue 12.

Run: `.venv/bin/python bench/model_calls.py` (about three minutes: every call takes 0.8 s).

The chat graph runs in this process (`LocalSession`, SQLite memory, the local write queue)
against the OpenAI-compatible stub of the e2e tests, answering every call after 0.8 s like a
hosted model. Both configurations run the same 40 turns of realistic small talk, facts,
questions, a correction and a remember:

- before: `retrieval_mode=hybrid` (the old default), no admission, no batching (every turn to
  the writer on its own);
- after: the defaults (BM25 retrieval, admission, batches of 5 per thread).

Calls are counted twice: by the stub (what the "provider" saw, classified by request) and by the
project's own accounting (`memory.usage` ledger); the two must agree.
Target: memory's calls (retrieval + writer) at most 1.0 per turn on average.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.registry import registry
from memory.usage.counts import PURPOSES, Usage
from tests.e2e.stub_openai import STUB_MODEL, StubOpenAI

STUB_SECONDS = 0.8
TARGET = 1.0
SCRIPT = [
    "Hi there!",
    "My name is Priya and I live in Leeds.",
    "How are you today?",
    "ok",
    "I work as a nurse, mostly night shifts.",
    "Thanks!",
    "What's a good way to sleep during the day?",
    "haha that makes sense",
    "I have a cat called Miso.",
    "lol",
    "Can you recommend a book for a long train ride?",
    "I prefer sci-fi, especially Ursula Le Guin.",
    "ok cool",
    "What's the weather usually like in Lisbon in May?",
    "I'm flying to Lisbon on May 12 for a friend's wedding.",
    "nice",
    "Remember that I'm allergic to penicillin.",
    "got it, thanks",
    "How many ounces are in a cup?",
    "好的",
    "我最近在学日语，每天练半小时。",
    "哈哈",
    "你觉得日语难吗？",
    "thanks a lot",
    "Actually, the wedding is on May 14, not May 12.",
    "sounds good",
    "What should I pack for a wedding in Portugal?",
    "My sister Maya is coming with me.",
    "great",
    "Tell me a joke.",
    "lol that's bad",
    "Let's plan a 3-day itinerary for Lisbon.",
    "Start with day one.",
    "ok",
    "I don't like crowded places, keep it calm.",
    "perfect",
    "Thanks, that's all for today.",
    "bye",
    "What do you remember about me?",
    "See you tomorrow!",
]
BEFORE = {"admission": False, "write_batch_size": 1, "retrieval_mode": "hybrid"}
AFTER = {"admission": True, "write_batch_size": 5, "retrieval_mode": "mechanical"}


def purpose_of(request: dict[str, Any]) -> str:
    """What a request to the stub was for, from what it asks."""
    tools = json.dumps(request.get("tools") or [])
    if "create_memory" in tools:
        return "writer"
    said = json.dumps(request.get("messages") or [], ensure_ascii=False)
    return "retrieval" if "</query>" in said else "chat"


def use_stub(stub: StubOpenAI) -> None:
    os.environ.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="stub")


async def run_chat(
    config: dict[str, Any], folder: Path, script: list[str] = SCRIPT
) -> tuple[list[float], dict[str, Usage], list[str]]:
    """The scripted chat under `config`; (seconds per reply, the ledger's totals, statuses)."""
    settings = Settings(
        memory_backend=f"sqlite:{folder / 'memory.db'}", data_dir=str(folder / "data"),
        snapshot_seconds=None, admission=config["admission"],
        write_batch_size=config["write_batch_size"],
    )  # fmt: skip
    context = Context(
        user_id="priya", model=f"openai/{STUB_MODEL}", retrieval_mode=config["retrieval_mode"]
    )
    seconds, statuses = [], []
    with use_settings(settings):
        async with LocalSession(context, folder / "chat") as session:
            for text in script:
                started = time.perf_counter()
                reply = await session.say("t1", text)
                seconds.append(time.perf_counter() - started)
                statuses.append(reply.memory_write.get("status", ""))
        assert session.memory is not None  # the session waited for the writer on leaving
        totals = session.memory.usage.totals("priya")
    registry.clear()
    return seconds, totals, statuses


def per_turn(count: int) -> str:
    return f"{count / len(SCRIPT):5.2f}"


async def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    results: dict[str, tuple[dict[str, int], dict[str, Usage], list[float], list[str]]] = {}
    with StubOpenAI(delay_seconds=STUB_SECONDS) as stub:
        use_stub(stub)
        for name, config in (("before", BEFORE), ("after", AFTER)):
            stub.requests.clear()
            with tempfile.TemporaryDirectory() as folder:
                seconds, ledger, statuses = await run_chat(config, Path(folder))
            seen = {purpose: 0 for purpose in PURPOSES}
            for request in stub.requests:
                seen[purpose_of(request)] += 1
            results[name] = (seen, ledger, seconds, statuses)
    print(f"model calls per turn over a scripted {len(SCRIPT)}-turn chat, stub answering in "
          f"{STUB_SECONDS:g} s (seen by the stub; the project's ledger in brackets)")  # fmt: skip
    print(f"{'':8} {'chat':>13} {'retrieval':>13} {'writer':>13} {'memory':>8} "
          f"{'reply median s':>15}")  # fmt: skip
    failed = False
    for name, (seen, ledger, seconds, _) in results.items():
        cells = [f"{per_turn(seen[p])} ({per_turn(ledger.get(p, Usage()).calls)})"
                 for p in ("chat", "retrieval", "writer")]  # fmt: skip
        memory = seen["retrieval"] + seen["writer"]
        print(f"{name:8} {cells[0]:>13} {cells[1]:>13} {cells[2]:>13} {per_turn(memory):>8} "
              f"{statistics.median(seconds):15.2f}")  # fmt: skip
        if any(seen[p] != ledger.get(p, Usage()).calls for p in ("chat", "retrieval", "writer")):
            print(f"  the ledger disagrees with the stub ({name}): {ledger}")
            failed = True
    before_memory = sum(results["before"][0][p] for p in ("retrieval", "writer"))
    after_memory = sum(results["after"][0][p] for p in ("retrieval", "writer"))
    statuses = results["after"][3]
    skipped = statuses.count("skipped")
    print(f"memory calls per turn: after/before = {after_memory / max(before_memory, 1):.2f} "
          f"({per_turn(after_memory).strip()} vs {per_turn(before_memory).strip()}); "
          f"{skipped} of {len(SCRIPT)} turns skipped by admission")  # fmt: skip
    met = after_memory / len(SCRIPT) <= TARGET
    print(f"target: memory <= {TARGET:g} call per turn -> {'met' if met else 'MISSED'}")
    return 0 if met and not failed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
