"""Writing a parsed export: every message archived with its time, then every turn through the
deployment's writer in time order, each once (resumable: what was done is skipped)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from memory.errors import MemoryBusy
from memory.integration.importing.archived import archive_all  # feature: archive
from memory.integration.importing.records import ParsedExport, Skipped
from memory.integration.importing.summary import ImportSummary
from memory.integration.importing.turns import ImportedTurn, turns_of
from memory.integration.run_memory import RunMemory, open_run_memory
from memory.integration.writing.write_now import ALREADY, SKIPPED, UNCHANGED, write_now
from memory.writer.breaker import WriterPaused
from memory.writer.consumer import MemoryWriteFailed
from memory.writer.turn import Turn

logger = logging.getLogger(__name__)

RELATED_LIMIT = 5  # memories retrieved for a turn, as the chat's admission sees them


@dataclass(frozen=True)
class Progress:
    """How far the import is: `done` of `total` turns."""

    done: int
    total: int


class Importer:
    """Imports one export for one user. `stop` is asked before each turn (a signal sets it);
    `on_progress` is told after each."""

    def __init__(
        self,
        user_id: str,
        on_progress: Callable[[Progress], None] | None = None,
        stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.user_id = user_id
        self.on_progress = on_progress or (lambda _: None)
        self.stop = stop
        self._runs: dict[str, RunMemory] = {}

    def run_for(self, thread_id: str) -> RunMemory:
        """The user's memory as a run on `thread_id` sees it (no runtime: the deployment's)."""
        if thread_id not in self._runs:
            config = {"configurable": {"thread_id": thread_id}}
            self._runs[thread_id] = open_run_memory(None, config, user_id=self.user_id)  # type: ignore[arg-type]
        return self._runs[thread_id]

    async def import_export(self, export: ParsedExport) -> ImportSummary:
        """Archive, then write; the summary says what was done and what was left out."""
        summary = ImportSummary.of(export)
        summary.archived = archive_all(self.run_for, export.conversations)  # feature: archive
        turns = sorted(
            (t for c in export.conversations for t in turns_of(c)),
            key=lambda t: (t.time, t.thread_id),
        )  # the writer sees the user's past in the order it happened
        summary.turns = len(turns)
        for done, turn in enumerate(turns, start=1):
            if self.stop():
                summary.stopped = f"interrupted after {done - 1} of {len(turns)} turns"
                break
            try:
                await self.write(turn, summary)
            except (WriterPaused, MemoryBusy) as exc:
                summary.stopped = f"the writer is paused ({exc})"
                break
            self.on_progress(Progress(done, len(turns)))
        return summary

    async def write(self, imported: ImportedTurn, summary: ImportSummary) -> None:
        """One turn through admission and the writer, once per turn id; a turn the writer
        cannot write is a failure (the next run tries it again), the rest go on."""
        run = self.run_for(imported.thread_id)
        if run.memory.manager.has_applied(imported.turn_id):
            summary.already += 1
            return
        try:
            turn = Turn(
                self.user_id, imported.turn_id, imported.messages, thread_id=imported.thread_id,
                scope_policy="user", language=run.context.language,
                writer_model=run.context.writer_model, context=imported.context,
                said_at=imported.said_at,
            )  # fmt: skip
            related = run.memory.get_related_memory_from(
                imported.user_text, "mechanical", RELATED_LIMIT
            )
            written = await write_now(run, turn, related)
        except (ValueError, MemoryWriteFailed) as exc:
            summary.failures.append(Skipped(f"turn {imported.turn_id}", str(exc)))
            logger.warning("importing turn %s failed: %s", imported.turn_id, exc)
            return
        if written.status == SKIPPED:
            summary.skipped_by_admission += 1
        elif written.status == ALREADY:
            summary.already += 1
        elif written.status == UNCHANGED:
            summary.written += 1
            summary.unchanged += 1
        else:
            summary.written += 1
            summary.changes.update(change["op"] for change in written.changes)
