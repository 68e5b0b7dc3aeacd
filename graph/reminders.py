"""Reminders on LangGraph's own scheduler: "remind me on Friday at 8 to call my mom" is kept in the
user's memory (`memory.reminders`, tied to the memories of the turn that set it) and, on the
server, a one-shot cron of the user's thread (the server's crons API: no scheduler of our own)
whose run says it in that thread at its time; `make chat` says it at the first prompt after it
is due. A reminder whose memory was forgotten is never said; an erase removes it. Off with
GULFSTREAM_REMINDERS=off, which also drops those already set."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from datetime import UTC, timedelta
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.config import get_config
from langgraph.prebuilt import InjectedState
from langgraph.runtime import get_runtime

from graph.context import Context
from graph.state import State
from memory.integration import RunMemory, get_settings
from prompts.reminders import DUE, NO_THREAD, NONE_SET, NOT_FOUND, SET, UNREAD_WHEN

# The cron's metadata key: the id of the reminder it brings (the text stays in the memory).
REMINDER_KEY = "gulfstream_reminder"


def _client() -> Any:
    """The server's own API, in process (no URL): only a run on `langgraph dev` or the Platform
    has one; `make chat` says its reminders itself."""
    if "langgraph_api" not in sys.modules:
        return None
    from langgraph_sdk import get_client

    return get_client()


async def _run_memory() -> RunMemory:
    """The run's memory, opened off the event loop (opening reads files or the database)."""
    return await asyncio.to_thread(RunMemory.open, get_runtime(Context))


def _assistant() -> str:
    config = get_config()
    configurable, metadata = config.get("configurable", {}), config.get("metadata", {})
    return str(configurable.get("assistant_id") or metadata.get("assistant_id") or "agent")


def _turn_id(run: RunMemory, state: State) -> str:
    """The turn setting the reminder, as the writer will name the memories it writes from it."""
    asked = next((m for m in reversed(state.messages) if isinstance(m, HumanMessage)), None)
    return f"{run.thread_id}:{asked.id}" if asked is not None and asked.id else ""


async def set_reminder(what: str, when: str, state: Annotated[State, InjectedState]) -> str:
    """Remind the user of `what` (e.g. "call your mom") at `when` (e.g. "in 10 minutes",
    "Friday at 8", "tomorrow at 7:30pm", "明天下午3点"): at that time this conversation gets the
    reminder. Use it when the user asks to be reminded of something."""
    run = await _run_memory()
    due = run.context.moment_named(when)
    if due is None:
        return UNREAD_WHEN.format(when=when)
    now = run.context.moment()
    # Crons fire on whole minutes: the first minute at or after the time asked (and not now).
    due = max(due, now + timedelta(minutes=1))
    due = (due + timedelta(seconds=59)).replace(second=0, microsecond=0)
    client = _client()
    if client is not None and not run.thread_id:
        return NO_THREAD  # a threadless run on the server: no thread for the cron to say it in
    kept = await asyncio.to_thread(
        run.memory.reminders.add, run.thread_id, _turn_id(run, state), what, due, now
    )
    if client is not None:
        at = due.astimezone(UTC)  # the schedule in UTC: the user's zone is already in `due`
        await client.crons.create_for_thread(
            run.thread_id, _assistant(),
            schedule=f"{at.minute} {at.hour} {at.day} {at.month} *", timezone="UTC",
            input={"reminder": kept.id}, metadata={REMINDER_KEY: kept.id},
            context={"user_id": run.user_id, "timezone": run.context.timezone},
            # Once: the run it starts deletes it (`say_reminder`). Not `end_time`: the in-memory
            # runtime of `langgraph dev` 0.16 keeps it as text and its scheduler then fails.
            multitask_strategy="enqueue",
        )  # fmt: skip
    return SET.format(what=kept.what, due=f"{due:%A %Y-%m-%d %H:%M}", id=kept.id)


def list_reminders() -> str:
    """List the reminders set in this conversation that have not come yet, with their ids."""
    run = RunMemory.open(get_runtime(Context))
    pending = run.memory.reminders.pending(run.thread_id)
    return "\n".join(f"- [{r.id}] {r.due_at:%A %Y-%m-%d %H:%M}: {r.what}" for r in pending) or (
        NONE_SET
    )


async def cancel_reminder(reminder_id: str) -> str:
    """Cancel the reminder with this id (the 8 characters `list_reminders` shows)."""
    run = await _run_memory()
    gone = await asyncio.to_thread(run.memory.reminders.cancel, reminder_id)
    if gone is None:
        return NOT_FOUND.format(id=reminder_id)
    await _drop_crons(gone.thread_id, {gone.id})
    return f"Cancelled: {gone.what}"


async def _drop_crons(thread_id: str, ids: set[str] | None) -> None:
    """Delete this thread's reminder crons bringing `ids` (every one: None)."""
    client = _client()
    if client is None or not thread_id:
        return
    for cron in await client.crons.search(thread_id=thread_id, limit=100):
        brings = (cron.get("metadata") or {}).get(REMINDER_KEY)
        if brings is not None and (ids is None or brings in ids):
            await client.crons.delete(cron["cron_id"])


async def say_reminder(state: State) -> dict[str, Any]:
    """The scheduled run's only node: the reminder it brings, said in the thread, unless it was
    cancelled, forgotten or erased (then nothing is said); its cron is deleted either way (a
    cron would come back next year). With reminders off, every reminder of the user goes."""
    run = await _run_memory()
    if not get_settings().reminders:
        await asyncio.to_thread(run.memory.reminders.clear)
        await _drop_crons(run.thread_id, None)
        return {"reminder": ""}
    reminder = await asyncio.to_thread(run.memory.reminders.take, state.reminder)
    await _drop_crons(run.thread_id, {state.reminder})
    said = [AIMessage(DUE.format(what=reminder.what))] if reminder is not None else []
    return {"messages": said, "reminder": ""}


def route_start(state: State) -> str:
    """A scheduled reminder's run says it; any other run is a turn of conversation."""
    return "say_reminder" if state.reminder else "retrieve_memory"


REMINDER_TOOLS: list[Callable[..., Any]] = [set_reminder, list_reminders, cancel_reminder]
