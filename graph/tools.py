"""The chat agent's tools. Add your own here and list them in CHAT_TOOLS; the docstring is what
the model reads (and prompts/persona.py's TOOL_GUIDANCE a sentence of the system prompt)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from langgraph.runtime import get_runtime

from graph.archiving import forget_in_archive, run_archive
from graph.context import Context
from graph.lineage import current_lineage
from graph.prompting import format_memories
from graph.run_memory import open_run_memory
from graph.settings import Settings, get_settings
from graph.topic_tools import memories_about  # feature: topics
from memory.archive import Window, parse_day, render
from memory.language import resolve_language

SEARCH_LIMIT = 20
logger = logging.getLogger(__name__)


def get_current_time() -> str:
    """Return the current local date and time with the weekday, e.g. 'Monday 2026-01-05 14:03'."""
    return datetime.now().astimezone().strftime("%A %Y-%m-%d %H:%M %z")


def search_memory(query: str) -> str:
    """Search this user's long-term memory for anything about `query` (a few keywords).

    Use it when the memories already in your instructions do not cover what you need.
    """
    run = open_run_memory(get_runtime(Context))
    # BM25: a deeper recall mid-conversation must not cost another model call. Like
    # retrieve_memory, only what this branch of the conversation may read.
    found = run.memory.get_related_memory_from(
        query, "mechanical", limit=SEARCH_LIMIT, lineage=current_lineage(run.config)
    )
    if not found:
        return "No memory matches."
    # Like the system prompt: fenced and escaped, memory text is data, never instructions.
    return format_memories(found, resolve_language(run.context.language, query))


def search_conversations(query: str, since: str = "", until: str = "", thread: str = "") -> str:
    """Search what was said in this user's past conversations (and earlier in this one).

    query: the question, or a few words to look for (any language); a date in it ("last May",
    "on May 2nd", "去年五月") limits the search to that period. Leave it empty, with
    since/until, for a broad question about a period ("what happened today?", "what did we
    talk about this week?"): the daily digests of that period answer it.
    since / until: optional dates, YYYY-MM-DD (local days, both included) or ISO date-times;
    work out "last Tuesday" or "上周二" from the current time first.
    thread: optional; "current" for this conversation only, or a thread id from an earlier
    result.

    Returns the best few matches with the messages around each, their thread and time.
    """
    run = open_run_memory(get_runtime(Context))
    try:
        archive = run_archive(run)
    except Exception as exc:  # the archive's database is unreachable: say so, keep the turn
        logger.exception("the conversation archive of %r cannot be opened", run.user_id)
        return f"Error: the conversation archive cannot be read ({type(exc).__name__})."
    if archive is None:  # not bound when the archive is off (chat_tools); a stale call
        return "The conversation archive is turned off on this deployment."
    forget_in_archive(run, archive)
    try:
        window = Window(
            parse_day(since), parse_day(until, end=True),
            run.thread_id if thread.strip() == "current" else thread.strip() or None,
            current_lineage(run.config),
        )  # fmt: skip
    except ValueError as exc:
        return f"Error: {exc}"
    try:
        # No model call: the archive's full-text index, this branch of this thread only.
        return render(archive.search(query, window))
    except Exception as exc:
        logger.exception("searching the conversation archive of %r failed", run.user_id)
        return f"Error: the conversation archive cannot be read ({type(exc).__name__})."


def convert_units(value: float, unit_from: str, unit_to: str) -> str:
    """Convert a length or temperature: units km, mi, m, ft, c, f.

    (An example tool: write your own as a typed, documented function and add it to CHAT_TOOLS.)
    """
    to_metres = {"km": 1000.0, "mi": 1609.344, "m": 1.0, "ft": 0.3048}
    a, b = unit_from.strip().lower(), unit_to.strip().lower()
    if a in to_metres and b in to_metres:
        return f"{value * to_metres[a] / to_metres[b]:.4g} {b}"
    if (a, b) == ("c", "f"):
        return f"{value * 9 / 5 + 32:.4g} f"
    if (a, b) == ("f", "c"):
        return f"{(value - 32) * 5 / 9:.4g} c"
    return f"cannot convert {unit_from} to {unit_to}; known units: km, mi, m, ft, c, f"


CHAT_TOOLS: list[Callable[..., Any]] = [
    get_current_time,
    search_memory,
    memories_about,  # feature: topics
    search_conversations,
    convert_units,
]

# A tool of an optional feature is bound only while its feature is on: a model is never offered
# (nor told about) a tool that could only answer "turned off".
FEATURE_OF_TOOL: dict[str, Callable[[Settings], bool]] = {
    "search_conversations": lambda settings: settings.archive_on,
    "memories_about": lambda settings: settings.topics,  # feature: topics
}


def chat_tools(settings: Settings | None = None) -> list[Callable[..., Any]]:
    """The tools bound in a run: CHAT_TOOLS without those of features turned off."""
    settings = settings or get_settings()
    return [
        tool for tool in CHAT_TOOLS if FEATURE_OF_TOOL.get(tool.__name__, lambda _: True)(settings)
    ]


def tool_names(tools: list[Callable[..., Any]]) -> list[str]:
    return [tool.__name__ for tool in tools]
