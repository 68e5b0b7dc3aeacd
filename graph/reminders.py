"""Reminders on LangGraph's own scheduler: "remind me on Friday at 8 to call my mom" becomes a
one-shot cron on the user's thread (the server's crons API: no scheduler of our own), whose run
says the reminder in that thread at its time; without a server (make chat) a local file the chat
reads at each prompt. Off with GULFSTREAM_REMINDERS=off."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.config import get_config
from langgraph.runtime import get_runtime

from graph import local_reminders as local
from graph.context import Context
from graph.state import State
from prompts.reminders import DUE, NO_SERVER, NONE_SET, NOT_FOUND, SET, UNREAD_WHEN

# The cron's metadata key: what marks a cron of this thread as one of the user's reminders.
REMINDER_KEY = "gulfstream_reminder"


def _client() -> Any:
    """The server's own API, in process (no URL): only a run on `langgraph dev` or the Platform
    has one; the CLI has no scheduler."""
    import sys

    if "langgraph_api" not in sys.modules:
        return None
    from langgraph_sdk import get_client

    return get_client()


def _thread_and_assistant() -> tuple[str, str]:
    config = get_config()
    configurable = config.get("configurable", {})
    metadata = config.get("metadata", {})
    assistant = configurable.get("assistant_id") or metadata.get("assistant_id") or "agent"
    return str(configurable.get("thread_id") or ""), str(assistant)


async def set_reminder(what: str, when: str) -> str:
    """Remind the user of `what` (e.g. "call your mom") at `when` (e.g. "in 10 minutes",
    "Friday at 8", "tomorrow at 7:30pm", "明天下午3点"): at that time this conversation gets the
    reminder. Use it when the user asks to be reminded of something."""
    context = get_runtime(Context).context
    due = context.moment_named(when)
    if due is None:
        return UNREAD_WHEN.format(when=when)
    now = context.moment()
    if due <= now:
        due = now + timedelta(minutes=1)
    # Crons fire on whole minutes: the first minute at or after the time asked.
    due = (due + timedelta(seconds=59)).replace(second=0, microsecond=0)
    client = _client()
    thread_id, assistant_id = _thread_and_assistant()
    if client is None:  # make chat: the chat shows it at the first prompt after it is due
        kept = await asyncio.to_thread(local.add, context.user_id, thread_id, what, due)
        return SET.format(what=what, due=f"{due:%A %Y-%m-%d %H:%M}", id=kept.id)
    if not thread_id:
        return NO_SERVER
    at = due.astimezone(UTC)  # the schedule in UTC: the user's zone is already in `due`
    cron = await client.crons.create_for_thread(
        thread_id, assistant_id,
        schedule=f"{at.minute} {at.hour} {at.day} {at.month} *", timezone="UTC",
        input={"reminder": what},
        metadata={REMINDER_KEY: what, "due": due.isoformat()},
        context={"user_id": context.user_id},
        # Once: the run it starts deletes it (`say_reminder`). Not `end_time`: the in-memory
        # runtime of `langgraph dev` 0.16 keeps it as text and its scheduler then fails.
        multitask_strategy="enqueue",
    )  # fmt: skip
    return SET.format(what=what, due=f"{due:%A %Y-%m-%d %H:%M}", id=str(cron["cron_id"])[:8])


async def list_reminders() -> str:
    """List the reminders set in this conversation that have not come yet, with their ids."""
    client = _client()
    thread_id, _ = _thread_and_assistant()
    if client is None:
        user = get_runtime(Context).context.user_id
        mine = await asyncio.to_thread(local.listed, user, thread_id)
        return "\n".join(f"- [{r.id}] {r.due}: {r.what}" for r in mine) or NONE_SET
    if not thread_id:
        return NO_SERVER
    crons = await client.crons.search(thread_id=thread_id, limit=100)
    lines = [
        f"- [{str(cron['cron_id'])[:8]}] {cron['metadata'].get('due', '')}: "
        f"{cron['metadata'][REMINDER_KEY]}"
        for cron in crons
        if REMINDER_KEY in (cron.get("metadata") or {})
    ]
    return "\n".join(lines) if lines else NONE_SET


async def cancel_reminder(reminder_id: str) -> str:
    """Cancel the reminder with this id (the 8 characters `list_reminders` shows)."""
    client = _client()
    thread_id, _ = _thread_and_assistant()
    if client is None:
        user = get_runtime(Context).context.user_id
        gone = await asyncio.to_thread(local.cancel, user, reminder_id)
        return f"Cancelled: {gone.what}" if gone else NOT_FOUND.format(id=reminder_id)
    if not thread_id:
        return NO_SERVER
    for cron in await client.crons.search(thread_id=thread_id, limit=100):
        metadata = cron.get("metadata") or {}
        if REMINDER_KEY in metadata and str(cron["cron_id"]).startswith(reminder_id.strip()):
            await client.crons.delete(cron["cron_id"])
            return f"Cancelled: {metadata[REMINDER_KEY]}"
    return NOT_FOUND.format(id=reminder_id)


async def say_reminder(state: State) -> dict[str, Any]:
    """The scheduled run's only node: the reminder, said in the thread; the crons of this
    thread's reminders that have come are deleted (a cron would come back next year)."""
    client = _client()
    thread_id, _ = _thread_and_assistant()
    if client is not None and thread_id:
        now = datetime.now(UTC)
        for cron in await client.crons.search(thread_id=thread_id, limit=100):
            metadata = cron.get("metadata") or {}
            due = _parsed(str(metadata.get("due", "")))
            if REMINDER_KEY in metadata and due is not None and due <= now + timedelta(minutes=1):
                await client.crons.delete(cron["cron_id"])
    return {"messages": [AIMessage(DUE.format(what=state.reminder))], "reminder": ""}


def _parsed(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def route_start(state: State) -> str:
    """A scheduled reminder's run says it; any other run is a turn of conversation."""
    return "say_reminder" if state.reminder else "retrieve_memory"


REMINDER_TOOLS: list[Callable[..., Any]] = [set_reminder, list_reminders, cancel_reminder]
