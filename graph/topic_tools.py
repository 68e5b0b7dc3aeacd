"""The chat tool of topics (`memory.topics`): one person's, place's or subject's memories."""

from __future__ import annotations

from langgraph.runtime import get_runtime

from graph.context import Context
from graph.prompting import format_memories
from memory.integration import RunMemory

TOPIC_LIMIT = 20  # memories listed, as many as search_memories lists


def memories_about(topic: str) -> str:
    """Everything this user's long-term memory holds about one person, place, organisation or
    subject of their life (e.g. "my sister", "妈妈", "Tom", "Tokyo"), the most alive first.

    Use it when the user asks how someone or something is doing, or what is new with them.
    """
    run = RunMemory.open(get_runtime(Context))
    lineage = run.lineage()
    found = run.memory.get_related_memory_from(
        "", "mechanical", limit=TOPIC_LIMIT, lineage=lineage, topic=topic
    )
    if not found:  # "my dog" names no topic, and "The user's dog is called Biscuit" is about it
        found = run.memory.get_related_memory_from(
            topic, "mechanical", limit=TOPIC_LIMIT, lineage=lineage
        )
    if not found:
        return "No memory is about that topic."
    return format_memories(found, run.context.language_for(topic))
