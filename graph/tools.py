"""The chat agent's tools. Add your own here and list them in CHAT_TOOLS; the docstring is what
the model reads (and prompts/persona.py's TOOL_GUIDANCE a sentence of the system prompt)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langgraph.runtime import get_runtime

from graph.context import Context
from graph.prompting import format_memories
from graph.reminders import REMINDER_TOOLS
from graph.topic_tools import memories_about  # feature: topics
from memory.integration import (
    RunMemory,
    Settings,
    get_settings,
    search_conversations,  # feature: archive
)

SEARCH_LIMIT = 20
logger = logging.getLogger(__name__)


def get_current_time() -> str:
    """Return the user's current date and time with the weekday, e.g. 'Monday 2026-01-05 14:03'."""
    # The run's time in the user's zone (Context.now / Context.timezone), not the server's clock.
    return get_runtime(Context).context.moment().strftime("%A %Y-%m-%d %H:%M %z")


def search_memory(query: str) -> str:
    """Search this user's long-term memory for anything about `query` (a few keywords).

    Use it when the memories already in your instructions do not cover what you need.
    """
    run = RunMemory.open(get_runtime(Context))
    # BM25: a deeper recall mid-conversation must not cost another model call. Like
    # retrieve_memory, only what this branch of the conversation may read.
    found = run.memory.get_related_memory_from(
        query, "mechanical", limit=SEARCH_LIMIT, lineage=run.lineage()
    )
    if not found:
        return "No memory matches."
    # Like the system prompt: fenced and escaped, memory text is data, never instructions.
    return format_memories(found, run.context.language_for(query))


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
    search_conversations,  # feature: archive
    convert_units,
    *REMINDER_TOOLS,
]

# A tool of an optional feature is bound only while its feature is on: a model is never offered
# (nor told about) a tool that could only answer "turned off".
FEATURE_OF_TOOL: dict[str, Callable[[Settings], bool]] = {
    **dict.fromkeys(
        (tool.__name__ for tool in REMINDER_TOOLS), lambda settings: settings.reminders
    ),
    "search_conversations": lambda settings: settings.archive_on,  # feature: archive
    "memories_about": lambda settings: settings.topics,  # feature: topics
}


def chat_tools(settings: Settings | None = None) -> list[Callable[..., Any]]:
    """The tools bound in a run: CHAT_TOOLS without those of features turned off."""
    settings = settings or get_settings()
    return [
        tool for tool in CHAT_TOOLS if FEATURE_OF_TOOL.get(tool.__name__, lambda _: True)(settings)
    ]
