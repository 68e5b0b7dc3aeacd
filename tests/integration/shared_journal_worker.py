"""A process that writes the turns of a journal another process writes too (the lease test).

    python -m tests.integration.shared_journal_worker DATA_DIR

Its consumer takes `WORKER_DELAY` seconds per turn and appends "pid turn_id start end" to
DATA_DIR/consumed-<pid>.log; the process exits once the journal has nothing pending.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.turn import Turn


class LoggingConsumer:
    def __init__(self, log: Path, delay: float) -> None:
        self.log, self.delay = log, delay

    async def consume(self, turn: Turn, memory: LongTermMemory) -> Any:
        started = time.time()
        await asyncio.sleep(self.delay)
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {turn.turn_id} {started} {time.time()}\n")


async def main(folder: Path) -> None:
    delay = float(os.environ.get("WORKER_DELAY", "0.05"))
    consumer = LoggingConsumer(folder / f"consumed-{os.getpid()}.log", delay)
    memory = LongTermMemory(
        YamlMemoryManager(folder / "memory", "ada"),
        consumer=consumer,
        journal_path=folder / "write-journal.sqlite",
    )
    memory.start()
    journal = memory._writer().journal
    deadline = time.monotonic() + 120
    while journal.counts("ada")["pending"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await memory.stop(timeout=10)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
