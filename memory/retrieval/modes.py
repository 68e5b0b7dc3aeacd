"""RetrievalMode: how the memories that go into the prompt are picked."""

from __future__ import annotations

from enum import StrEnum


class RetrievalMode(StrEnum):
    """`llm` (a model reads every memory), `mechanical` (BM25, no model) or `hybrid` (BM25
    shortlist, then a model)."""

    LLM = "llm"
    MECHANICAL = "mechanical"
    HYBRID = "hybrid"

    @classmethod
    def parse(cls, value: RetrievalMode | str) -> RetrievalMode:
        """Accept the enum or its string value in any case; raise ValueError listing the choices."""
        if isinstance(value, RetrievalMode):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            choices = ", ".join(mode.value for mode in cls)
            raise ValueError(f"retrieval mode {value!r} is not one of {choices}") from None
