"""Memory text as inert data inside a prompt's fence: one line, no markup that could close it."""

from __future__ import annotations


def escape_data(text: object) -> str:
    """`text` on one line with `&`, `<` and `>` escaped, so that a memory (or a query) can never
    close the `<memories>` fence early or open a tag of its own. Used by every prompt that shows
    memories: retrieval (memory.retrieval.llm) and the chat's system prompt (graph.prompting)."""
    flat = " ".join(str(text).split())
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
