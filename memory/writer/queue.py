"""DurableWriteQueue: one user's turns, journaled, then written by a consumer task, one turn or
one thread's batch of turns at a time (a thread's admitted turns wait together: `BatchPolicy`).

Long because sending, replaying, retrying and batching share the queue's one task and its
bookkeeping.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memory.writer.batching import BatchHolder
from memory.writer.journal import JournalEntry, TurnJournal
from memory.writer.turn import Turn

if TYPE_CHECKING:
    from memory.writer.target import WriteTarget

logger = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 300.0
LEASE_MARGIN_SECONDS = 60.0


class TurnConsumer(Protocol):
    """What the queue runs per turn; `MemoryConsumer` is the real one. It raises to fail the
    attempt; an exception with `dead_letter = True` dead-letters the turn at once."""

    async def consume(self, turn: Turn, target: WriteTarget) -> Any: ...


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

    Turns the admission scorer decided to "batch" wait per thread (`target.batching`) and are
    written in one consumer run with the thread's next turns; the journal keeps each of them
    pending until that run's commit, which records all their ids at once."""

    def __init__(
        self,
        target: WriteTarget,
        consumer: TurnConsumer,
        journal: TurnJournal,
        *,
        retry: RetryPolicy | None = None,
        lease_seconds: float | None = None,
    ) -> None:
        self.target = target
        self.user_id = target.user_id
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
        self._holder = BatchHolder(target.batching, self._put)

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
                result = await self.consumer.consume(Turn.merge(turns), self.target)
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
        for hook in list(self.target.after_write):
            try:
                await hook(result)
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
        manager = self.target.manager
        applied = [t for t in claimed if await asyncio.to_thread(manager.has_applied, t.turn_id)]
        if applied:
            trace = await asyncio.to_thread(getattr, self.target, "trace")
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
