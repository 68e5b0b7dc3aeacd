"""Benchmark: send_history latency while the memory agent is busy, and journal throughput.

    .venv/bin/python bench/write_path.py [--sends 300] [--consumer-seconds 2]

The consumer takes `--consumer-seconds` per turn, so every send lands while a turn is being
written; the target is p99 <= 5 ms (the reply never waits for memory). The baseline is a bare
`asyncio.Queue.put` measured the same way in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.long_term import LongTermMemory
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.writer.journal import TurnJournal
from memory.writer.turn import Turn

TURN = [
    {"role": "user", "content": "I have my discrete maths exam the day after tomorrow."},
    {"role": "assistant", "content": "Good luck! I will check the weather for that day."},
]


class SlowConsumer:
    """Stands in for the memory agent: `seconds` per turn, until told to hurry for the drain."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.hurry = False
        self.consumed = 0

    async def consume(self, *args: Any, **kwargs: Any) -> None:
        if not self.hurry:
            await asyncio.sleep(self.seconds)
        self.consumed += 1


def percentiles(samples_ms: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


async def time_sends(send: Any, count: int, spacing: float) -> list[float]:
    samples = []
    for index in range(count):
        started = time.perf_counter()
        await send(index)
        samples.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(spacing)  # sends arrive like replies, not in one burst
    return samples


async def main(sends: int, consumer_seconds: float, journal_turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        baseline_queue: asyncio.Queue[Any] = asyncio.Queue()

        async def put(index: int) -> None:
            await baseline_queue.put(("session", f"turn-{index}", list(TURN)))

        baseline = await time_sends(put, sends, 0.005)

        results = {}
        for durability in ("full", "normal"):
            consumer = SlowConsumer(consumer_seconds)
            manager = YamlMemoryManager(directory / "memory", "bench")
            memory = LongTermMemory(
                manager,
                consumer=consumer,
                journal_path=directory / f"{durability}.sqlite",
                journal_durability=durability,  # type: ignore[arg-type]
            )
            memory.start()

            async def send(index: int, memory: LongTermMemory = memory) -> None:
                await memory.send_history(TURN, session_id="session")

            latencies = await time_sends(send, sends, 0.005)
            busy = consumer.consumed
            consumer.hurry = True
            await memory.stop()

            journal = TurnJournal(directory / f"throughput-{durability}.sqlite", durability)  # type: ignore[arg-type]
            started = time.perf_counter()
            for index in range(journal_turns):
                journal.append(Turn.of("bench", TURN, turn_id=f"turn-{index}", thread_id="session"))
            append_rate = journal_turns / (time.perf_counter() - started)
            started = time.perf_counter()
            for index in range(journal_turns):
                journal.mark_done("bench", f"turn-{index}")
            done_rate = journal_turns / (time.perf_counter() - started)
            results[durability] = (latencies, busy, append_rate, done_rate)

    base_median, base_p99 = percentiles(baseline)
    print(f"send_history while the consumer takes {consumer_seconds:g} s per turn ({sends} sends)")
    print(
        f"  baseline asyncio.Queue.put       : median {base_median:.4f} ms   p99 {base_p99:.4f} ms"
    )
    for durability, (latencies, busy, _, _) in results.items():
        median, p99 = percentiles(latencies)
        verdict = "PASS" if p99 <= 5.0 else "FAIL"
        print(
            f"  send_history, durability={durability:<6} : "
            f"median {median:.3f} ms   p99 {p99:.3f} ms"
            f"   (x{median / base_median:.0f} / x{p99 / base_p99:.0f} the baseline; "
            f"target p99 <= 5 ms: {verdict}; {busy} turns consumed meanwhile)"
        )
    print(f"journal throughput, SQLite WAL, one commit per turn ({journal_turns} turns)")
    for durability, (_, _, append_rate, done_rate) in results.items():
        print(
            f"  durability={durability:<6} : append {append_rate:,.0f} turns/s   "
            f"mark_done {done_rate:,.0f} turns/s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sends", type=int, default=500)
    parser.add_argument("--consumer-seconds", type=float, default=2.0)
    parser.add_argument("--journal-turns", type=int, default=2000)
    options = parser.parse_args()
    asyncio.run(main(options.sends, options.consumer_seconds, options.journal_turns))
