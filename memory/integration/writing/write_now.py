"""write_now: one turn written by the memory agent before the caller goes on (MCP's remember)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.integration.run_memory import RunMemory, writer_consumer
from memory.integration.writing.admission import admit  # feature: admission
from memory.integration.writing.ltm_write import record_turn
from memory.writer.turn import Turn

WRITTEN, UNCHANGED, SKIPPED, ALREADY = "written", "unchanged", "skipped", "already written"


@dataclass(frozen=True)
class Written:
    """What `write_now` did: `status` is WRITTEN (`changes` lists each stored change as
    {"op", "id", "description"}, "" where a change has none), UNCHANGED (the writer found
    nothing new: a repeat, or nothing it could keep), SKIPPED (admission: nothing worth
    keeping) or ALREADY (a turn with this id was written before)."""

    turn_id: str
    status: str
    reason: str
    changes: tuple[dict[str, str], ...] = ()


async def write_now(run: RunMemory, turn: Turn, related: Sequence[dict[str, Any]] = ()) -> Written:
    """Admit `turn` as the chat would (the memories retrieved for it tell a repeat) and, unless
    the scorer skips it, run the deployment's memory agent on it and apply its changes, once
    per turn id. The same rules as a chat turn: admission, the writer's dedup, its language
    and its forget. Raises what the writer raises when nothing could be written
    (MemoryWriteFailed, WriterPaused, MemoryBusy): never a "written" for what was not."""
    turn = admit(run, turn, related)  # feature: admission
    record_turn(run, turn, {})
    if turn.decision == "skip":
        reason = turn.admission.describe() if turn.admission is not None else "skipped"
        return Written(turn.turn_id, SKIPPED, reason)
    result = await writer_consumer().consume(turn, run.memory.write_target)
    if not result.applied:
        return Written(turn.turn_id, ALREADY, result.summary)
    outcomes = result.results or [None] * len(result.changes)
    changes = tuple(
        {"op": change.op, "id": str(outcome if change.op == "add" else change.id or ""),
         "description": change.description or ""}
        for change, outcome in zip(result.changes, outcomes, strict=False)
    )  # fmt: skip
    return Written(turn.turn_id, WRITTEN if changes else UNCHANGED, result.summary, changes)
