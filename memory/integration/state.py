"""MemoryState: the chat graph's state as the memory nodes read and write it: the conversation, the
memories related to this turn, its hand-off, its cost and the running summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph import add_messages


@dataclass
class InputState:
    """What a caller sends: only messages (e.g. `{"messages": [{"role": "user", ...}]}`)."""

    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class MemoryState(InputState):
    """The state the memory nodes read and write (an app's state extends it). Replaced on every
    turn:

    - `related_memories`: `[{"id", "description", "theme", "created_time",
      "latest_update_time"}]`, most relevant first, only those this branch of the conversation
      may read;
    - `core_context`: the user's core context block (`{}` until the first turn was written);
    - `memory_write`: what became of this turn's memory write, `{"turn_id", "mode", "status",
      "error", "admission"}` with status `journaled` (local queue: durable, written soon),
      `scheduled` (server: kept in the store, a memory_writer run is queued), `written`
      (inline), `private` (off the record: neither archived nor written), `taken back` (the
      user asked to forget what they just said: neither this turn nor the one before is
      kept), `skipped` (no user
      message, or nothing worth keeping: `admission` says why) or `failed` (the hand-off
      failed: `error` says why, and whether the server keeps the turn for a later run; the
      reply itself is fine). `admission` is
      `{"score", "decision", "reasons"}` (docs/ADMISSION.md) when the turn was scored.
    - `cost`: this run's model calls and tokens by purpose, `{"chat" | "retrieval" |
      "summary": {"calls", "input_tokens", "output_tokens"}}` (the background writer's are
      counted in its own run).
    - `user_id`: whose conversation this is (the run's user; the archive is rebuilt with it).
    - `said_recently`: what the user said lately that the memory writer has not filed yet,
      `[{"turn_id", "thread_id", "text", "said_at"}]`, best first: the waiting turns of their other
      threads this branch may read (memory/integration/writing/said_recently.py; never this
      thread's own).
    - `standing_instructions`: the user's standing instructions for replies (how to answer or
      address them), `[{"id", "description", "theme", "created_time", "latest_update_time"}]`,
      newest first and bounded: in every reply's prompt whatever the turn is about
      (memory/retrieval/standing.py); `related_memories` leaves them out.
    - `private`: the conversation is off the record (the run's `remember` was false, or the
      user asked that it not be remembered): from that turn on, for the rest of the thread,
      nothing of it is archived, handed to the writer or noted in the recall log; the thread's
      checkpoints are the only place it stays.
    - `take_back`: what this turn takes back out of memory, set by the read node: "thread" when
      the thread has just turned private (its earlier turns are erased for good), "turn" when
      the user asked to forget what they just said (the previous turn is, and this one is not
      kept), else "" (memory/integration/writing/take_back.py).
    - `coming_up`: what the memories plan for the next days (`GULFSTREAM_COMING_UP_DAYS`),
      soonest first, a few at most: the related memories' shape plus `day` (YYYY-MM-DD), from
      the run's `now` in the user's zone; a plan whose day passed is not in it.
    - `summary`: the running summary of the messages compaction took out of `messages`,
      `{"text", "messages", "through", "updated_at"}` (memory/integration/compaction.py); the
      messages themselves stay in the conversation archive and in the earlier checkpoints.
    - `compaction`: what the last compaction did, `{"status", "action", "reason", "failures",
      "retry_after", "error", "prompt_tokens", "prompt_tokens_before", "budget", ...}`:
      `action` is `compacted`, `failed`, `cooldown` or `nothing to compact`; `prompt_tokens`
      the size of the prompt the agent sends after it; `status` the action, or `over_budget`
      when that prompt still exceeds the budget (`reason` says why).
    """

    related_memories: list[dict[str, Any]] = field(default_factory=list)
    core_context: dict[str, str] = field(default_factory=dict)
    memory_write: dict[str, Any] = field(default_factory=dict)
    cost: dict[str, dict[str, int]] = field(default_factory=dict)
    user_id: str = ""
    said_recently: list[dict[str, Any]] = field(default_factory=list)
    standing_instructions: list[dict[str, Any]] = field(default_factory=list)
    private: bool = False
    take_back: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    coming_up: list[dict[str, Any]] = field(default_factory=list)
    compaction: dict[str, Any] = field(default_factory=dict)
