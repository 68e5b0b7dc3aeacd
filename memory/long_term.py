"""LongTermMemory: the one facade the graph talks to — a read interface and a write interface."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from memory.branch import Lineage, Provenance
from memory.manager import BaseMemoryManager
from memory.repair import SelfCheckReport
from memory.retrieval import RetrievalMode
from memory.retrieval.dispatch import shared_retrievers
from memory.writer.consumer import MemoryConsumer
from memory.writer.journal import TurnJournal
from memory.writer.queue import DurableWriteQueue, RetryPolicy, TurnConsumer, WriteStatus
from memory.writer.staging import EventCallback
from memory.writer.trace import WriteTrace
from memory.writer.turns import extract_last_turn

logger = logging.getLogger(__name__)


class LongTermMemory:
    """One user's long-term memory, as in the seed: `get_related_memory_from` reads, and
    `start` / `send_history` / `stop` write through a durable background queue.
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        *,
        llm: Any | None = None,
        writer_llm: Any | None = None,
        journal_path: str | os.PathLike[str] | None = None,
        consumer: TurnConsumer | None = None,
        on_event: EventCallback | None = None,
        retry: RetryPolicy | None = None,
        journal_durability: Literal["full", "normal"] = "normal",
    ) -> None:
        self.manager = manager
        self.llm = llm
        self.writer_llm = writer_llm if writer_llm is not None else llm
        # Write side (downlink): built lazily by `_writer()` so that reading needs no journal.
        self._journal_path = journal_path
        self._consumer = consumer
        self._on_event = on_event
        self._retry = retry
        self._journal_durability = journal_durability
        self._write_queue: DurableWriteQueue | None = None

    # ── read interface (uplink) ─────────────────────────────────────────

    def get_related_memory_from(
        self,
        prompt: str,
        mode: RetrievalMode | str = RetrievalMode.LLM,
        limit: int = 10,
        lineage: Lineage | None = None,
    ) -> list[dict[str, str]]:
        """Memories related to `prompt` as `[{id, description, theme}]`, most relevant first.

        `mode` is `llm` (seed default), `mechanical` (BM25) or `hybrid`; LLM modes without a
        model run BM25. Any failure, a corrupt store included, is logged and gives `[]`: a
        retrieval failure never breaks the chat. With a `lineage` (the run's checkpoint ancestor
        chain), branch memories of other branches are left out (see `memory.branch`).
        """
        try:
            # The one cache per manager (shared with the editor and tools): one BM25 index.
            retrievers = shared_retrievers(self.manager, self.llm)
            return retrievers.retrieve(prompt, mode, limit, lineage)
        except Exception:
            logger.exception("memory retrieval failed for user %r", self.manager.user_id)
            return []

    def get_core_context(self, thread_id: str | None = None) -> dict[str, str]:
        """The core context block (persona, human, the goal of `thread_id`, updated_at) without
        a search; `{}` before the first turn seeded it, or when the store cannot be read
        (logged)."""
        try:
            return self.manager.get_core_context(thread_id)
        except Exception:
            logger.exception("core context read failed for user %r", self.manager.user_id)
            return {}

    # ── write interface (downlink) ──────────────────────────────────────

    def _writer(self) -> DurableWriteQueue:
        """The journal, the trace beside it, the consumer and the queue, built on first use."""
        if self._write_queue is None:
            journal_path = Path(self._journal_path or default_journal_path(self.manager))
            trace = WriteTrace(write_trace_path(journal_path))
            consumer = self._consumer
            if consumer is None:
                if self.writer_llm is None:
                    raise ValueError(
                        "LongTermMemory needs writer_llm (or llm, or consumer) to write memories"
                    )
                consumer = MemoryConsumer(self.writer_llm, language="auto")
            self._write_queue = DurableWriteQueue(
                self.manager,
                consumer,
                TurnJournal(journal_path, self._journal_durability),
                trace=trace,
                retry=self._retry,
                on_event=self._on_event,
            )
        return self._write_queue

    @property
    def write_trace(self) -> WriteTrace | None:
        """The flat trace of applied changes (seed 000), listable per user and per turn."""
        return self._writer().trace

    def start(self) -> int:
        """Start the background writer inside the running event loop (seed: `start()`).

        Unfinished turns from the journal are replayed first; returns how many.
        """
        replayed = self._writer().start()
        report = self.self_check()
        log = logger.info if report.status == "OK" else logger.warning
        log(
            "memory of user %r at start: %s, %d items, issues=%s, repaired=%s",
            self.manager.user_id,
            report.status,
            report.item_count,
            report.issues,
            report.repaired,
        )
        return replayed

    async def send_history(
        self,
        turn_messages: list[dict[str, str]],
        session_id: str | None = None,
        turn_id: str | None = None,
        *,
        provenance: Provenance | None = None,
        lineage: Lineage | None = None,
        scope_policy: str = "auto",
    ) -> str:
        """Queue one turn (`[{role, content}]`) for the memory agent; returns its turn id at once.

        The turn is in the journal when this returns, so a crash does not lose it; it is applied
        exactly once. Bad input raises ValueError; calling before `start()` raises RuntimeError.
        `provenance` (thread, checkpoint, turn) and `lineage` make the write branch-aware;
        `scope_policy` is "auto" (the memory agent chooses), "user" or "branch".
        """
        return await self._writer().send(
            turn_messages,
            session_id,
            turn_id,
            provenance=provenance,
            lineage=lineage,
            scope_policy=scope_policy,
        )

    async def send_history_from_session(
        self, session_messages: Sequence[Any], session_id: str | None = None
    ) -> str | None:
        """Queue the last turn of a session (LangChain messages or role/content dicts): the last
        user message and the replies after it. Returns the turn id, or None without a user message.

        The turn id comes from the user message's id when it has one, so sending the same
        session twice queues its last turn once.
        """
        turn, message_id = extract_last_turn(session_messages)
        if not turn:
            return None
        turn_id = f"{session_id or 'session'}:{message_id}" if message_id else None
        return await self.send_history(turn, session_id=session_id, turn_id=turn_id)

    async def stop(self) -> None:
        """Put the `None` pill and wait until the queue is drained (seed: `stop()`)."""
        if self._write_queue is not None:
            await self._write_queue.stop()

    def retry_dead_letters(self) -> int:
        """Queue the dead-lettered turns again (after fixing their cause); returns how many."""
        return self._writer().retry_dead_letters()

    def write_status(self) -> WriteStatus:
        """Pending, done and dead-lettered turns for self-check reporting (WARN on dead letters).

        Without a writer (no model, no consumer) the journal on disk is read, if there is one.
        """
        if self._write_queue is not None or self.writer_llm is not None or self._consumer:
            return self._writer().status()
        journal_path = Path(self._journal_path or default_journal_path(self.manager))
        if not journal_path.exists():
            return WriteStatus("OK", False, 0, 0, 0)
        journal = TurnJournal(journal_path, self._journal_durability)
        try:
            return WriteStatus.read(journal, self.manager.user_id)
        finally:
            journal.close()

    def self_check(self, recheck: bool = False) -> SelfCheckReport:
        """The store's report merged with the write pipeline's: what the chat and editor show.

        Dead-lettered turns make an OK report WARN, with each turn's error among the issues
        (`retry_dead_letters()` queues them again); FAIL stays FAIL. The store is checked again
        only with `recheck` or when it never was (a check may repair and rewrite the store).
        """
        report = self.manager.last_report
        if recheck or report is None:
            report = self.manager.self_check()
        issues, status = list(report.issues), report.status
        try:
            writes = self.write_status()
        except Exception as exc:  # an unreadable journal is itself worth a warning
            writes = None
            issues.append(f"the write journal could not be read: {type(exc).__name__}: {exc}")
            status = "WARN" if status == "OK" else status
        if writes is not None and writes.dead:
            issues += writes.issues
            issues.append(
                f"{writes.dead} turn(s) were not written to memory; fix the cause, then "
                "retry_dead_letters()"
            )
            status = "WARN" if status == "OK" else status
        return SelfCheckReport(status, issues, list(report.repaired), report.item_count)


def default_journal_path(manager: BaseMemoryManager) -> Path:
    """Where the write journal lives when none is given: beside the manager's files."""
    directory = getattr(manager, "directory", None)
    file_path = getattr(manager, "path", None)
    if directory is None and file_path is not None:
        directory = Path(file_path).parent
    return Path(directory or "data") / "write-journal.sqlite"


def write_trace_path(journal_path: Path) -> Path:
    """The write trace's SQLite file, next to the journal."""
    return journal_path.with_name(f"{journal_path.stem}-trace.sqlite")
