"""Four real processes write to one user's store at once: nothing is lost, no count is wrong."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4
OPS = 100
HOT = 4  # every worker hits these four items, so concurrent hits race on the same rows

# Each worker adds its first item, waits for every worker's first item (the hot ones), then
# interleaves its remaining adds with hits on the hot items: 100 adds and 100 hits in all.
WORKER = """
import sys, time
from pathlib import Path
from memory.store.factory import open_memory_manager

spec, user, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
number, ops, hot_count = (int(arg) for arg in sys.argv[4:7])
while not go.exists():
    time.sleep(0.005)
manager = open_memory_manager(spec, user)
manager.add(f"worker {number} item 0", "load")
deadline = time.monotonic() + 120
while True:
    hot = {row["description"]: row["id"] for row in manager.show()}
    if all(f"worker {k} item 0" in hot for k in range(hot_count)):
        break
    if time.monotonic() > deadline:
        sys.exit("the other workers never started")
    time.sleep(0.01)
for i in range(ops):
    if i:
        manager.add(f"worker {number} item {i}", "load")
    manager.hit(hot[f"worker {i % hot_count} item 0"])
print("done", flush=True)
"""


def _open(backend: str, tmp_path: Path, user: str) -> tuple[str, BaseMemoryManager]:
    if backend == "yaml":
        return f"yaml:{tmp_path / 'yaml'}", YamlMemoryManager(tmp_path / "yaml", user)
    return f"sqlite:{tmp_path / 'memory.db'}", SqliteMemoryManager(tmp_path / "memory.db", user)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["yaml", "sqlite"])
def test_four_processes_lose_no_add_and_no_hit(backend: str, tmp_path: Path) -> None:
    spec, manager = _open(backend, tmp_path, "shared-user")
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, spec, "shared-user", str(go)]
            + [str(n) for n in (number, OPS, HOT)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for number in range(WORKERS)
    ]
    time.sleep(0.5)  # let every interpreter start, so that the writes really overlap
    go.touch()
    # Every worker's end, not only the first one's: a worker that died leaves the others
    # waiting for its first item, and its own error is the one that says why.
    ended = [worker.communicate(timeout=240) for worker in workers]
    failures = [f"worker {n}: {err.strip()}" for n, (_, err) in enumerate(ended) if err.strip()]
    assert [worker.returncode for worker in workers] == [0] * WORKERS, "\n".join(failures)
    assert [out.strip() for out, _ in ended] == ["done"] * WORKERS

    items = manager.list_items()
    descriptions = Counter(item.description for item in items.values())
    expected = {f"worker {k} item {i}" for k in range(WORKERS) for i in range(OPS)}
    assert len(items) == WORKERS * OPS
    assert set(descriptions) == expected and set(descriptions.values()) == {1}
    hits = {item.description: item.hit for item in items.values() if item.hit}
    assert hits == {f"worker {k} item 0": WORKERS * OPS // HOT for k in range(HOT)}
    assert manager.self_check().status == "OK"


SELF_CHECKER = """
import sys
from memory.store.factory import open_memory_manager

for _ in range(int(sys.argv[3])):
    report = open_memory_manager(sys.argv[1], sys.argv[2]).self_check()
    if report.status == "FAIL":
        sys.exit("FAIL: " + "; ".join(report.issues))
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["yaml", "sqlite"])
def test_processes_self_checking_one_user_at_once_never_fail(tmp_path: Path, kind: str) -> None:
    """The editor and the agent open the same user at the same time; neither may see FAIL
    (the YAML writability probe once collided and stopped that user's writes)."""
    spec = f"yaml:{tmp_path}" if kind == "yaml" else f"sqlite:{tmp_path / 'm.db'}"
    open_memory_manager(spec, "shared").add("Likes jasmine tea", "taste")
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", SELF_CHECKER, spec, "shared", "40"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    errors = [worker.communicate(timeout=120)[1] for worker in workers]
    assert [worker.returncode for worker in workers] == [0] * WORKERS, errors
