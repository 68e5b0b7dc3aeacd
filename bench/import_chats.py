"""`make import-chats` throughput and the recall of what it imported, on the offline model.

    .venv/bin/python bench/import_chats.py                   # 10,000 messages, 100 facts asked
    .venv/bin/python bench/import_chats.py --messages 2000   # a quicker run

The export is JSONL built from tests/data/import_dialogues.jsonl (60 Synthetic-Persona-Chat
dialogues, CC BY 4.0; tests/data/README.md): the dialogues repeated with distinct thread ids,
one a day from 2025-01-01, until there are `--messages` messages. It is imported by the same
code as the CLI (`memory.integration.importing`: archive, admission, the deployment's writer, which
is the
offline model without an API key) into a fresh YAML store; throughput is messages (and turns)
per second of the whole import. Recall: a sample of the memories the import created, each
asked about in a NEW chat thread (`LocalSession`, the chat graph's own retrieval) with three
words of the user message it came from ("Do you remember what I told you about w1, w2 and
w3?"): the share whose memory is among the five the thread's retrieval returned.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.importing.formats import read_export
from memory.integration.importing.turns import turns_of
from memory.integration.importing.writing import Importer
from memory.integration.settings import Settings, use_settings
from memory.store.factory import open_memory_manager

POOL = Path(__file__).resolve().parents[1] / "tests" / "data" / "import_dialogues.jsonl"
USER = "importer"
STOP_WORDS = """that this with have what your about just really there they them then than been
were would could should also very much like love know think going doing some when where which
while from into over more most such only other well good great nice sure yeah thanks thank
hello always never ever something anything things thing time lots"""
STOP = frozenset(STOP_WORDS.split())


def build_export(path: Path, messages: int) -> int:
    """The JSONL export of `messages` messages (whole dialogues; the last one may be cut)."""
    pool = [json.loads(line) for line in POOL.read_text().splitlines()]
    start = datetime(2025, 1, 1, 19, 0, tzinfo=UTC)
    written, lines, day = 0, [], 0
    while written < messages:
        dialogue = pool[day % len(pool)]
        begin = start + timedelta(days=day)
        for n, said in enumerate(dialogue[: messages - written]):
            when = (begin + timedelta(seconds=60 * n)).isoformat()
            lines.append(json.dumps({"thread": f"bench-{day}", "role": said["role"],
                                     "text": said["text"], "time": when}))  # fmt: skip
            written += 1
        day += 1
    path.write_text("\n".join(lines) + "\n")
    return day


def words_of(text: str, count: int = 3) -> list[str]:
    """The `count` longest content words of a message (what the user would ask about)."""
    found = [w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in STOP]
    return sorted(dict.fromkeys(found), key=len, reverse=True)[:count]


async def recall(folder: Path, export_path: Path, sample: int) -> tuple[float, int]:
    """Recall@5 of imported memories asked about in a new thread, and how many were asked."""
    said = {t.turn_id: t.user_text for c in read_export(export_path).conversations
            for t in turns_of(c)}  # fmt: skip
    manager = open_memory_manager(f"yaml:{folder / 'memory'}", USER)
    created = [(memory_id, said[item.origin.get("turn_id", "")])
               for memory_id, item in sorted(manager.all_items().items())
               if item.origin.get("turn_id", "") in said and not item.deleted]  # fmt: skip
    random.Random(7).shuffle(created)
    asked = [(m, words_of(text)) for m, text in created if len(words_of(text)) == 3][:sample]
    found = 0
    async with LocalSession(Context(user_id=USER, model="offline/rules"), folder) as session:
        for n, (memory_id, words) in enumerate(asked):
            question = (
                f"Do you remember what I told you about {words[0]}, {words[1]} and {words[2]}?"
            )
            reply = await session.say(f"new-thread-{n}", question)
            found += memory_id in [m["id"] for m in reply.related_memories[:5]]
    return found / max(len(asked), 1), len(asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=100)
    args = parser.parse_args()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GULFSTREAM_WRITER_MODEL"):
        os.environ.pop(name, None)  # the offline model
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export_path = folder / "chats.jsonl"
        threads = build_export(export_path, args.messages)
        settings = Settings(memory_backend=f"yaml:{folder / 'memory'}", data_dir=str(folder),
                            snapshot_seconds=None)  # fmt: skip
        with use_settings(settings):
            started = time.perf_counter()
            export = read_export(export_path)
            summary = asyncio.run(Importer(USER).import_export(export))
            seconds = time.perf_counter() - started
            print(f"import of {export.message_count} messages in {threads} threads "
                  f"({summary.turns} turns), offline model, YAML store: {seconds:.1f} s, "
                  f"{export.message_count / seconds:.1f} messages/s, "
                  f"{summary.turns / seconds:.1f} turns/s")  # fmt: skip
            print(summary.describe())
            share, asked = asyncio.run(recall(folder, export_path, args.sample))
            print(f"recall@5 of imported facts in a new thread: {share:.2f} ({asked} asked)")


if __name__ == "__main__":
    main()
