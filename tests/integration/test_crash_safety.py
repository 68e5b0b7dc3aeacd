"""A writer killed with SIGKILL in the middle of its writes never loses a write that returned."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.factory import open_memory_manager

ROOT = Path(__file__).resolve().parents[2]
KILLS = 20

# Prints each id only after `add` has returned; every printed id must survive the kill.
WRITER = """
import sys
from memory.store.factory import open_memory_manager

manager = open_memory_manager(sys.argv[1], "crash-user")
round_number = sys.argv[2]
print("ready", flush=True)
for n in range(100_000):
    text = f"round {round_number} write {n}: 崩溃测试 crash test"
    memory_id = manager.add(text, "crash")
    print(memory_id, text, sep="\\t", flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
@pytest.mark.parametrize("backend", ["yaml", "sqlite"])
def test_sigkill_mid_write_loses_nothing_that_returned(backend: str, tmp_path: Path) -> None:
    spec = f"yaml:{tmp_path}" if backend == "yaml" else f"sqlite:{tmp_path / 'memory.db'}"
    rng = random.Random(20)
    returned: dict[str, str] = {}
    for round_number in range(KILLS):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, spec, str(round_number)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready", writer.stderr
        for _ in range(rng.randint(1, 8)):
            memory_id, text = writer.stdout.readline().rstrip("\n").split("\t")
            returned[memory_id] = text
        time.sleep(rng.uniform(0, 0.02))  # land somewhere inside the next write
        os.kill(writer.pid, signal.SIGKILL)
        rest, _ = writer.communicate(timeout=30)
        assert writer.returncode == -signal.SIGKILL
        # Lines printed before the kill landed also returned. A kill inside `print` can leave a
        # last line cut short ("id\t"): its write returned, but the text to compare is unknown.
        for line in rest.split("\n")[:-1]:
            memory_id, text = line.split("\t")
            if text:
                returned[memory_id] = text

        manager = open_memory_manager(spec, "crash-user")
        report = manager.self_check()
        assert report.status == "OK", report
        stored = {i: item.description for i, item in manager.list_items().items()}
        missing = {i: t for i, t in returned.items() if stored.get(i) != t}
        assert not missing, f"round {round_number}: writes that returned were lost: {missing}"
        if isinstance(manager, SqliteMemoryManager):
            manager.close()
    assert len(returned) >= KILLS
