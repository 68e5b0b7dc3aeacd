"""A consolidation pass SIGKILLed at random points: the store always loads, its self-check is
OK, and the next run finishes the same plan without merging anything twice."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from tests.consolidation_data import planted_set

ROOT = Path(__file__).resolve().parents[2]
KILLS = 10


def _spec(backend: str, folder: Path) -> str:
    return f"yaml:{folder / 'yaml'}" if backend == "yaml" else f"sqlite:{folder / 'memory.db'}"


def _run_worker(spec: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.consolidation_worker", spec],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _plan_saved(folder: Path) -> float:
    """Wait until a pass running on `folder` saved its plan; the moment it was seen."""
    deadline = time.monotonic() + 60
    while not any(folder.rglob("*.plan.json")):
        assert time.monotonic() < deadline, "the pass never saved a plan"
        time.sleep(0.002)
    return time.monotonic()


def _plan_removed(folder: Path) -> float:
    """Wait until the pass removed its plan (its last step applied); the moment it was seen."""
    deadline = time.monotonic() + 60
    while any(folder.rglob("*.plan.json")):
        assert time.monotonic() < deadline, "the pass never finished its steps"
        time.sleep(0.002)
    return time.monotonic()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
@pytest.mark.parametrize("backend", ["yaml", "sqlite"])
def test_a_pass_killed_at_random_points_resumes_without_duplicates(backend: str, tmp_path: Path):
    planted = planted_set()
    seeded = tmp_path / "seeded"
    manager = open_memory_manager(_spec(backend, seeded), "alice")
    write_items(
        manager, {i: MemoryItem.create(t, th, "seed") for i, (t, th) in planted.memories.items()}
    )
    # One uninterrupted pass (in a copy) says how long its steps take (from the moment its plan
    # is saved to the moment it is removed; the topic summaries come after) and what it must
    # end with.
    shutil.copytree(seeded, tmp_path / "reference")
    worker = _run_worker(_spec(backend, tmp_path / "reference"))
    assert worker.stdout is not None and worker.stdout.readline().strip() == "start"
    started = _plan_saved(tmp_path / "reference")
    steps_seconds = _plan_removed(tmp_path / "reference") - started
    assert worker.stdout.readline().startswith("done")
    assert worker.wait(timeout=60) == 0
    reference = open_memory_manager(_spec(backend, tmp_path / "reference"), "alice")
    expected_live = {i: item.description for i, item in reference.list_items().items()}

    rng = random.Random(14)
    interrupted = 0
    attempts = 0
    # Each kill lands at a random point of the steps (a few just after the end): go on until
    # KILLS kills interrupted a pass (a plan was left to resume).
    while interrupted < KILLS and attempts < 3 * KILLS:
        attempts += 1
        folder = tmp_path / f"kill{attempts}"
        shutil.copytree(seeded, folder)
        worker = _run_worker(_spec(backend, folder))
        assert worker.stdout is not None and worker.stdout.readline().strip() == "start"
        _plan_saved(folder)
        time.sleep(rng.uniform(0, 1.1) * steps_seconds)
        os.kill(worker.pid, signal.SIGKILL)
        out, _ = worker.communicate(timeout=30)
        plan_left = any(folder.rglob("*.plan.json"))
        interrupted += "done" not in out and plan_left
        # The killed store loads and checks OK.
        store = open_memory_manager(_spec(backend, folder), "alice")
        assert store.self_check().status == "OK"
        # The next run finishes the job: the same survivors as an uninterrupted pass, each
        # absorbed memory merged exactly once, no plan left behind, nothing left staged.
        memory = LongTermMemory(store, embeddings="off")
        report = memory.consolidate()
        assert not report.refused
        live = {i: item.description for i, item in store.list_items().items()}
        assert set(live) == set(expected_live) and live == expected_live
        for memory_id, item in store.all_items().items():
            merges = [e for e in item.history if e["action"] == "merge"]
            assert len({e["merged_description"] + e["time"] for e in merges}) == len(merges)
            if item.deleted:
                assert [e["action"] for e in item.history].count("merged_into") == 1, memory_id
        assert store.self_check().status == "OK"
        assert not list(folder.rglob("*.plan.json"))
        staged = memory.trace.for_user("alice", limit=10_000, include_staged=True)
        assert all(row.state == "applied" for row in staged)
        assert memory.consolidate().merged == {}
    assert interrupted == KILLS
