"""Store benchmark: median time of add, update, hit and show per backend as the store grows.

Run: `.venv/bin/python bench/store_ops.py` (a few minutes on two cores). YAML is the baseline:
the last column of each row is how many times faster than YAML at the same size that backend is.
"""

from __future__ import annotations

import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.store.backends.langgraph_store import StoreMemoryManager
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import MemoryDocument
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager

SIZES = {
    "yaml": (100, 1_000, 10_000),
    "sqlite": (100, 1_000, 10_000, 100_000),
    "store/InMemoryStore": (100, 1_000, 10_000),
    "store/SqliteStore": (100, 1_000, 10_000),
}
OPS = ("add", "update", "hit", "show")
BUDGET_SECONDS = 1.0  # per (backend, size, op): repeat until this is spent ...
MIN_REPS, MAX_REPS = 3, 200  # ... but at least / at most this many times
SKIP_ABOVE_SECONDS = 2.0  # a single op predicted slower than this is skipped
TOPICS = ["咖啡", "猫", "项目", "旅行", "travel", "coffee", "work", "health", "music", "family"]


def build_document(size: int, rng: random.Random) -> MemoryDocument:
    """A realistic store: mixed Chinese/English descriptions, a creation entry each."""
    items = {}
    for n in range(size):
        topic = rng.choice(TOPICS)
        text = f"用户提到{topic}相关的第{n}件事 / the user said thing {n} about {topic}."
        items[f"{n:08x}"] = MemoryItem.create(text, topic, "seeded for the benchmark")
    return MemoryDocument(items, [], 1)


@contextmanager
def opened(backend: str, directory: Path) -> Iterator[Callable[[], BaseMemoryManager]]:
    """A function that opens a new manager over one fresh storage (same file, same store)."""
    if backend == "yaml":
        yield lambda: YamlMemoryManager(directory, "bench")
    elif backend == "sqlite":
        managers: list[SqliteMemoryManager] = []

        def open_sqlite() -> BaseMemoryManager:
            managers.append(SqliteMemoryManager(directory / "memory.db", "bench"))
            return managers[-1]

        yield open_sqlite
        for manager in managers:
            manager.close()
    elif backend == "store/InMemoryStore":
        from langgraph.store.memory import InMemoryStore

        memory_store = InMemoryStore()
        yield lambda: StoreMemoryManager(memory_store, "bench")
    else:
        from langgraph.store.sqlite import SqliteStore

        # As SqliteStore.from_conn_string opens it (its default journal mode, not WAL).
        conn = sqlite3.connect(
            directory / "store.db", check_same_thread=False, isolation_level=None
        )
        sqlite_store = SqliteStore(conn)
        sqlite_store.setup()
        yield lambda: StoreMemoryManager(sqlite_store, "bench")
        conn.close()


def medians(
    ops: dict[str, Callable[[], object]], setups: dict[str, Callable[[], object]]
) -> dict[str, float]:
    """Median wall time of each op, run in rotation so that a burst of load elsewhere on the
    machine hits every op alike; `setups[op]` runs untimed before its op."""
    times: dict[str, list[float]] = {name: [] for name in ops}
    started = time.perf_counter()
    rounds = 0
    while rounds < MAX_REPS and (
        rounds < MIN_REPS or time.perf_counter() - started < BUDGET_SECONDS * len(ops)
    ):
        for name, op in ops.items():
            if name in setups:
                setups[name]()
            begin = time.perf_counter()
            op()
            times[name].append(time.perf_counter() - begin)
        rounds += 1
    return {name: statistics.median(values) for name, values in times.items()}


def measure(
    manager: BaseMemoryManager, other: BaseMemoryManager, ids: list[str], rng: random.Random
) -> dict[str, float]:
    counter = iter(range(10**9))
    ops: dict[str, Callable[[], object]] = {
        "add": lambda: manager.add(f"新记忆 new memory {next(counter)}", "bench"),
        "update": lambda: manager.update(
            rng.choice(ids), "benchmark", new_description=f"changed {next(counter)}"
        ),
        "hit": lambda: manager.hit(rng.choice(ids)),
        "show": manager.show,
    }
    # Another manager (as another process would) writes before each show, so that no
    # backend can answer it from what it already holds in memory.
    return medians(ops, {"show": lambda: other.hit(rng.choice(ids))})


def run() -> dict[tuple[str, int], dict[str, float] | str]:
    rng = random.Random(7)
    results: dict[tuple[str, int], dict[str, float] | str] = {}
    for backend, sizes in SIZES.items():
        previous: tuple[int, dict[str, float]] | None = None
        for size in sizes:
            if previous is not None:
                # Full-rewrite backends grow linearly: predict from the last size measured.
                last_size, last = previous
                predicted = max(last.values()) * size / last_size
                if predicted > SKIP_ABOVE_SECONDS:
                    results[(backend, size)] = (
                        f"skipped: one op predicted at ~{predicted:.1f} s "
                        f"(linear from {max(last.values()):.3f} s at {last_size:,})"
                    )
                    continue
            with tempfile.TemporaryDirectory() as tmp, opened(backend, Path(tmp)) as open_:
                manager, other = open_(), open_()
                document = build_document(size, rng)
                seeding = time.perf_counter()
                with manager._write_lock():
                    manager._save_all(document)
                seeded = time.perf_counter() - seeding
                figures = measure(manager, other, list(document.items), rng)
            results[(backend, size)] = figures
            previous = (size, figures)
            print(f"  measured {backend:20} N={size:>7,} (seeded in {seeded:.1f} s)", flush=True)
    return results


def sqlite_scaling() -> dict[str, float]:
    """add/update/hit on SQLite stores of 1,000 and 100,000 items, measured in one rotation, so
    that load from elsewhere on the machine cannot favour one size over the other."""
    rng = random.Random(11)
    ops: dict[str, Callable[[], object]] = {}
    counter = iter(range(10**9))
    with tempfile.TemporaryDirectory() as tmp:
        managers = []
        for size in (1_000, 100_000):
            manager = SqliteMemoryManager(Path(tmp) / f"{size}.db", "bench")
            managers.append(manager)
            document = build_document(size, rng)
            manager._save_all(document)
            ids = list(document.items)
            ops[f"add@{size}"] = lambda m=manager: m.add(f"记忆 {next(counter)}", "bench")
            ops[f"update@{size}"] = lambda m=manager, ids=ids: m.update(
                rng.choice(ids), "benchmark", new_description=f"changed {next(counter)}"
            )
            ops[f"hit@{size}"] = lambda m=manager, ids=ids: m.hit(rng.choice(ids))
        figures = medians(ops, {})
        for manager in managers:
            manager.close()
    return figures


def ms(seconds: float) -> str:
    return f"{seconds * 1000:10.3f}"


def report(results: dict[tuple[str, int], dict[str, float] | str]) -> None:
    print("\nmedian milliseconds per operation (x = times faster than yaml at the same N)")
    header = f"{'backend':20} {'N':>8} " + " ".join(f"{op:>10}" for op in OPS)
    print(header + "   x yaml (add/update/hit/show)")
    print("-" * (len(header) + 32))
    for (backend, size), figures in results.items():
        if isinstance(figures, str):
            print(f"{backend:20} {size:>8,} {figures}")
            continue
        baseline = results.get(("yaml", size))
        ratios = ""
        if backend != "yaml" and isinstance(baseline, dict):
            ratios = "   " + " / ".join(f"{baseline[op] / figures[op]:.1f}" for op in OPS)
        print(f"{backend:20} {size:>8,} " + " ".join(ms(figures[op]) for op in OPS) + ratios)

    print("\nchecks")
    scaling = sqlite_scaling()
    for op in ("add", "update", "hit"):
        small, big = scaling[f"{op}@1000"], scaling[f"{op}@100000"]
        verdict = "PASS" if big <= 0.002 and big / small <= 2 else "FAIL"
        print(
            f"  sqlite {op:6} at 100,000: {big * 1000:.3f} ms (target <= 2 ms); "
            f"{big / small:.2f}x its {small * 1000:.3f} ms at 1,000 (target <= 2x)  {verdict}"
        )
    for op in OPS:
        crossover = None
        for size in SIZES["sqlite"]:
            yaml_figures, sqlite_figures = (
                results.get(("yaml", size)),
                results.get(("sqlite", size)),
            )
            if not isinstance(sqlite_figures, dict):
                continue
            if isinstance(yaml_figures, str):
                crossover = f"N={size:,} (yaml skipped there: slower than {SKIP_ABOVE_SECONDS} s)"
                break
            if isinstance(yaml_figures, dict) and yaml_figures[op] >= 10 * sqlite_figures[op]:
                speedup = yaml_figures[op] / sqlite_figures[op]
                crossover = f"N={size:,} ({speedup:.0f}x)"
                break
        print(f"  smallest N where sqlite {op:6} is >= 10x faster than yaml: {crossover or 'none'}")


if __name__ == "__main__":
    print(f"store_ops benchmark: {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    report(run())
