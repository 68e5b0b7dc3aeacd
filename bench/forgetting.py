"""Forget and erase: what is still reachable per channel, and what erase_user costs.

Run: `.venv/bin/python bench/forgetting.py` (about a minute; `--quick` skips the 2,000/10,000
timing).

Residue: eight facts, each naming a made-up word, are told through LocalSession (the chat graph
with the offline model, YAML memory, the SQLite archive, journal, trace, snapshots), with a
question turn after them. Then each fact's memory is forgotten the way the writer's delete
does (`manager.forget`, then `memory.archive.reconcile.reconcile`, the archive's half of a forget),
and afterwards erased (`LongTermMemory.erase`). After each step, for every channel the agent
or a file reader can reach, the number of facts (of eight) still reachable there:
retrieval (BM25), `search_memory`, the topic summary of the word, the core context,
`search_conversations`, the daily digests, any file under the data folder but the threads,
and the thread's checkpoints (which only `erase_user(threads=...)` removes). A baseline erase
with the free-space scrub turned off (plain DELETEs: SQLite keeps the rows in free pages and
the WAL) shows what the scrub is for.

Cost: `erase_user` of a user with 2,000 memories and 10,000 archived messages (SQLite memory
file shared with a second user of the same size, snapshot, journal and trace rows), against
the baseline of the same erase without the scrub; and one `erase(id)` in that store (it reads
the whole archive to find the messages carrying the memory).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import statistics
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.cli.session import LocalSession
from graph.context import Context
from memory.archive import ArchivedMessage, archives
from memory.archive.reconcile import reconcile
from memory.integration.archive_location import archive_spec
from memory.integration.settings import use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.document import Change
from memory.store.snapshots import write_snapshot
from memory.writer.journal import TurnJournal
from memory.writer.turn import Turn

WORDS = ["Quorvik", "Tallesmo", "Brenwhit", "Osmarel", "Vintaro", "Keldune", "Marrowby", "Zephani"]
TEMPLATES = [
    "I live in {w}.",
    "I work at {w} Clinic.",
    "My sister is called {w}.",
    "My dog is {w}.",
    "I like {w} tea.",
    "My doctor is Dr {w}.",
    "My favourite city is {w}.",
    "My teacher is {w}.",
]
THREADS = "threads.sqlite"
CHANNELS = (
    "retrieval", "search_memory", "topic summary", "core context", "search_conversations",
    "digests", "files (not threads)", "thread checkpoints",
)  # fmt: skip


def files_holding(folder: Path, word: str, skip: str = THREADS) -> list[Path]:
    wanted = word.lower().encode()
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and path.name != skip:
            data = path.read_bytes()
            data = gzip.decompress(data) if path.suffix == ".gz" else data
            if wanted in data.lower():
                found.append(path)
    return found


def reachable(memory: LongTermMemory, archive: object, folder: Path, word: str) -> dict[str, bool]:
    related = memory.get_related_memory_from(f"{word}?", mode="mechanical", limit=10)
    summary = memory.topics.summary(word) or ""  # feature: topics
    result = archive.search(word)  # type: ignore[attr-defined]
    said = [m.content for hit in result.hits for m in (hit.anchor, *hit.around)]
    return {
        "retrieval": any(word in m["description"] for m in related),
        "search_memory": any(
            word in memory.manager.get(i).description for i in memory.search(word)
        ),
        "topic summary": word in summary,  # feature: topics
        "core context": word in json.dumps(memory.get_core_context("bench-1")),
        "search_conversations": any(word in text for text in said),
        "digests": any(word in d.text for d in archive.digests()),  # type: ignore[attr-defined]
        "files (not threads)": bool(files_holding(folder, word)),
        "thread checkpoints": word.lower().encode() in (folder / THREADS).read_bytes().lower(),
    }


def count(
    memory: LongTermMemory, archive: object, folder: Path, words: list[str]
) -> dict[str, int]:
    totals = dict.fromkeys(CHANNELS, 0)
    for word in words:
        for channel, found in reachable(memory, archive, folder, word).items():
            totals[channel] += found
    return totals


def no_scrub() -> ExitStack:
    """Erase with plain DELETEs: every free-space scrub (VACUUM, WAL checkpoint) turned off."""
    stack = ExitStack()
    for target in (
        "memory.erasure.erase.scrub_file", "memory.erasure.threads.scrub",
        "memory.erasure.stores.scrub", "memory.archive.sqlite_archive.SqliteArchive.scrub",
    ):  # fmt: skip
        stack.enter_context(mock.patch(target, lambda *a, **k: True))
    return stack


async def told(folder: Path) -> tuple[LongTermMemory, dict[str, str]]:
    context = Context(user_id="ada", model="offline/rules")
    async with LocalSession(context, folder) as session:
        for word, template in zip(WORDS, TEMPLATES, strict=True):
            await session.say("bench-1", template.format(w=word))
        await session.say("bench-1", "What do you remember about me?")
        await session.wait_for_writes()
        assert session.memory is not None
        memory = session.memory
    memory.topics.refresh()  # feature: topics
    ids = {}
    for word in WORDS:
        found = [i for i, item in memory.manager.list_items().items() if word in item.description]
        ids[word] = found[0] if found else ""
    return memory, ids


def residue(scrubbed: bool) -> dict[str, dict[str, int]]:
    folder = Path(tempfile.mkdtemp(prefix="bench-forgetting-"))
    backend = f"yaml:{folder / 'memory'}"
    rows: dict[str, dict[str, int]] = {}
    with use_settings(memory_backend=backend, data_dir=str(folder / "data"), snapshot_seconds=0.05):
        memory, ids = asyncio.run(told(folder))
        archive = archives.open(archive_spec(), "ada")
        words = [w for w, i in ids.items() if i]
        if len(words) < len(WORDS):  # nothing to forget: left out of every count
            print(f"  (the offline writer stored no memory for {sorted(set(WORDS) - set(words))})")
        rows["told"] = count(memory, archive, folder, words)
        tombstones = {}
        for word, memory_id in ids.items():
            if memory_id:
                tombstones[word] = memory.manager.forget(memory_id, "please forget it")
        reconcile(memory.manager, archive)
        if memory.snapshots is not None:
            memory.snapshots.flush()
        rows["after forget"] = count(memory, archive, folder, words)
        with ExitStack() if scrubbed else no_scrub():
            for memory_id in tombstones.values():
                memory.erase(memory_id, archive=archive)
        rows["after erase"] = count(memory, archive, folder, words)
        rows["planted"] = dict.fromkeys(CHANNELS, len(words))
    registry.clear()
    archives.clear()
    return rows


def print_residue() -> None:
    with_scrub, without = residue(True), residue(False)
    planted = with_scrub.pop("planted")["retrieval"]
    print(f"== residue: planted facts (of {planted}) still reachable, per channel")
    table = {**with_scrub, "erase, no scrub (baseline)": without["after erase"]}
    print(f"{'channel':<22}" + "".join(f"{name:>28}" for name in table))
    for channel in CHANNELS:
        print(f"{channel:<22}" + "".join(f"{row[channel]:>28}" for row in table.values()))


# ── cost ────────────────────────────────────────────────────────────────


def big_user(folder: Path, user: str, memories: int, messages: int) -> LongTermMemory:
    manager = SqliteMemoryManager(folder / "memory.db", user)
    changes = [
        Change("add", description=f"{user} fact {n}: likes {uuid.uuid4().hex[:10]}", theme="t")
        for n in range(memories)
    ]
    manager.apply(changes, f"seed-{user}")
    memory = LongTermMemory(manager, embeddings="off")
    archive = archives.open(f"sqlite:{folder / 'conversations'}", user)
    assert archive is not None
    start = time.time() - messages
    archive.add([
        ArchivedMessage(user, f"t{n % 50}", "", f"m{n}", "user" if n % 2 else "assistant",
                        f"{user} message {n} about {uuid.uuid4().hex[:12]}", start + n)
        for n in range(messages)
    ])  # fmt: skip
    journal = TurnJournal(memory.journal_path)
    for n in range(200):
        journal.append(Turn.of(user, [{"role": "user", "content": f"{user} turn {n}"}]))
    journal.close()
    write_snapshot(manager, folder / "memory_backup" / f"{user}.jsonl.gz")
    return memory


def timed_erase_user(memories: int, messages: int, scrubbed: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        memory = big_user(folder, "ada", memories, messages)
        big_user(folder, "bob", memories, messages)
        archive = archives.open(f"sqlite:{folder / 'conversations'}", "ada")
        one = next(iter(memory.manager.list_items()))
        with ExitStack() if scrubbed else no_scrub():
            started = time.perf_counter()
            memory.erase(one, archive=archive)
            single = time.perf_counter() - started
            started = time.perf_counter()
            memory.erase_user(archive=archive)
            whole = time.perf_counter() - started
        archives.clear()
    return single, whole


def print_cost(memories: int, messages: int, runs: int = 3) -> None:
    print(f"\n== erase_user: {memories:,} memories and {messages:,} archived messages (SQLite,")
    print(f"   the memory file shared with a second user of the same size; median of {runs} runs)")
    scrubbed = [timed_erase_user(memories, messages, True) for _ in range(runs)]
    plain = [timed_erase_user(memories, messages, False) for _ in range(runs)]
    print(f"{'':<26}{'with scrub s':>14}{'no scrub s':>12}{'ratio':>8}")
    for index, name in ((1, "erase_user"), (0, "erase(one id)")):
        with_s = statistics.median(run[index] for run in scrubbed)
        without = statistics.median(run[index] for run in plain)
        print(f"{name:<26}{with_s:>14.2f}{without:>12.2f}{with_s / without:>8.1f}")


if __name__ == "__main__":
    import logging

    logging.basicConfig(level=logging.ERROR)
    print_residue()
    if "--quick" not in sys.argv:
        print_cost(2_000, 10_000)
