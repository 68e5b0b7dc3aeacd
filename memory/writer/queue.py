"""DurableWriteQueue: the seed's asyncio queue, consumer task and `None` pill, over a journal."""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from memory.branch import Lineage, Provenance, check_scope_policy
from memory.manager import BaseMemoryManager
from memory.writer.journal import QueuedTurn, TurnJournal
from memory.writer.staging import EventCallback
from memory.writer.trace import WriteTrace
from memory.writer.turns import check_turn_messages

logger = logging.getLogger(__name__)


class TurnConsumer(Protocol):
    """What the queue runs per turn; `MemoryConsumer` is the real one."""

    async def consume(
        self,
        session_id: str | None,
        turn_id: str,
        turn_messages: list[dict[str, str]],
        manager: BaseMemoryManager,
        on_event: EventCallback | None = None,
        *,
        trace: WriteTrace | None = None,
        provenance: Provenance | None = None,
        lineage: Lineage | None = None,
        scope_policy: str = "auto",
    ) -> Any: ...


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
    """The write pipeline as `self_check` reports it: WARN while any turn is dead-lettered."""

    status: Literal["OK", "WARN"]
    running: bool
    pending: int
    done: int
    dead: int
    dead_letters: list[QueuedTurn] = field(default_factory=list)

    @property
    def issues(self) -> list[str]:
        return [
            f"turn {t.turn_id} failed {t.attempts} times and waits in the dead-letter list: "
            f"{t.last_error}"
            for t in self.dead_letters
        ]

    @classmethod
    def read(cls, journal: TurnJournal, user_id: str, running: bool = False) -> WriteStatus:
        """The status of `user_id`'s turns in `journal`."""
        counts = journal.counts(user_id)
        dead = journal.dead_letters(user_id) if counts["dead"] else []
        return cls(
            "WARN" if dead else "OK",
            running,
            counts["pending"],
            counts["done"],
            counts["dead"],
            dead,
        )


class DurableWriteQueue:
    """One user's write pipeline. `send` journals then enqueues and returns at once; one consumer
    task applies turns in arrival order; `stop` drains. Unfinished turns are replayed by `start`."""

    def __init__(
        self,
        manager: BaseMemoryManager,
        consumer: TurnConsumer,
        journal: TurnJournal,
        *,
        trace: WriteTrace | None = None,
        retry: RetryPolicy | None = None,
        on_event: EventCallback | None = None,
    ) -> None:
        self.manager = manager
        self.consumer = consumer
        self.journal = journal
        self.trace = trace
        self.retry = retry or RetryPolicy()
        self.on_event = on_event
        self._queue: asyncio.Queue[QueuedTurn | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._queued: set[str] = set()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> int:
        """Create the queue and the consumer task in the running loop; replay unfinished turns.

        Returns how many turns were replayed. Calling it again while running does nothing.
        """
        asyncio.get_running_loop()  # RuntimeError outside a loop, as the seed requires
        if self.running:
            return 0
        self._queue = asyncio.Queue()
        self._queued.clear()
        replayed = self.journal.pending(self.manager.user_id)
        for turn in replayed:
            self._enqueue(turn)
        if replayed:
            logger.info(
                "replaying %d unfinished memory turns for %s", len(replayed), self.manager.user_id
            )
        self._task = asyncio.create_task(self._consumer_loop(), name="memory-writer")
        return len(replayed)

    def _enqueue(self, turn: QueuedTurn) -> None:
        assert self._queue is not None
        if turn.turn_id not in self._queued:
            self._queued.add(turn.turn_id)
            self._queue.put_nowait(turn)

    async def send(
        self,
        turn_messages: list[dict[str, str]],
        session_id: str | None = None,
        turn_id: str | None = None,
        *,
        provenance: Provenance | None = None,
        lineage: Lineage | None = None,
        scope_policy: str = "auto",
    ) -> str:
        """Journal the turn (durable on return), queue it, and return its turn id at once.

        The branch fields are journaled with it, so a replayed turn writes to the same branch.
        """
        if not self.running:
            raise RuntimeError(
                "the memory writer is not running: call start() inside the event loop"
            )
        messages = check_turn_messages(turn_messages)
        if turn_id is not None and (not isinstance(turn_id, str) or not turn_id.strip()):
            raise ValueError("turn_id must be a non-empty string when given")
        turn = QueuedTurn(
            self.manager.user_id,
            turn_id or uuid.uuid4().hex,
            session_id,
            messages,
            provenance=provenance,
            lineage=lineage,
            scope_policy=check_scope_policy(scope_policy),
        )
        # One SQLite commit, in the loop: a hop to a worker thread costs more than the write
        # itself when the machine is busy (see bench/write_path.py). The local queue serves the
        # CLI and notebooks; under the LangGraph server, turns go to the memory_writer graph.
        journaled = self.journal.append(turn)
        if journaled.state == "pending":
            self._enqueue(journaled)
        return journaled.turn_id

    async def stop(self) -> None:
        """Put the `None` pill and wait until every queued turn is processed."""
        if self._queue is None or self._task is None:
            return
        await self._queue.put(None)
        try:
            await self._task
        finally:
            self._queue, self._task = None, None

    async def _consumer_loop(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            turn = await queue.get()
            if turn is None:
                break
            try:
                await self._process(turn)
            except asyncio.CancelledError:
                raise  # the turn stays pending in the journal and is replayed by the next start()
            except Exception:  # journal trouble: keep the loop alive; the turn stays pending
                logger.exception("memory writer could not process turn %s", turn.turn_id)
            finally:
                self._queued.discard(turn.turn_id)

    async def _process(self, turn: QueuedTurn) -> None:
        user_id = turn.user_id
        while True:
            # Consumers written before branch scope take no branch arguments: pass them only
            # when the turn has any.
            branch: dict[str, Any] = {}
            if turn.provenance is not None or turn.lineage is not None:
                branch = {"provenance": turn.provenance, "lineage": turn.lineage}
            if turn.scope_policy != "auto":
                branch["scope_policy"] = turn.scope_policy
            try:
                await self.consumer.consume(
                    turn.session_id,
                    turn.turn_id,
                    turn.messages,
                    self.manager,
                    self.on_event,
                    trace=self.trace,
                    **branch,
                )
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                attempts = await asyncio.to_thread(
                    self.journal.record_failure, user_id, turn.turn_id, error
                )
                if attempts >= self.retry.max_attempts:
                    await asyncio.to_thread(self.journal.mark_dead, user_id, turn.turn_id)
                    logger.error(
                        "memory turn %s dead-lettered after %d attempts: %s",
                        turn.turn_id,
                        attempts,
                        error,
                    )
                    return
                delay = self.retry.delay(attempts)
                logger.warning(
                    "memory turn %s failed (attempt %d), retrying in %.1f s: %s",
                    turn.turn_id,
                    attempts,
                    delay,
                    error,
                )
                await asyncio.sleep(delay)
            else:
                await asyncio.to_thread(self.journal.mark_done, user_id, turn.turn_id)
                return

    def retry_dead_letters(self) -> int:
        """Give every dead letter another round of attempts (once its cause is fixed).

        Running queues take them at once; otherwise the next `start()` replays them.
        """
        dead = self.journal.dead_letters(self.manager.user_id)
        for turn in dead:
            self.journal.requeue(turn.user_id, turn.turn_id)
            if self.running:
                self._enqueue(replace(turn, state="pending", attempts=0))
        return len(dead)

    def status(self) -> WriteStatus:
        """Pending, done and dead counts with the dead letters and their errors."""
        return WriteStatus.read(self.journal, self.manager.user_id, self.running)
