"""Text from users and memories as inert data inside a prompt: escaped lines and safe fences."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence


def escape_data(text: object) -> str:
    """`text` on one line with `&`, `<` and `>` escaped, so that a memory (or a query) can never
    close the `<memories>` fence early or open a tag of its own. Every prompt that shows
    memories uses it: retrieval (memory.retrieval.llm) and the chat's system prompt."""
    flat = " ".join(str(text).split())
    return flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fence(text: str) -> str:
    """Wrap text in a backtick fence longer than any backtick run inside it, so it cannot escape."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{text}\n{marks}"


def format_messages(messages: Sequence[Mapping[str, str]], labels: Mapping[str, str]) -> str:
    """Each `{role, content}` message as a fenced block under its role label."""
    return "\n\n".join(
        f"{labels.get(m['role'], m['role'])}:\n{fence(m['content'])}" for m in messages
    )
