"""Context: what the caller of one run may choose: the memory's fields and the system prompt."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory.integration import MemoryContext


@dataclass(kw_only=True, init=False)
class Context(MemoryContext):
    """Settings of one run, editable in Studio's assistant settings or passed as
    `context={...}`: the memory's (user, models, retrieval, language, scope; see
    `MemoryContext`) and this app's own. A field left out takes `GULFSTREAM_<FIELD>` from the
    server's environment when set, else its default; a field that is not here is refused.
    """

    system_prompt: str = field(
        default="",
        metadata={
            "description": "The agent's system prompt; empty = the built-in prompt of `language`. "
            "'{memories}', '{core_context}' and '{current_time}' are replaced when present (the "
            "memories and core context blocks are appended when their placeholder is missing)."
        },
    )
