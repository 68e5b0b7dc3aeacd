"""DurableWriteQueue: one user's turns, journaled, then written by a consumer task, one turn or
one thread's batch of turns at a time (a thread's admitted turns wait together: `BatchPolicy`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memory.writer.journal import JournalEntry, TurnJournal
from memory.writer.turn import Turn

if TYPE_CHECKING:
    from memory.long_term import LongTermMemory

logger = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 300.0
LEASE_MARGIN_SECONDS = 60.0
MAX_BATCH_SIZE = 100


@dataclass(frozen=True)
class BatchPolicy:
    """A thread's batch is written when it holds `size` turns, when the thread has been quiet for
    `quiet_seconds`, when a turn decided "write" arrives, and before the queue stops or is
    joined (the end of a session). `size` 1 writes every turn on its own."""

    size: int = 5
    quiet_seconds: float = 30.0

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not 1 <= self.size <= MAX_BATCH_SIZE:
            raise ValueError(f"a batch size must be 1 to {MAX_BATCH_SIZE}, not {self.size!r}")
        if not 0 <= self.quiet_seconds <= 24 * 3600:
            raise ValueError(f"quiet_seconds must be 0 to 86400, not {self.quiet_seconds!r}")


def continues(earlier: Turn, later: Turn) -> bool:
    """Whether `later` may join a batch ending with `earlier`: same user, thread, writer model,
    scope policy and language, and on the same branch (it descends from `earlier`'s
    checkpoint), so that the batch can be written from the last turn's place in the tree."""
    same = (earlier.user_id, earlier.thread_id, earlier.writer_model, earlier.scope_policy,
            earlier.language) == (later.user_id, later.thread_id, later.writer_model,
                                   later.scope_policy, later.language)  # fmt: skip
    if not same:
        return False
    if not earlier.checkpoint_id or later.lineage is None:
        return earlier.lineage is None and later.lineage is None
    return earlier.checkpoint_id in later.lineage.checkpoint_ids


def split_runs(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Consecutive turns that may be merged, in order (a fork or another writer starts a run)."""
    runs: list[list[Turn]] = []
    for turn in turns:
        if runs and continues(runs[-1][-1], turn):
            runs[-1].append(turn)
        else:
            runs.append([turn])
    return runs


class BatchHolder:
    """Holds "batch" turns per thread until their batch is due; `on_due(turns)` receives a
    batch that fell due by time. Runs on one event loop (the queue's)."""

    def __init__(self, policy: Callable[[], BatchPolicy], on_due: Callable[[list[Turn]], None]):
        self.policy = policy
        self.on_due = on_due
        self._held: dict[str, list[Turn]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    @property
    def held(self) -> int:
        return sum(len(turns) for turns in self._held.values())

    def add(self, turn: Turn) -> list[list[Turn]]:
        """Hold `turn`, or return the batches that are due now because of it (oldest first)."""
        thread = turn.thread_id
        held = self._held.get(thread, [])
        due: list[list[Turn]] = []
        if held and not continues(held[-1], turn):  # a fork: what waits goes first, alone
            due.append(self.take(thread))
        policy = self.policy()
        if turn.decision != "batch" or policy.size <= 1:
            due.append([*self.take(thread), turn])  # a "write" takes its thread's batch along
            return due
        held = self._held.setdefault(thread, [])
        held.append(turn)
        if len(held) >= policy.size:
            due.append(self.take(thread))
        else:
            self._arm(thread, policy.quiet_seconds)
        return due

    def take(self, thread: str) -> list[Turn]:
        """The thread's held turns (now due), no longer held."""
        timer = self._timers.pop(thread, None)
        if timer is not None:
            timer.cancel()
        return self._held.pop(thread, [])

    def take_all(self) -> list[list[Turn]]:
        return [batch for thread in list(self._held) if (batch := self.take(thread))]

    def _arm(self, thread: str, seconds: float) -> None:
        timer = self._timers.pop(thread, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[thread] = loop.call_later(seconds, self._quiet, thread)

    def _quiet(self, thread: str) -> None:
        self._timers.pop(thread, None)
        batch = self._held.pop(thread, [])
        if batch:
            self.on_due(batch)


class TurnConsumer(Protocol):
    """What the queue runs per turn; `MemoryConsumer` is the real one. It raises to fail the
    attempt; an exception with `dead_letter = True` dead-letters the turn at once."""

    async def consume(self, turn: Turn, memory: LongTermMemory) -> Any: ...


# Called after each applied writer run, with the consumer's result (`LongTermMemory.after_write`:
# the deployment's consolidation trigger, for one); a hook that fails is logged.
WriteHook = Callable[["LongTermMemory", Any], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """A failed turn waits `initial_delay * factor**(n-1)` s (capped) and retries, then is dead."""

    max_attempts: int = 3
    initial_delay: float = 2.0
    factor: float = 2.0
    max_delay: float = 60.0

    def delay(self, attempts: int) -> float:
        return float(min(self.max_delay, self.initial_delay * self.factor ** max(0, attempts - 1)))


@dataclass(frozen=True)
class WriteStatus:
    """The write pipeline as self-checks report it: WARN while a turn is dead-lettered, FAIL
    while a damaged journal waits to be looked at."""

    status: Literal["OK", "WARN", "FAIL"]
    running: bool
    pending: int
    done: int
    dead: int
    dead_letters: list[JournalEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def issues(self) -> list[str]:
        dead = [
            f"turn {e.turn_id} failed {e.attempts} times and waits in the dead-letter list: "
            f"{e.last_error}"
            for e in self.dead_letters
        ]
        return [*self.problems, *dead]

    @classmethod
    def read(cls, journal: TurnJournal, user_id: str, running: bool = False) -> WriteStatus:
        """The status of `user_id`'s turns in `journal`."""
        counts = journal.counts(user_id)
        dead = journal.dead_letters(user_id) if counts["dead"] else []
        problems = [journal.recovery.describe()] if journal.recovery is not None else []
        status: Literal["OK", "WARN", "FAIL"] = "FAIL" if problems else "WARN" if dead else "OK"
        return cls(
            status, running, counts["pending"], counts["done"], counts["dead"], dead, problems
        )


class DurableWriteQueue:
    """`send` journals a turn, then queues it, and returns at once; one task writes the turns in
    arrival order; `stop` drains. Unfinished turns are replayed by `start`.

    Turns the admission scorer decided to "batch" wait per thread (`memory.batching`) and are
    written in one consumer run with the thread's next turns; the journal keeps each of them
    pending until that run's commit, which records all their ids at once."""

    def __init__(
        self,
        memory: LongTermMemory,
        consumer: TurnConsumer,
        journal: TurnJournal,
        *,
        retry: RetryPolicy | None = None,
        lease_seconds: float | None = None,
    ) -> None:
        self.memory = memory
        self.user_id = memory.manager.user_id
        self.consumer = consumer
        self.journal = journal
        self.retry = retry or RetryPolicy()
        # Long enough for one attempt: the consumer's own time limit, with a margin.
        limit = getattr(consumer, "timeout_seconds", None)
        default = limit + LEASE_MARGIN_SECONDS if limit else DEFAULT_LEASE_SECONDS
        self.lease_seconds = lease_seconds if lease_seconds is not None else default
        self._queue: asyncio.Queue[list[Turn] | None] | None = None
        self._task: asyncio.Task[None] | None = None
        # Turns queued or held in a batch, not processed yet, by id: what `waiting` reads.
        self._queued: dict[str, Turn] = {}
        self._paused: set[str] = set()  # dead-lettered because the writer model was paused
        self._holder = BatchHolder(lambda: memory.batching, self._put)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> int:
        """Create the queue and its task in the running loop and replay unfinished turns;
        returns how many. Calling it again while running does nothing."""
        asyncio.get_running_loop()  # RuntimeError outside a loop: the task needs one
        if self.running:
            return 0
        self._queue = asyncio.Queue()
        self._queued.clear()
        replayed = self.journal.pending(self.user_id)
        for entry in replayed:
            self._enqueue(entry.turn)
        self.flush()  # replayed turns have waited long enough
        if replayed:
            logger.info("replaying %d unfinished memory turns of %r", len(replayed), self.user_id)
        self._task = asyncio.create_task(self._consumer_loop(), name="memory-writer")
        return len(replayed)

    def _enqueue(self, turn: Turn) -> None:
        if self._queue is not None and turn.turn_id not in self._queued:
            self._queued[turn.turn_id] = turn
            for batch in self._holder.add(turn):
                self._put(batch)

    def _put(self, batch: list[Turn]) -> None:
        if self._queue is not None and batch:
            self._queue.put_nowait(batch)

    def waiting(self) -> list[Turn]:
        """The turns journaled and not processed yet (held in a batch, queued, or being
        written), in arrival order. Safe to call from another thread: a copy is read."""
        return list(self._queued.copy().values())

    def flush(self, thread_id: str | None = None) -> int:
        """Send the waiting batches (of one thread, or all) to the writer now, e.g. before the
        conversation is compacted; returns how many turns that was."""
        batches = self._holder.take_all() if thread_id is None else [self._holder.take(thread_id)]
        for batch in batches:
            self._put(batch)
        return sum(len(batch) for batch in batches)

    async def send(self, turn: Turn) -> str:
        """Journal the turn (durable when this returns: JournalError if it could not be), queue
        it, and return its id."""
        if not self.running:
            raise RuntimeError("the memory writer is not running: call start() in the event loop")
        if turn.user_id != self.user_id:
            raise ValueError(f"turn of user {turn.user_id!r} sent to {self.user_id!r}'s queue")
        # One SQLite commit, in the loop: a hop to a worker thread costs more than the write
        # itself when the machine is busy (see bench/write_path.py).
        entry = self.journal.append(turn)
        if entry.state == "pending":
            self._enqueue(entry.turn)
        return entry.turn_id

    async def join(self) -> None:
        """Wait until every turn queued so far was processed (waiting batches go now)."""
        if self._queue is not None:
            self.flush()
            await self._queue.join()

    async def stop(self, timeout: float | None = None) -> bool:
        """Put the `None` pill and wait (at most `timeout` seconds) until every queued turn is
        processed. Returns False when time ran out: the task is stopped and what was left stays
        pending in the journal, replayed by the next start."""
        if self._queue is None or self._task is None:
            return True
        task = self._task
        self.flush()  # the session ends: what waits in a batch is written first
        await self._queue.put(None)
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
            return True
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            left = self.journal.counts(self.user_id)["pending"]
            logger.warning(
                "stopped the memory writer of %r after %g s; %d turns stay journaled for the "
                "next start",
                self.user_id,
                timeout,
                left,
            )
            return False
        finally:
            self._queue, self._task = None, None

    async def _consumer_loop(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            batch = await queue.get()
            try:
                if batch is None:
                    break
                await self._process(batch)
            except asyncio.CancelledError:
                raise  # the turns stay pending in the journal and are replayed by the next start
            except Exception:  # journal trouble: keep the loop alive; the turns stay pending
                logger.exception("memory writer could not process turns %s", batch and _ids(batch))
            finally:
                queue.task_done()
                for turn in batch or []:
                    self._queued.pop(turn.turn_id, None)

    async def _process(self, batch: list[Turn]) -> None:
        journal, user = self.journal, self.user_id
        delay = 0.0
        while True:
            turns = await self._claim(batch, delay + self.lease_seconds)
            if not turns:
                return
            if delay:
                await asyncio.sleep(delay)
            ids = [turn.turn_id for turn in turns]
            try:
                result = await self.consumer.consume(Turn.merge(turns), self.memory)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                attempts = 0
                for turn_id in ids:
                    failed = await asyncio.to_thread(journal.record_failure, user, turn_id, error)
                    attempts = max(attempts, failed)
                paused = getattr(exc, "dead_letter", False)
                if attempts >= self.retry.max_attempts or paused:
                    for turn_id in ids:
                        await asyncio.to_thread(journal.mark_dead, user, turn_id)
                    if paused:  # the writer was paused: retried once it answers again
                        self._paused.update(ids)
                    logger.error(
                        "memory turns %s dead-lettered after %d attempts: %s",
                        _ids(turns),
                        attempts,
                        error,
                    )
                    return
                delay = self.retry.delay(attempts)
                logger.warning(
                    "memory turns %s failed (attempt %d), retrying in %.1f s: %s",
                    _ids(turns),
                    attempts,
                    delay,
                    error,
                )
            else:
                await asyncio.to_thread(journal.mark_done, user, *ids)
                if self._paused:
                    self._requeue_paused()
                await self._after_write(result)
                return

    async def _after_write(self, result: Any) -> None:
        for hook in list(self.memory.after_write):
            try:
                await hook(self.memory, result)
            except Exception:  # the turns are written; what follows a write is extra
                logger.exception("a write hook of %r failed", self.user_id)

    async def _claim(self, batch: list[Turn], seconds: float) -> list[Turn]:
        """The turns of `batch` this process may write now: leased, and (in a batch of several)
        not applied already (a crash between the store's commit and the journal's leaves a turn
        pending that the store has: it is only marked done)."""
        claimed = []
        for turn in batch:
            if await asyncio.to_thread(self.journal.claim, self.user_id, turn.turn_id, seconds):
                claimed.append(turn)
            else:
                self._look_again_later(turn)
        if len(claimed) < 2:
            return claimed  # one turn: the consumer itself skips an applied one
        manager = self.memory.manager
        applied = [t for t in claimed if await asyncio.to_thread(manager.has_applied, t.turn_id)]
        if applied:
            trace = await asyncio.to_thread(getattr, self.memory, "trace")
            for turn in applied:  # their trace rows were staged under the batch's last id
                await asyncio.to_thread(trace.mark_applied, self.user_id, turn.turn_id)
            await asyncio.to_thread(self.journal.mark_done, self.user_id, *_ids(applied))
        return [t for t in claimed if t not in applied]

    def _look_again_later(self, turn: Turn) -> None:
        """Another process holds the turn's lease: if that process dies, its lease runs out and
        this queue takes the turn then (unless it is done by then)."""
        entry = self.journal.get(self.user_id, turn.turn_id)
        if entry is None or entry.state != "pending":
            return
        wait = max(0.0, self.journal.lease_until(self.user_id, turn.turn_id) - time.time()) + 0.5
        logger.info("memory turn %s is being written by another process", turn.turn_id)
        asyncio.get_running_loop().call_later(wait, self._enqueue, turn)

    def _requeue_paused(self) -> None:
        """The writer answers again: the turns dead-lettered while it was paused go again."""
        for entry in self.journal.dead_letters(self.user_id):
            if entry.turn_id in self._paused:
                self.journal.requeue(self.user_id, entry.turn_id)
                self._enqueue(entry.turn)
        self.flush()
        logger.info("memory writer of %r resumes %d paused turns", self.user_id, len(self._paused))
        self._paused.clear()

    def retry_dead_letters(self) -> int:
        """Give every dead letter another round of attempts (once its cause is fixed). A running
        queue takes them at once; otherwise the next `start()` replays them."""
        dead = self.journal.dead_letters(self.user_id)
        for entry in dead:
            self.journal.requeue(self.user_id, entry.turn_id)
            self._enqueue(entry.turn)
        self.flush()
        return len(dead)

    def status(self) -> WriteStatus:
        """Pending, done and dead counts with the dead letters and their errors."""
        return WriteStatus.read(self.journal, self.user_id, self.running)


def _ids(turns: list[Turn]) -> list[str]:
    return [turn.turn_id for turn in turns]
