"""One consolidation pass over a user's memory: snapshot, plan, 25% guard, then each step as
one exactly-once `apply` turn, recorded in the write trace; an interrupted pass resumes."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from memory.errors import MemoryNotFound, StaleWrite
from memory.retrieval.recall_log import RecallStats
from memory.retrieval.semantic import SemanticChannel
from memory.retrieval.vector_store import vector_store_for
from memory.store.item import MemoryItem
from memory.store.manager import file_stem
from memory.store.snapshots import write_snapshot
from memory.upkeep.consolidation.plan import (
    REASON,
    ColdAt,
    ConsolidationPolicy,
    PlanStep,
    build_plan,
)
from memory.upkeep.consolidation.report import ConsolidationReport
from memory.upkeep.consolidation.state import PLAN_FOLDER, ConsolidationState, consolidation_state

if TYPE_CHECKING:
    from memory.upkeep.upkept import UpkeptMemory

logger = logging.getLogger(__name__)

_passes_lock = threading.Lock()
_running: dict[tuple[str, str], threading.Lock] = {}
# Each memory's consolidation vectors, loaded once and kept in step pass after pass.
_description_vectors: weakref.WeakKeyDictionary[UpkeptMemory, SemanticChannel] = (
    weakref.WeakKeyDictionary()
)


def plan_path(memory: UpkeptMemory) -> Path:
    """Where a pass keeps its plan until it is done without a state database: beside the
    journal (see `memory.upkeep.consolidation.state`)."""
    return memory.data_dir / PLAN_FOLDER / f"{file_stem(memory.user_id)}.plan.json"


def cold_source(memory: UpkeptMemory, policy: ConsolidationPolicy) -> ColdAt:
    """Whether a memory was cold at a moment, by the memory's ranking (`ranking_type`, with the
    pass's half-life): with the recall statistics when the memory records them
    (`recall_stats()`), else from hits and age alone."""
    stats: dict[str, RecallStats] = {}
    recall_stats = getattr(memory, "recall_stats", None)
    if callable(recall_stats):
        try:
            stats = dict(recall_stats())
        except Exception:  # archiving a bit early is worse than not at all: see is_cold
            logger.exception("recall statistics unreadable; hotness from hits and age only")

    ranking = memory.ranking_type(lambda: stats, policy.half_life_days)

    def cold_at(memory_id: str, item: MemoryItem, moment: datetime) -> bool:
        return ranking.is_cold(ranking.of(memory_id, item, moment))

    return cold_at


def embeddings_of(memory: UpkeptMemory) -> Any | None:
    """What gives the pass its vectors: a channel of description vectors kept beside the
    retrieval channel's (same model, same backend, its own rows), so a pass embeds only the
    memories new or changed since the last one; None without a semantic channel (a store that
    embeds by itself, or embeddings "off"): duplicates are then found by words."""
    channel = getattr(getattr(memory, "retrievers", None), "semantic", None)
    embeddings = getattr(channel, "embeddings", None)
    if embeddings is None or not isinstance(channel, SemanticChannel):
        return embeddings
    with _passes_lock:
        kept = _description_vectors.get(memory)
        if kept is None or kept.embeddings is not embeddings:
            # Retrieval embeds theme and description; the pass compares descriptions alone
            # (a shared theme raises every pair's cosine: on the public set one theme for all
            # merged a trap and kept 0.953 of distinct memories instead of 1.000).
            kept = SemanticChannel(embeddings, vector_store_for(memory.manager, "descriptions"))
            _description_vectors[memory] = kept
    return kept


def consolidate(
    memory: UpkeptMemory,
    llm: Any | None = None,
    *,
    now: datetime | None = None,
    policy: ConsolidationPolicy | None = None,
) -> ConsolidationReport:
    """Run one pass (or finish the one an interrupted run planned) and report what it did."""
    state = consolidation_state(memory)
    with _passes_lock:
        lock = _running.setdefault((state.where, memory.user_id), threading.Lock())
    with lock:  # one pass per user at a time in this process
        policy = policy or ConsolidationPolicy()
        report = _run(memory, state, llm, now or _now_in(policy.timezone), policy)
    state.reset()  # a refused pass too: the next one waits for as many writes again
    return report


def _run(
    memory: UpkeptMemory,
    state: ConsolidationState,
    llm: Any | None,
    now: datetime,
    policy: ConsolidationPolicy,
) -> ConsolidationReport:
    started = time.monotonic()
    manager = memory.manager
    report = ConsolidationReport(manager.user_id)
    try:
        plan = state.load_plan()
    except ValueError:
        # Steps it applied are recorded in the store by their turn ids; a fresh plan starts
        # from the store as it is now. The unreadable file is kept for a look, not reused.
        aside = state.set_aside_plan()
        logger.exception("consolidation plan set aside as %s; planning again", aside)
        plan = None
    if plan is not None and plan.user_id == manager.user_id:
        report.resumed = True
    else:
        live = manager.list_items()
        cold_at = cold_source(memory, policy)
        embeddings = embeddings_of(memory)
        plan = build_plan(manager.user_id, live, cold_at, policy, now, llm, embeddings)
        report.pass_id = plan.pass_id
        # One removal is always allowed (and restorable): otherwise a store of three memories
        # with one duplicate pair could never be tidied.
        limit = max(policy.max_removed_share * plan.live_count, 1)
        if plan.removed > limit:
            report.refused = (
                f"the pass would remove {plan.removed} of {plan.live_count} live memories, "
                f"more than {policy.max_removed_share:.0%} at once; nothing was changed (review "
                "the duplicates in the editor, or raise max_removed_share)"
            )
            report.kept = manager.live_count()
            report.duration_seconds = time.monotonic() - started
            logger.warning("memory of %r: %s", manager.user_id, report.refused)
            return report
        if not plan.steps:
            report.kept = plan.live_count
            report.duration_seconds = time.monotonic() - started
            return report
        plan.snapshot = _snapshot(memory, plan.pass_id)
        state.save_plan(plan)
    report.pass_id, report.snapshot, report.rewritten = plan.pass_id, plan.snapshot, plan.rewritten
    for number, step in enumerate(plan.steps):
        turn_id = plan.turn_id(number)
        if _apply_step(memory, turn_id, step):
            _count(report, step)
        elif step.kind == "merge":  # one group changed meanwhile: the others still merge
            for part, group in enumerate(step.groups()):
                if _apply_step(memory, f"{turn_id}.{part}", group):
                    _count(report, group)
                else:
                    report.skipped.append(f"{turn_id}.{part}")
        else:
            report.skipped.append(turn_id)
    state.drop_plan()
    report.topics_summarised = memory.topics.refresh_after_pass(llm)  # feature: topics
    report.kept = manager.live_count()
    report.duration_seconds = time.monotonic() - started
    logger.info("memory of %r: %s", manager.user_id, report.summary())
    return report


def _snapshot(memory: UpkeptMemory, pass_id: str) -> str:
    """The restore point before the pass: a file beside the store, or for a store without a
    folder (the platform's) a row of the state database, which outlives the replica."""
    name = f"{file_stem(memory.user_id)}.before-consolidation-{pass_id}.jsonl.gz"
    if memory.manager.data_dir is None and memory.state_dsn:
        from memory.store.snapshot_rows import SCHEMA, SNAPSHOTS_FILE, save_snapshot

        db = memory.state_database(SNAPSHOTS_FILE, SCHEMA)
        return save_snapshot(db, memory.manager, name)
    folder = memory.manager.data_dir or memory.data_dir
    return str(write_snapshot(memory.manager, folder / "memory_backup" / name))


def _apply_step(memory: UpkeptMemory, turn_id: str, step: PlanStep) -> bool:
    """Apply one step exactly once; False when a memory changed since the plan (skipped)."""
    manager, trace, user_id = memory.manager, memory.trace, memory.user_id
    if manager.has_applied(turn_id):  # done before an interruption: only the trace may lag
        trace.mark_applied(user_id, turn_id)
        return True
    rows = [
        ("consolidation", change.op, {k: v for k, v in asdict(change).items() if v}, REASON)
        for change in step.changes
    ]
    trace.stage_rows(user_id, turn_id, rows)
    try:
        outcome = manager.apply(step.changes, turn_id)
    except (StaleWrite, MemoryNotFound) as exc:
        trace.discard_staged(user_id, turn_id)
        logger.info("consolidation step %s skipped: %s", turn_id, exc)
        return False
    except BaseException:
        trace.discard_staged(user_id, turn_id)
        raise
    (trace.mark_applied if outcome.applied else trace.discard_staged)(user_id, turn_id)
    return True


def _count(report: ConsolidationReport, step: PlanStep) -> None:
    if step.kind == "merge":
        for survivor, absorbed in step.merged().items():
            report.merged.setdefault(survivor, []).extend(absorbed)
    elif step.kind == "stale":
        report.staled.extend(step.ids)
    else:
        report.archived.extend(step.ids)


def _now_in(timezone: str) -> datetime:
    """The current time in `timezone` (IANA; "": the server's zone): whose today it is."""
    return datetime.now(ZoneInfo(timezone)) if timezone else datetime.now().astimezone()
