"""MemoryConsumer: one Turn → the ReAct memory agent on staged tools → one all-or-nothing commit.

Long because one agent run is one piece: its two protocols (tool calls, JSON), the model's guards
and the core-context seeding share the turn's staged view; the protocols are the first thing to move
out when it grows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from memory.errors import MemoryNotFound, StaleWrite
from memory.prompts.writer import (
    REPAIR_NOTE,
    Sections,
    WriterPrompts,
    by_language,
    format_sections,
    sections_for,
    writer_prompts,
)
from memory.prompts.writer_instructions import check_instructions, instructions_for
from memory.store.core_context import (
    GOAL_SEED_CHARS,
    IDENTITY_SECTIONS,
    NOT_ABOUT_THE_USER,
    human_summary,
    thread_task,
    truncate,
    user_facts,
)
from memory.store.item import parse_time
from memory.store.manager import BaseMemoryManager, Change
from memory.text.fencing import format_messages
from memory.text.language import resolve_language
from memory.usage.counts import ByPurpose, UsageMeter, as_dicts, describe
from memory.writer import listing as budget
from memory.writer.breaker import CircuitBreaker, breaker_for
from memory.writer.dating import anchored
from memory.writer.faithful import main_language
from memory.writer.json_protocol import MAX_ANSWER_TOKENS
from memory.writer.json_writer import JsonWriteFailed, bind_for_json, json_prompts, write_with_json
from memory.writer.model_call import (
    ModelCallFailed,
    ModelCallTimedOut,
    RoundLimitReached,
    guarded_call,
)
from memory.writer.protocols import check_protocol, move_to_json, protocol_for
from memory.writer.staging import ToolEvent
from memory.writer.text_calls import parse_text_tool_calls
from memory.writer.timeouts import (
    PREFILL_TOKENS_PER_SECOND,
    pace,
    prompt_tokens,
    scaled_timeout,
)
from memory.writer.tool_calls import REPAIR_ROUNDS, unusable_call
from memory.writer.tools import FULL, MemoryToolkit
from memory.writer.trace import UNMATCHED_FORGET
from memory.writer.turn import Turn

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory.writer.target import WriteTarget

logger = logging.getLogger(__name__)

DEFAULT_STEP_LIMIT = 12  # tool rounds; a turn rarely needs more than read + a few writes
DEFAULT_TIMEOUT_SECONDS = 120.0  # the whole turn; each model call has its own timeout
TOOL_SCHEMA_TOKENS = 1_500  # about what the six tools' schemas add to the agent's prompt
SLOW_CALL_SECONDS = 15.0  # log while the agent waits this long, and again each period
STALE_RERUNS = 1  # runs of a turn again after a stale write (a user edit raced the agent)


class MemoryWriteFailed(Exception):
    """The memory agent did not finish (model error, unusable tool calls, step limit, timeout)
    or the commit was refused; nothing of the turn was written, so it can be retried whole."""


@dataclass(frozen=True)
class ConsumeResult:
    """What one `consume` did. `applied` is False when the turn had been applied before."""

    turn_id: str
    applied: bool
    changes: list[Change] = field(default_factory=list)
    events: list[ToolEvent] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    summary: str = ""
    usage: dict[str, dict[str, int]] = field(default_factory=dict)  # the writer's model calls
    # The agent's own messages after its prompt (its AIMessages with their tool calls, the
    # ToolMessages answering them), what the memory_writer graph shows; [] on the json protocol.
    messages: list[Any] = field(default_factory=list)


def _local_now() -> datetime:
    return datetime.now().astimezone()


def forget_unmatched(toolkit: MemoryToolkit) -> bool:
    """Whether the user asked to forget something and the writer removed nothing."""
    removed = any(s.change.op in ("delete", "merge", "archive") for s in toolkit.staged)
    return toolkit.forget_requested and not removed


class MemoryConsumer:
    """The background memory agent: a ReAct agent over the six memory tools, one turn at a time.

    The model is `llm`, or `model_factory(turn.writer_model)` per turn (loaded lazily: a model that
    cannot be built fails that turn, never the chat that queued it). `language` applies when the
    turn's own is "auto" ("auto" here too: the user's language). `sections` replaces the default
    sections (names, name → hint, or per language a sequence of `MemorySection`, whose profile
    sections lead the core context's `human`). `instructions` (language -> text) replaces the
    writer's rules, what to keep and how to write a memory, in both protocols (default: the
    library's, `memory.prompts.writer_instructions`). `persona`, when given, is stored in each
    user's core context once; without it none is (the app keeps its persona in its prompt). A
    model that keeps failing is paused by a circuit breaker per model (see
    `memory.writer.breaker`). With a `capacity` (live memories, 0: no cap), a full store is said
    so in the system prompt and create_memory refuses; each refused fact is kept in the write
    trace (op "refused"), never dropped silently.

    `protocol` is how the model is asked (`memory.writer.protocols`): "tools" (the ReAct agent),
    "json" (one request answered with a JSON list of operations, for models that cannot call
    tools reliably), or "auto" (tools until the model writes a tool call as text). The turn's
    timeout grows with its prompt at `prefill_tokens_per_second`, the slowest reading speed
    expected of a working model (`memory.writer.timeouts`), so a slow healthy model finishes.
    """

    def __init__(
        self,
        llm: BaseChatModel | None = None,
        *,
        model_factory: Callable[[str], BaseChatModel] | None = None,
        language: str = "auto",
        step_limit: int = DEFAULT_STEP_LIMIT,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        sections: Sections | None = None,
        instructions: Mapping[str, str] | None = None,
        max_deletes: int = 3,
        persona: str | None = None,
        clock: Callable[[], datetime] = _local_now,
        slow_call_seconds: float = SLOW_CALL_SECONDS,
        capacity: int = 0,
        protocol: str = "auto",
        prefill_tokens_per_second: float = PREFILL_TOKENS_PER_SECOND,
    ) -> None:
        if llm is None and model_factory is None:
            raise ValueError("MemoryConsumer needs a chat model (llm) or a model_factory")
        if step_limit < 1 or timeout_seconds <= 0:
            raise ValueError("step_limit must be >= 1 and timeout_seconds > 0")
        resolve_language(language)  # fail early on an unsupported language
        self.llm = llm
        self.model_factory = model_factory
        self._models: dict[str, BaseChatModel] = {}
        self.language = language
        self.step_limit = step_limit
        self.timeout_seconds = timeout_seconds
        self.sections = sections
        self.instructions = check_instructions(instructions)  # fail early on a bare string
        self.max_deletes = max_deletes
        self.persona = persona
        self.clock = clock
        self.slow_call_seconds = slow_call_seconds
        self.capacity = capacity
        self.protocol = check_protocol(protocol)
        self.prefill_tokens_per_second = prefill_tokens_per_second

    # ── per turn ────────────────────────────────────────────────────────

    def prompts_for(self, turn: Turn) -> WriterPrompts:
        """The prompts in the turn's language: the setting's, else the one most of the user's
        words are in (a batch of English turns with one Chinese line is written in English)."""
        policy = turn.language if turn.language != "auto" else self.language
        if policy == "auto":
            return writer_prompts(main_language(turn.user_text))
        return writer_prompts(resolve_language(policy, turn.user_text))

    def rules(self, language: str) -> str:
        """The writer's instructions in `language` ("en" or "zh"), which both protocols send."""
        return instructions_for(self.instructions, language)

    def now_of(self, turn: Turn | None = None) -> datetime:
        """The writer's "now" for `turn`, in the turn's zone: when it was said for a turn from the
        past (an imported chat's `said_at`), so "next March" is read from that day; else now."""
        said = parse_time(turn.said_at) if turn is not None else None
        now = said if said is not None else self.clock()
        # In the user's zone when the run named one: their "today", not the server's.
        return now.astimezone(ZoneInfo(turn.timezone) if turn and turn.timezone else None)

    def now_line(self, prompts: WriterPrompts, turn: Turn | None = None) -> str:
        """The current time (`now_of(turn)`) with its weekday, as the prompts say it."""
        now = self.now_of(turn)
        return prompts.now_line.format(
            date=now.strftime("%Y-%m-%d"),
            time=now.strftime("%H:%M"),
            weekday=prompts.weekdays[now.weekday()],
            tz=now.tzname() or "local",
        )

    def build_user_prompt(self, turn: Turn, prompts: WriterPrompts) -> str:
        """The turn as fenced data, then the current time with its weekday."""
        conversation = format_messages(turn.messages, prompts.role_labels)
        prompt = prompts.turn_prompt.format(
            conversation=conversation, now_line=self.now_line(prompts, turn)
        )
        if not turn.context:
            return prompt
        earlier = format_messages(turn.context, prompts.context_labels)
        return prompts.context_block.format(context=earlier) + prompt

    def model_key(self, turn: Turn) -> str:
        """The name the model's breaker and protocol choice are kept under."""
        return turn.writer_model if self.llm is None else f"llm:{id(self.llm)}"

    def breaker(self, turn: Turn) -> CircuitBreaker:
        """The breaker of the model this turn is written with."""
        return breaker_for(self.model_key(turn))

    def model_for(self, turn: Turn) -> BaseChatModel:
        if self.llm is not None:
            return self.llm
        assert self.model_factory is not None
        model = self._models.get(turn.writer_model)
        if model is not None:
            return model
        try:
            model = self.model_factory(turn.writer_model)
        except Exception as exc:
            raise MemoryWriteFailed(
                f"the writer model {turn.writer_model!r} cannot be loaded: {exc}"
            ) from exc
        # Loaded once per name: the factory (the app's loader) is not on every turn's path.
        return self._models.setdefault(turn.writer_model, model)

    async def consume(self, turn: Turn, target: WriteTarget) -> ConsumeResult:
        """Run the memory agent on one turn (or a batch `Turn.merge` made) and apply its changes
        exactly once (key: the turn ids). Its model calls are counted as "writer" and recorded
        in the user's ledger (`memory.usage`), failed attempts included.

        Raises MemoryWriteFailed when nothing could be written (the queue retries or
        dead-letters the turn) and WriterPaused while the model's breaker is open.
        """
        from memory.usage.metering import metered  # needs LangChain, like the agent

        meter = UsageMeter()
        try:
            with metered(meter, "writer"):
                result = await self._consume(turn, target)
        finally:
            usage = meter.by_purpose()
            if usage:
                logger.info("memory turn %s: model calls %s", turn.turn_id, describe(usage))
                await asyncio.to_thread(self._record_usage, target, turn, usage)
        return replace(result, usage=as_dicts(usage))

    @staticmethod
    def _record_usage(target: WriteTarget, turn: Turn, usage: ByPurpose) -> None:
        try:
            target.usage.record(turn.user_id, f"writer:{turn.turn_id}", usage, turn.thread_id)
        except Exception:  # an account of the calls, not the write
            logger.exception("recording the writer's model calls of %s failed", turn.turn_id)

    async def _consume(self, turn: Turn, target: WriteTarget) -> ConsumeResult:
        # The trace opens its SQLite file on first use: off the loop, like every file call here.
        manager, trace = target.manager, await asyncio.to_thread(getattr, target, "trace")
        user_id, turn_id = manager.user_id, turn.turn_id
        if turn.user_id != user_id:
            raise ValueError(
                f"turn {turn_id} of user {turn.user_id!r} sent to {user_id!r}'s memory"
            )
        if await asyncio.to_thread(self._all_applied, manager, turn):
            if trace is not None:  # a crash after the commit left the trace rows staged
                await asyncio.to_thread(trace.mark_applied, user_id, turn_id)
            logger.info("memory turn %s was already applied for %s", turn_id, user_id)
            return ConsumeResult(turn_id, applied=False, summary="turn already applied")
        breaker = self.breaker(turn)
        breaker.check()
        model = self.model_for(turn)
        for attempt in range(1, STALE_RERUNS + 2):
            try:
                toolkit, prompts, summary, steps = await self._run_turn(
                    turn, target, model, breaker
                )
            except MemoryWriteFailed as exc:
                if trace is not None:
                    await asyncio.to_thread(trace.record_failure, turn, str(exc))
                raise
            if trace is not None:
                await asyncio.to_thread(trace.stage, turn, toolkit.staged)
            # The library, not the model, fixes which day "后天" / "tomorrow" is.
            dated = anchored(toolkit.changes, turn.moment)
            try:
                # A batch's turn ids are recorded in the same transaction as its changes.
                outcome = await asyncio.to_thread(
                    manager.apply, dated, turn.turn_ids, turn.provenance
                )
            except Exception as exc:
                if trace is not None:
                    await asyncio.to_thread(trace.discard_staged, user_id, turn_id)
                # The user changed (or deleted) a memory while the agent worked: its changes were
                # made against an old read. Run the turn again on a fresh read, a bounded number
                # of times; then fail so that the queue retries later or dead-letters the turn.
                if isinstance(exc, StaleWrite | MemoryNotFound) and attempt <= STALE_RERUNS:
                    logger.warning("memory turn %s: %s; running it again", turn_id, exc)
                    continue
                refused = MemoryWriteFailed(f"commit of turn {turn_id} refused: {exc}")
                if trace is not None:  # a failed attempt leaves its `failed` row, as above
                    await asyncio.to_thread(trace.record_failure, turn, str(refused))
                raise refused from exc
            break
        if trace is not None:
            mark = trace.mark_applied if outcome.applied else trace.discard_staged
            await asyncio.to_thread(mark, user_id, turn_id)
            not_taken = [e for e in toolkit.events if not e.ok and FULL in e.result]
            if outcome.applied and not_taken:  # facts the full store could not take: on record
                await asyncio.to_thread(trace.record_refused, turn, not_taken, len(toolkit.staged))
            if outcome.applied and forget_unmatched(toolkit):
                step = len(toolkit.staged) + len(not_taken)
                await asyncio.to_thread(trace.record_unmatched_forget, turn, step)
                summary = UNMATCHED_FORGET
        if outcome.applied:
            await asyncio.to_thread(self._seed_core_context, manager, turn, prompts.language)
        changes = dated if outcome.applied else []
        return ConsumeResult(
            turn_id, outcome.applied, changes, toolkit.events, outcome.results, summary,
            messages=steps,
        )  # fmt: skip

    @staticmethod
    def _all_applied(manager: BaseMemoryManager, turn: Turn) -> bool:
        return all(manager.has_applied(turn_id) for turn_id in turn.turn_ids)

    async def _run_turn(
        self, turn: Turn, target: WriteTarget, model: BaseChatModel, breaker: CircuitBreaker
    ) -> tuple[MemoryToolkit, WriterPrompts, str, list[Any]]:
        """One run of the memory agent on a fresh read of the store; nothing is written. Also
        returns the agent's messages after its prompt ([] on the json protocol)."""
        from langchain.agents import create_agent
        from langchain_core.messages import HumanMessage

        toolkit = MemoryToolkit.for_turn(
            target.manager, turn, retriever=target.retrievers.mechanical,
            on_event=target.emit, max_deletes=self.max_deletes, capacity=self.capacity,
        )  # fmt: skip
        toolkit.this_year = self.now_of(turn).year  # the year the prompt's "now" gives the model
        await asyncio.to_thread(toolkit.view.load)  # the snapshot the agent works on
        await asyncio.to_thread(budget.warm_index, toolkit.view)  # the tools run in the loop
        prompts = self.prompts_for(turn)
        template = prompts.update_system if toolkit.view.live else prompts.cold_start_system
        sections = (
            sections_for(self.sections, prompts.language)
            if self.sections is not None
            else prompts.default_sections
        )
        system_prompt = template.format(
            rules=self.rules(prompts.language), sections=format_sections(sections)
        )
        over = ""
        if toolkit.over_capacity():
            count = toolkit.live_count()
            over = prompts.over_capacity.format(count=count, capacity=self.capacity)
        if protocol_for(self.protocol, self.model_key(turn), model) == "json":
            summary = await self._run_json(turn, toolkit, model, sections, over, breaker)
            return toolkit, prompts, summary, []
        agent = create_agent(
            model,
            toolkit.tools,
            system_prompt=system_prompt + over,
            name="memory_writer_agent",
        )
        messages: list[Any] = [HumanMessage(self.build_user_prompt(turn, prompts))]
        key = self.model_key(turn)
        tokens_in = prompt_tokens([system_prompt, *messages]) + TOOL_SCHEMA_TOKENS
        timeout = scaled_timeout(
            self.timeout_seconds, tokens_in,
            rate=self.prefill_tokens_per_second, slowdown=pace.slowdown(key),
        )  # fmt: skip
        for repair in range(REPAIR_ROUNDS + 1):
            started, before = time.monotonic(), len(messages)
            messages = await self._run_agent(agent, messages, turn.turn_id, breaker, timeout, key)
            self._measure(key, time.monotonic() - started, messages[before:], tokens_in)
            problem = unusable_call(messages[-1])
            if problem is None:
                if repair and not toolkit.staged:
                    # The model failed, then said "no changes": that is not a written turn.
                    raise MemoryWriteFailed(
                        f"memory agent for turn {turn.turn_id} stored nothing after an unusable "
                        "tool call"
                    )
                summary = getattr(messages[-1], "text", "") or ""
                return toolkit, prompts, summary, messages[1:]
            toolkit.record_refused_call("(unusable tool call)", f"Error: {problem}")
            logger.warning("memory turn %s: the model's tool call is unusable: %s", turn.turn_id,
                           problem)  # fmt: skip
            written = getattr(messages[-1], "text", "") or ""
            if self.protocol == "auto" and "as text" in problem:
                move_to_json(self.model_key(turn), "wrote a tool call as text")
                try:
                    summary = await self._run_json(turn, toolkit, model, sections, over, breaker)
                except MemoryWriteFailed as exc:
                    raise MemoryWriteFailed(
                        f"memory agent for turn {turn.turn_id} made an unusable tool call "
                        f"({problem}), then on the json protocol: {exc}"
                    ) from exc
                return toolkit, prompts, summary, messages[1:]
            calls = parse_text_tool_calls(written) if "as text" in problem else None
            if calls and any(call.name != "read_memories" for call in calls):
                # Unambiguous calls ({"name": <tool>, "arguments": {...}}) run as if called.
                results = [getattr(toolkit, c.name)(**c.arguments) for c in calls]
                if any(not r.startswith("Error:") for r in results):
                    return toolkit, prompts, "; ".join(results), messages[1:]
            if repair < REPAIR_ROUNDS:
                messages.append(HumanMessage(REPAIR_NOTE.format(problem=problem)))
        raise MemoryWriteFailed(
            f"memory agent for turn {turn.turn_id} made an unusable tool call twice: {problem}"
        )

    async def _run_json(
        self,
        turn: Turn,
        toolkit: MemoryToolkit,
        model: BaseChatModel,
        sections: Any,
        over_capacity: str,
        breaker: CircuitBreaker,
    ) -> str:
        """The turn written with the json protocol: one constrained request (and one repair)."""
        prompts = self.prompts_for(turn)
        language = "zh" if prompts is writer_prompts("zh") else "en"
        system, turn_template, repair_note = json_prompts(
            language, sections, toolkit, self.rules(language)
        )
        # The user's side only (Turn.users_side): a small model shown the assistant's reply
        # ("I have no information about Li Wei") stored nothing, or stored the reply's inventions.
        conversation = format_messages(turn.users_side, prompts.role_labels)
        turn_prompt = turn_template.format(
            memories=toolkit.view.render(), conversation=conversation,
            now_line=self.now_line(prompts, turn),
        )  # fmt: skip
        bound = bind_for_json(model, toolkit, sections)
        key, tokens_in = self.model_key(turn), prompt_tokens([system + over_capacity, turn_prompt])
        timeout = scaled_timeout(
            self.timeout_seconds / 4, tokens_in, MAX_ANSWER_TOKENS,
            rate=self.prefill_tokens_per_second, slowdown=pace.slowdown(key),
        )  # fmt: skip

        async def invoke(messages: list[Any]) -> Any:
            started = time.monotonic()
            reply = await self._guarded(bound.ainvoke(messages), turn.turn_id, breaker, timeout,
                                        key)  # fmt: skip
            self._measure(key, time.monotonic() - started, [reply], tokens_in)
            return reply

        try:
            return await write_with_json(
                invoke, toolkit, system + over_capacity, turn_prompt, repair_note
            )
        except JsonWriteFailed as exc:
            raise MemoryWriteFailed(f"memory writer for turn {turn.turn_id}: {exc}") from exc

    def _measure(self, key: str, seconds: float, replies: list[Any], tokens_in: int) -> None:
        """Note how fast the model answered (its own token counts when it reports them), so
        the next limit follows its measured speed (`timeouts.pace`)."""
        usages = [getattr(r, "usage_metadata", None) or {} for r in replies]
        read = sum(int(u.get("input_tokens") or 0) for u in usages) or tokens_in
        written = sum(int(u.get("output_tokens") or 0) for u in usages)
        pace.record(key, seconds, read, written, self.prefill_tokens_per_second)

    async def _run_agent(
        self,
        agent: Any,
        messages: list[Any],
        turn_id: str,
        breaker: CircuitBreaker,
        timeout: float | None = None,
        key: str = "",
    ) -> list[Any]:
        config = {"recursion_limit": 2 * self.step_limit + 1}
        work = agent.ainvoke({"messages": messages}, config=config)
        state = await self._guarded(work, turn_id, breaker, timeout or self.timeout_seconds,
                                    key)  # fmt: skip
        return list(state.get("messages") or messages)

    async def _guarded(
        self,
        work: Coroutine[Any, Any, Any],
        turn_id: str,
        breaker: CircuitBreaker,
        timeout: float,
        key: str = "",
    ) -> Any:
        """Await the model's work within `timeout` (memory.writer.model_call); a time-out makes
        the model `key`'s next limit longer (`timeouts.Pace.record_timeout`), so the turn's
        retry waits for a slow model rather than timing out again."""

        def still_waiting(waited: float) -> None:
            logger.warning(
                "memory turn %s: still waiting for the writer model after %.0f s (gives up at "
                "%.0f s)", turn_id, waited, timeout,
            )  # fmt: skip

        try:
            return await guarded_call(work, breaker, timeout, self.slow_call_seconds, still_waiting)
        except RoundLimitReached as exc:
            raise MemoryWriteFailed(
                f"memory agent for turn {turn_id} did not finish within {self.step_limit} steps"
            ) from exc
        except ModelCallFailed as exc:
            if isinstance(exc, ModelCallTimedOut) and key:
                pace.record_timeout(key)
            raise MemoryWriteFailed(f"memory agent for turn {turn_id} {exc}") from exc

    def profile_sections(self, language: str) -> tuple[str, ...]:
        """The sections holding who the user is, in `language` (what `human` lists first)."""
        if self.sections is None:
            return IDENTITY_SECTIONS
        kinds = sections_for(self.sections, language)
        return tuple(s.name for s in kinds if s.kind == "profile") or IDENTITY_SECTIONS

    def left_out_sections(self) -> frozenset[str]:
        """The sections `human` never lists (every language's, the library's too): what
        happened, what is to be done, and the standing instructions, a block of their own."""
        if self.sections is None or not by_language(self.sections):  # plain names: no kinds
            return NOT_ABOUT_THE_USER
        mine = {
            s.name
            for language in ("en", "zh")
            for s in sections_for(self.sections, language)
            if s.kind in ("event", "task", "instruction")
        }
        return NOT_ABOUT_THE_USER | mine

    def _seed_core_context(self, manager: BaseMemoryManager, turn: Turn, language: str) -> None:
        """After an applied turn: `human` refreshed from the user-scope facts (unless edited by
        hand), this thread's goal from its first task memory, and the persona only when this
        consumer was given one (the app's default persona lives in its prompt, so that a changed
        default reaches every user). The manager decides under its write lock, so a concurrent
        edit in the editor is kept."""
        try:
            live = manager.list_items()
            task = thread_task(live, turn.thread_id)
            facts = user_facts(live, self.profile_sections(language), self.left_out_sections())
            manager.seed_core_context(
                persona=self.persona,
                human=human_summary(facts),
                thread_id=turn.thread_id or None,
                goal=truncate(task, GOAL_SEED_CHARS) if task else None,
            )  # fmt: skip
        except Exception:  # the turn is applied; the block is seeded again next turn
            logger.exception("seeding the core context of %s failed", manager.user_id)

    def consume_sync(self, turn: Turn, target: WriteTarget) -> ConsumeResult:
        """`consume` for callers without an event loop (sync nodes, scripts)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.consume(turn, target))
        raise RuntimeError("consume_sync was called inside a running event loop; await consume()")
