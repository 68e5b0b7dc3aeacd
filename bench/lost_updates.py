"""Lost updates: N processes hit, edit and delete one user's memories at once; what survives.

Run: `.venv/bin/python bench/lost_updates.py [--writes M]` (about a minute on two cores; needs
the local PostgreSQL, `GULFSTREAM_TEST_POSTGRES` names another server; skipped when unreachable).

Each of N real processes (spawned, started together at a barrier) opens its own manager for the
same user and, M times, `hit`s a shared memory; every 4th step it `update`s a second memory with
a description no other step uses, every 8th step it updates a third, "contested" memory, and
process 0 deletes that third memory half-way. Afterwards the memories are read back:
  hits   expected (acknowledged hits) vs the count stored; lost = expected - actual
  edits  acknowledged updates vs those found in the memory's history
  del    whether an acknowledged delete is still a tombstone (a late update can resurrect it)
  refused  exceptions raised to the caller, by type; MemoryNotFound on the contested memory
           after its delete is the right answer, every other refusal is listed too
Cost: p50/p95 of one hit and one edit, with 1 process (first row of a backend) and with N.
Backends: `postgres:<dsn>` through the factory, and the `store` path, a StoreMemoryManager over
a PostgresStore on the same database (what LangGraph Platform hands the graph): `open_store_path`.
Each scenario has its own user, whose rows are deleted afterwards.
"""

from __future__ import annotations

import argparse
import inspect
import multiprocessing
import os
import sys
import time
import traceback
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.store.backends.langgraph_store import namespace_label
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager

POSTGRES = os.environ.get("GULFSTREAM_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
BACKENDS = ("postgres", "store")
PROCESSES = (1, 2, 4, 8)  # 1 is the cost baseline of the same run
EDIT_EVERY, CONTESTED_EVERY = 4, 8
BARRIER_SECONDS = 180.0  # spawning 8 interpreters on 2 loaded cores takes a while


def open_store_path(dsn: str, user_id: str) -> BaseMemoryManager:
    """The `store` backend as a replica gets it: its own PostgresStore over the shared database.
    Where the store path takes its cross-process lock is passed here once the factory has a
    parameter for it (`lock_database`); before that it locks this process only."""
    from langgraph.store.postgres import PostgresStore
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn = Connection.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    store = PostgresStore(conn)
    store.setup()
    if "lock_database" in inspect.signature(open_memory_manager).parameters:
        return open_memory_manager("store", user_id, store, lock_database=dsn)
    return open_memory_manager("store", user_id, store)


def open_backend(backend: str, dsn: str, user_id: str) -> BaseMemoryManager:
    if backend == "postgres":
        return open_memory_manager(f"postgres:{dsn}", user_id)
    return open_store_path(dsn, user_id)


def worker(backend: str, dsn: str, user_id: str, ids: dict[str, str], index: int, writes: int,
           barrier: Any, results: Any) -> None:  # fmt: skip
    """One replica's share of the writes; every outcome goes back through `results`."""
    out: dict[str, Any] = {"index": index, "hits_ok": 0, "edits": [], "contested": [],
                           "deleted": False, "refused": Counter(), "expected_refusals": 0,
                           "hit_ms": [], "edit_ms": [], "crash": None}  # fmt: skip
    try:
        manager = open_backend(backend, dsn, user_id)
        barrier.wait(BARRIER_SECONDS)
        for step in range(writes):
            timed(out, "hit_ms", lambda: manager.hit(ids["shared"]), count="hits_ok")
            if step % EDIT_EVERY == 0:
                text = f"edit by process {index}, step {step}"
                if timed(out, "edit_ms", lambda t=text: manager.update(ids["edited"], "bench", t)):
                    out["edits"].append(text)
            if step % CONTESTED_EVERY == 0:
                text = f"contested edit by process {index}, step {step}"
                if timed(out, None, lambda t=text: manager.update(ids["contested"], "bench", t)):
                    out["contested"].append(text)
            if index == 0 and step == writes // 2:
                out["deleted"] = timed(out, None, lambda: manager.delete(ids["contested"], "bench"))
    except Exception:
        out["crash"] = traceback.format_exc()
    results.put(out)


def timed(out: dict[str, Any], key: str | None, call: Any, count: str | None = None) -> bool:
    """Run `call`; True when it returned, else the exception's type is counted as a refusal."""
    started = time.perf_counter()
    try:
        call()
    except Exception as exc:
        name = type(exc).__name__
        if name == "MemoryNotFound" and key is None:
            out["expected_refusals"] += 1  # the contested memory was deleted: the right answer
        else:
            out["refused"][name] += 1
        return False
    if key is not None:
        out[key].append((time.perf_counter() - started) * 1000)
    if count is not None:
        out[count] += 1
    return True


def scenario(backend: str, processes: int, writes: int, run: str) -> dict[str, Any]:
    """N processes over one fresh user; the stored state compared with what was acknowledged."""
    user_id = f"bench-lost-{run}-{backend}-{processes}"
    try:
        setup = open_backend(backend, POSTGRES, user_id)
        ids = {name: setup.add(f"the {name} memory", "bench") for name in
               ("shared", "edited", "contested")}  # fmt: skip
        context = multiprocessing.get_context("spawn")
        barrier, results = context.Barrier(processes), context.Queue()
        workers = [
            context.Process(
                target=worker, args=(backend, POSTGRES, user_id, ids, i, writes, barrier, results)
            )
            for i in range(processes)
        ]
        for process in workers:
            process.start()
        outs = [results.get(timeout=BARRIER_SECONDS + 600) for _ in workers]
        for process in workers:
            process.join(timeout=30)
        return tally(open_backend(backend, POSTGRES, user_id), ids, outs)
    finally:
        delete_rows(user_id)


def tally(manager: BaseMemoryManager, ids: dict[str, str], outs: list[dict[str, Any]]) -> dict:
    shared = manager.get(ids["shared"], include_deleted=True)
    edited = manager.get(ids["edited"], include_deleted=True)
    contested = manager.get(ids["contested"], include_deleted=True)
    made = [text for out in outs for text in out["edits"]]
    found = {e.get("description") for e in edited.history if e.get("action") == "update"}
    contested_made = [text for out in outs for text in out["contested"]]
    contested_found = {e.get("description") for e in contested.history}
    refused: Counter[str] = Counter()
    for out in outs:
        refused.update(out["refused"])
    return {
        "hits_expected": sum(out["hits_ok"] for out in outs),
        "hits_actual": shared.hit,
        "edits_made": len(made),
        "edits_found": sum(text in found for text in made),
        "contested_made": len(contested_made),
        "contested_found": sum(text in contested_found for text in contested_made),
        "delete_acked": any(out["deleted"] for out in outs),
        "delete_kept": contested.deleted,
        "expected_refusals": sum(out["expected_refusals"] for out in outs),
        "refused": refused,
        "hit_ms": [ms for out in outs for ms in out["hit_ms"]],
        "edit_ms": [ms for out in outs for ms in out["edit_ms"]],
        "crashes": [out["crash"] for out in outs if out["crash"]],
    }


def delete_rows(user_id: str) -> None:
    """Leave the shared database as we found it (the pattern of tests/integration/conftest.py)."""
    import psycopg

    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(
            "DELETE FROM store WHERE prefix LIKE %s", (f"memories%.{namespace_label(user_id)}",)
        )


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def row(backend: str, processes: int, r: dict[str, Any]) -> str:
    refused = ", ".join(f"{name}×{n}" for name, n in sorted(r["refused"].items())) or "-"
    delete = "-" if not r["delete_acked"] else ("kept" if r["delete_kept"] else "LOST")
    cost = [percentile(r[key], q) for key in ("hit_ms", "edit_ms") for q in (0.5, 0.95)]
    return (
        f"{backend:<8} {processes:>2} | {r['hits_expected']:>5} {r['hits_actual']:>5} "
        f"{r['hits_expected'] - r['hits_actual']:>5} | {r['edits_made']:>4} {r['edits_found']:>5} "
        f"{r['edits_made'] - r['edits_found']:>4} | {r['contested_made']:>4} "
        f"{r['contested_found']:>5} {delete:>4} {r['expected_refusals']:>3} | "
        + " ".join(f"{ms:>6.1f}" for ms in cost)
        + f" | {refused}"
    )


HEADER = (
    "            |  hits             | edits           | contested memory    | "
    "ms: hit        edit          |\n"
    "backend   N |   exp   got  lost | made found lost | made found  del  nf | "
    "   p50    p95    p50    p95 | refused"
)


def reachable() -> str | None:
    try:
        import psycopg

        with psycopg.connect(POSTGRES, connect_timeout=3):
            return None
    except Exception as exc:
        return f"{POSTGRES} is unreachable ({type(exc).__name__}: {exc})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=40, help="hits per process (M)")
    parser.add_argument("--processes", type=int, nargs="*", default=list(PROCESSES))
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS), choices=BACKENDS)
    args = parser.parse_args()
    reason = reachable()
    if reason:
        print(f"lost_updates: skipped, {reason}")
        return 0
    run = uuid.uuid4().hex[:8]
    print(f"M = {args.writes} hits per process, an edit every {EDIT_EVERY}, a contested edit "
          f"every {CONTESTED_EVERY}; process 0 deletes the contested memory at step "
          f"{args.writes // 2}")  # fmt: skip
    print(
        "contested memory: edits acknowledged / found in its history; del = the acknowledged "
        "delete kept or LOST (resurrected); nf = MemoryNotFound after it (correct refusals)"
    )
    print(HEADER)
    for backend in args.backends:
        for processes in args.processes:
            result = scenario(backend, processes, args.writes, run)
            print(row(backend, processes, result), flush=True)
            for crash in result["crashes"]:
                print(f"  a process failed:\n{crash}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
