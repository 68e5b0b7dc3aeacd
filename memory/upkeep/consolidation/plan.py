"""The plan of a consolidation pass: decided once, saved as a file, applied step by step (one
`apply` turn per step), so a pass killed midway resumes the same plan without duplicates."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memory.retrieval.ranking import DEFAULT_HALF_LIFE_DAYS
from memory.store.atomic_file import write_text_atomically
from memory.store.document import Change
from memory.store.item import MemoryItem, time_sort_key
from memory.upkeep.consolidation import rewrite
from memory.upkeep.consolidation.dates import is_stale, passed_date
from memory.upkeep.consolidation.semantic import Vectors, embed
from memory.upkeep.consolidation.similarity import (
    CONTAINED_JACCARD,
    SWAPPED_JACCARD,
    duplicate_groups,
)

logger = logging.getLogger(__name__)

REASON = "consolidation"
PLAN_VERSION = 1
CHUNK = 200  # stale marks or archives per apply turn: one transaction stays short
# Merge groups per apply turn: a whole-file backend (YAML) rewrites the file once per turn. A
# step refused because one memory changed meanwhile is applied again group by group.
GROUPS_PER_STEP = 25

# cold_at(memory id, item, at): whether a memory was cold at a moment (recall statistics
# included when known; never, without hotness)
ColdAt = Callable[[str, MemoryItem, datetime], bool]


@dataclass(frozen=True)
class ConsolidationPolicy:
    """The pass's thresholds. `archive_cold_after_days` 0 never archives; a pass removing more
    than `max_removed_share` of the live memories (and more than one) is refused."""

    half_life_days: float = DEFAULT_HALF_LIFE_DAYS
    archive_cold_after_days: float = 90.0
    max_removed_share: float = 0.25
    contained_jaccard: float = CONTAINED_JACCARD
    swapped_jaccard: float = SWAPPED_JACCARD
    # The zone whose days decide that a dated memory's day has passed (IANA; "": the server's).
    timezone: str = ""


@dataclass
class PlanStep:
    """One `apply` turn: groups merged into their survivors, or stale marks, or archives."""

    kind: str  # "merge" | "stale" | "archive"
    changes: list[Change]

    @property
    def ids(self) -> list[str]:
        """The ids this step takes away (merge) or marks (stale, archive)."""
        if self.kind == "merge":
            return [change.other_id for change in self.changes if change.other_id]
        return [change.id for change in self.changes if change.id]

    def merged(self) -> dict[str, list[str]]:
        """Survivor → the ids merged into it."""
        found: dict[str, list[str]] = {}
        for change in self.changes:
            if change.op == "merge" and change.id and change.other_id:
                found.setdefault(change.id, []).append(change.other_id)
        return found

    def groups(self) -> list[PlanStep]:
        """This merge step as one step per group (to apply them one by one)."""
        by_survivor: dict[str, list[Change]] = {}
        for change in self.changes:
            by_survivor.setdefault(change.id or "", []).append(change)
        return [PlanStep(self.kind, changes) for changes in by_survivor.values()]


@dataclass
class ConsolidationPlan:
    pass_id: str
    user_id: str
    created: str
    live_count: int
    steps: list[PlanStep] = field(default_factory=list)
    snapshot: str = ""
    rewritten: int = 0

    def turn_id(self, step: int) -> str:
        return f"consolidation:{self.pass_id}:{step}"

    @property
    def removed(self) -> int:
        return sum(len(step.ids) for step in self.steps if step.kind != "stale")


def build_plan(
    user_id: str,
    live: Mapping[str, MemoryItem],
    cold_at: ColdAt,
    policy: ConsolidationPolicy,
    now: datetime,
    llm: Any | None = None,
    embeddings: Any | None = None,
) -> ConsolidationPlan:
    """Decide the whole pass over the live memories: only user-scope ones are touched (branch
    memories belong to one conversation); a memory in a merge group is neither marked stale nor
    archived in the same pass (the merge changes it: the next pass looks again). With
    `embeddings` (a semantic channel with `vectors_of`, or a `TextEmbeddings`), duplicates are
    also found by meaning; with `llm`, the model confirms the borderline ones."""
    plan = ConsolidationPlan(secrets.token_hex(6), user_id, now.isoformat(), len(live))
    shared = {i: item for i, item in live.items() if item.scope == "user"}
    # Oldest first, so a group's survivor defaults to the memory that was there first.
    ordered = sorted(shared, key=lambda i: time_sort_key(shared[i].created_time))
    texts = {i: shared[i].description for i in ordered}
    groups = duplicate_groups(
        texts,
        policy.contained_jaccard,
        policy.swapped_jaccard,
        vectors=_vectors(embeddings, texts),
        llm=llm,
    )
    grouped: set[str] = set()
    merges: list[Change] = []
    for number, members in enumerate(groups):
        grouped.update(members)
        merges.extend(_merge_changes(members, shared, llm, plan))
        if (number + 1) % GROUPS_PER_STEP == 0 or number == len(groups) - 1:
            plan.steps.append(PlanStep("merge", merges))
            merges = []
    stale: list[Change] = []
    archive: list[Change] = []
    cold_since = now - timedelta(days=policy.archive_cold_after_days)
    for memory_id in ordered:
        item = shared[memory_id]
        if memory_id in grouped:
            continue
        expected = item.latest_update_time
        if policy.archive_cold_after_days > 0 and cold_at(memory_id, item, cold_since):
            archive.append(
                Change("archive", memory_id, reason=REASON, expected_update_time=expected)
            )
            continue
        passed = passed_date(item, now)
        if passed is not None and not is_stale(item):
            stale.append(Change("stale", memory_id, reason=REASON, passed=passed.isoformat(),
                                expected_update_time=expected))  # fmt: skip
    for kind, changes in (("stale", stale), ("archive", archive)):
        for start in range(0, len(changes), CHUNK):
            plan.steps.append(PlanStep(kind, changes[start : start + CHUNK]))
    return plan


def _vectors(embeddings: Any | None, texts: dict[str, str]) -> Vectors | None:
    """The vectors of `texts` (id → description), or None (duplicates by words only) without a
    model or when it fails: a pass that finds fewer duplicates is better than no pass. A
    channel of kept vectors (`vectors_of`) embeds only the memories new or changed since the
    last pass, so a pass at thousands of memories stays off the model."""
    if embeddings is None or not texts:
        return None
    try:
        if hasattr(embeddings, "vectors_of"):
            return embeddings.vectors_of(texts, complete=True)
        return embed(embeddings, list(texts.values()))
    except Exception:
        logger.exception("consolidation: memories not embedded; duplicates found by words only")
        return None


def _merge_changes(
    members: list[str], items: Mapping[str, MemoryItem], llm: Any, plan: ConsolidationPlan
) -> list[Change]:
    texts = [items[i].description for i in members]
    chosen = rewrite.most_complete(texts)
    text = texts[chosen]
    if llm is not None:
        rewritten = rewrite.rewrite(llm, texts)
        if rewritten is not None:
            text = rewritten
            plan.rewritten += 1
    survivor = members[0] if llm is not None else members[chosen]
    keep = items[survivor]
    return [
        Change("merge", survivor, text, keep.theme, REASON, other_id=other,
               expected_update_time=keep.latest_update_time,
               expected_other_update_time=items[other].latest_update_time)
        for other in members if other != survivor
    ]  # fmt: skip


def plan_text(plan: ConsolidationPlan) -> str:
    """The plan as the JSON text it is kept as (a file, or a row of the state database)."""
    return json.dumps({"version": PLAN_VERSION, **asdict(plan)}, ensure_ascii=False)


def parse_plan(text: str, where: str) -> ConsolidationPlan:
    """The plan in `text`; ValueError naming `where` when it is not one this version reads."""
    try:
        data = json.loads(text)
        if data.pop("version", None) != PLAN_VERSION:
            raise ValueError("unknown version")
        steps = [
            PlanStep(s["kind"], [Change(**c) for c in s["changes"]]) for s in data.pop("steps")
        ]
        return ConsolidationPlan(**data, steps=steps)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"{where} is not a consolidation plan this version can read: {exc}"
        ) from exc


def save_plan(plan: ConsolidationPlan, path: Path) -> None:
    """Write the plan atomically (a half-written plan is never read back)."""
    write_text_atomically(path, plan_text(plan))


def load_plan(path: Path) -> ConsolidationPlan | None:
    """The saved plan of an interrupted pass, or None when there is none; ValueError when the
    file is not a plan this version can read."""
    if not path.exists():
        return None
    return parse_plan(path.read_text(encoding="utf-8"), str(path))  # bad UTF-8: a ValueError
