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

from memory import LongTermMemory, open_memory_manager
from memory.item import MemoryItem
from memory.retrieval.evaluation import write_items
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
    # One uninterrupted pass (in a copy) says how long a pass takes and what it must end with.
    shutil.copytree(seeded, tmp_path / "reference")
    worker = _run_worker(_spec(backend, tmp_path / "reference"))
    assert worker.stdout is not None and worker.stdout.readline().strip() == "start"
    started = time.monotonic()
    assert worker.stdout.readline().startswith("done")
    pass_seconds = time.monotonic() - started
    assert worker.wait(timeout=60) == 0
    reference = open_memory_manager(_spec(backend, tmp_path / "reference"), "alice")
    expected_live = {i: item.description for i, item in reference.list_items().items()}

    rng = random.Random(14)
    interrupted = 0
    attempts = 0
    # Kills landing before the plan is saved or after the pass ended test less: go on until
    # KILLS kills interrupted a pass in its steps (a plan was left to resume).
    while interrupted < KILLS and attempts < 4 * KILLS:
        attempts += 1
        folder = tmp_path / f"kill{attempts}"
        shutil.copytree(seeded, folder)
        worker = _run_worker(_spec(backend, folder))
        assert worker.stdout is not None and worker.stdout.readline().strip() == "start"
        # Planning takes about the first half of a pass; most kills land in its steps.
        time.sleep(rng.uniform(0.3, 1.0) * pass_seconds)
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
