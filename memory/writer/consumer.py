"""MemoryConsumer: one turn → the ReAct memory agent on staged tools → one all-or-nothing commit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.errors import GraphRecursionError

from memory.branch import Lineage, Provenance
from memory.core_context import GOAL_SEED_CHARS, HUMAN_SEED_CHARS, truncate
from memory.errors import MemoryNotFound, StaleWrite
from memory.manager import BaseMemoryManager, Change
from memory.writer import budget
from memory.writer.guards import detect_forget_request
from memory.writer.staging import EventCallback, ToolEvent
from memory.writer.tools import MemoryToolkit, make_memory_tools
from memory.writer.trace import WriteTrace
from memory.writer.turns import check_turn_messages, contains_cjk, format_turn
from prompts.writer import WriterPrompts, default_persona, format_sections, writer_prompts

logger = logging.getLogger(__name__)

DEFAULT_STEP_LIMIT = 12  # tool rounds; a turn rarely needs more than read + a few writes
DEFAULT_TIMEOUT_SECONDS = 180.0
IDENTITY_SECTIONS = ("identity", "身份")
STALE_RERUNS = 1  # runs of a turn again after a stale write (a user edit raced the agent)


class MemoryWriteFailed(Exception):
    """The memory agent did not finish (model error, step limit, timeout) or the commit was
    refused; nothing of the turn was written, so it can be retried as a whole."""


@dataclass(frozen=True)
class ConsumeResult:
    """What one `consume` did. `applied` is False when the turn had been applied before."""

    turn_id: str
    applied: bool
    changes: list[Change] = field(default_factory=list)
    events: list[ToolEvent] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    summary: str = ""


def user_facts(manager: BaseMemoryManager) -> list[str]:
    """The live user-scope memories, identity sections first (what `human` is made of)."""
    items = [item for item in manager.list_items().values() if item.scope == "user"]
    items.sort(key=lambda item: item.theme not in IDENTITY_SECTIONS)  # stable: order kept
    return [item.description for item in items]


def _local_now() -> datetime:
    return datetime.now().astimezone()


class MemoryConsumer:
    """The background memory agent of seed 002, without module globals: the manager is an argument.

    `language` is "en", "zh" or "auto" (Chinese when the user wrote Chinese). `sections` replaces
    the default sections (a list of names or a name → hint mapping).
    """

    def __init__(
        self,
        llm: BaseChatModel,
        *,
        language: str = "en",
        step_limit: int = DEFAULT_STEP_LIMIT,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        sections: Mapping[str, str] | Sequence[str] | None = None,
        max_deletes: int = 3,
        trace: WriteTrace | None = None,
        clock: Callable[[], datetime] = _local_now,
    ) -> None:
        if llm is None:
            raise ValueError("MemoryConsumer needs a chat model (llm) to run the memory agent")
        if step_limit < 1 or timeout_seconds <= 0:
            raise ValueError("step_limit must be >= 1 and timeout_seconds > 0")
        if language != "auto":
            writer_prompts(language)  # fail early on an unsupported language
        self.llm = llm
        self.language = language
        self.step_limit = step_limit
        self.timeout_seconds = timeout_seconds
        self.sections = sections
        self.max_deletes = max_deletes
        self.trace = trace
        self.clock = clock

    def _prompts_for(self, turn: list[dict[str, str]]) -> WriterPrompts:
        if self.language != "auto":
            return writer_prompts(self.language)
        user_text = " ".join(m["content"] for m in turn if m["role"] == "user")
        return writer_prompts("zh" if contains_cjk(user_text) else "en")

    def build_user_prompt(self, turn: list[dict[str, str]], prompts: WriterPrompts) -> str:
        """The turn as fenced data, then the current time with its weekday."""
        now = self.clock()
        now_line = prompts.now_line.format(
            date=now.strftime("%Y-%m-%d"),
            time=now.strftime("%H:%M"),
            weekday=prompts.weekdays[now.weekday()],
            tz=now.tzname() or "local",
        )
        return prompts.turn_prompt.format(
            conversation=format_turn(turn, prompts.role_labels), now_line=now_line
        )

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
        persona: str | None = None,
    ) -> ConsumeResult:
        """Run the memory agent on one turn and apply its changes exactly once.

        `provenance` and `lineage` make the turn branch-aware (see `memory.branch`);
        `scope_policy` forces the scope of new memories ("user" / "branch") or lets the agent
        choose ("auto"). After each applied turn the core context is seeded: `persona` once, the
        user's facts as `human`, the thread's first request as its goal.
        Raises ValueError for bad input and MemoryWriteFailed when nothing could be written.
        """
        turn = check_turn_messages(turn_messages)
        if not isinstance(turn_id, str) or not turn_id.strip():
            raise ValueError("turn_id must be a non-empty string")
        trace = trace if trace is not None else self.trace
        user_id = manager.user_id
        if await asyncio.to_thread(manager.has_applied, turn_id):
            if trace is not None:  # a crash after the commit left the trace rows staged
                await asyncio.to_thread(trace.mark_applied, user_id, turn_id)
            logger.info(
                "memory turn %s was already applied for %s; nothing to do", turn_id, user_id
            )
            return ConsumeResult(
                turn_id, applied=False, summary="turn already applied; nothing to do"
            )

        branch = {"provenance": provenance, "lineage": lineage, "scope_policy": scope_policy}
        for attempt in range(1, STALE_RERUNS + 2):
            toolkit, prompts, summary = await self._run_turn(
                turn, turn_id, manager, on_event, branch
            )
            if trace is not None:
                await asyncio.to_thread(trace.stage, user_id, turn_id, session_id, toolkit.staged)
            try:
                # Managers that override apply() without branch support still work without one.
                extra = {"provenance": provenance} if provenance is not None else {}
                outcome = await asyncio.to_thread(manager.apply, toolkit.changes, turn_id, **extra)
            except Exception as exc:
                if trace is not None:
                    await asyncio.to_thread(trace.discard_staged, user_id, turn_id)
                # The user changed (or deleted) a memory while the agent worked: its changes were
                # made against an old read. Run the turn again on a fresh read, a bounded number
                # of times; then fail so that the queue retries later or dead-letters the turn.
                if isinstance(exc, StaleWrite | MemoryNotFound) and attempt <= STALE_RERUNS:
                    logger.warning(
                        "memory turn %s: %s; running it again on a fresh read", turn_id, exc
                    )
                    continue
                raise MemoryWriteFailed(f"commit of turn {turn_id} refused: {exc}") from exc
            break
        if trace is not None:
            if outcome.applied:
                await asyncio.to_thread(trace.mark_applied, user_id, turn_id)
            else:
                await asyncio.to_thread(trace.discard_staged, user_id, turn_id)
        if outcome.applied:
            language = "zh" if prompts is writer_prompts("zh") else "en"
            thread_id = (provenance.thread_id if provenance is not None else "") or (
                session_id or ""
            )
            await asyncio.to_thread(
                self._seed_core_context, manager, turn, persona, language, thread_id
            )
        return ConsumeResult(
            turn_id,
            outcome.applied,
            toolkit.changes if outcome.applied else [],
            toolkit.events,
            outcome.results,
            summary,
        )

    async def _run_turn(
        self,
        turn: list[dict[str, str]],
        turn_id: str,
        manager: BaseMemoryManager,
        on_event: EventCallback | None,
        branch: dict[str, Any],
    ) -> tuple[MemoryToolkit, WriterPrompts, str]:
        """One run of the memory agent on a fresh read of the store; nothing is written."""
        user_words = " ".join(m["content"] for m in turn if m["role"] == "user")
        toolkit = make_memory_tools(
            manager,
            max_deletes=self.max_deletes,
            forget_requested=detect_forget_request(user_words),
            on_event=on_event,
            turn_id=turn_id,
            turn_text=" ".join(m["content"] for m in turn),
            **branch,
        )
        await asyncio.to_thread(toolkit.view.load)  # the snapshot the agent works on
        await asyncio.to_thread(budget.warm_index, toolkit.view)  # the tools run in the loop
        prompts = self._prompts_for(turn)
        template = prompts.update_system if toolkit.view.live else prompts.cold_start_system
        sections = self.sections if self.sections is not None else prompts.default_sections
        agent = create_agent(
            self.llm,
            toolkit.tools,
            system_prompt=template.format(sections=format_sections(sections)),
            name="memory_writer_agent",
        )
        summary = await self._run_agent(agent, self.build_user_prompt(turn, prompts), turn_id)
        return toolkit, prompts, summary

    @staticmethod
    def _seed_core_context(
        manager: BaseMemoryManager,
        turn: list[dict[str, str]],
        persona: str | None,
        language: str,
        thread_id: str,
    ) -> None:
        """After an applied turn: the persona once, `human` refreshed from the user-scope facts
        (unless edited by hand), this thread's goal from its first applied turn. The manager
        decides under its write lock, so a concurrent edit in the editor is kept."""
        try:
            manager.seed_core_context(
                persona=persona if persona is not None else default_persona(language),
                human=truncate("; ".join(user_facts(manager)), HUMAN_SEED_CHARS),
                thread_id=thread_id or None,
                goal=truncate(next((m["content"] for m in turn if m["role"] == "user"), ""),
                              GOAL_SEED_CHARS),
            )  # fmt: skip
        except Exception:  # the turn is applied; the block is seeded again next turn
            logger.exception("seeding the core context of %s failed", manager.user_id)

    async def _run_agent(self, agent: Any, user_prompt: str, turn_id: str) -> str:
        config = {"recursion_limit": 2 * self.step_limit + 1}
        try:
            async with asyncio.timeout(self.timeout_seconds):
                state = await agent.ainvoke(
                    {"messages": [HumanMessage(user_prompt)]}, config=config
                )
        except TimeoutError as exc:
            raise MemoryWriteFailed(
                f"memory agent for turn {turn_id} timed out after {self.timeout_seconds:g} s"
            ) from exc
        except GraphRecursionError as exc:
            raise MemoryWriteFailed(
                f"memory agent for turn {turn_id} did not finish within {self.step_limit} steps"
            ) from exc
        except Exception as exc:
            raise MemoryWriteFailed(
                f"memory agent for turn {turn_id} failed: {type(exc).__name__}: {exc}"
            ) from exc
        last = state["messages"][-1] if state.get("messages") else None
        return last.text if isinstance(last, AIMessage) else ""

    def consume_sync(self, *args: Any, **kwargs: Any) -> ConsumeResult:
        """`consume` (same arguments) for callers without an event loop (sync nodes, scripts)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.consume(*args, **kwargs))
        raise RuntimeError("consume_sync was called inside a running event loop; await consume()")
