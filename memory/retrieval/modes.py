"""RetrievalMode: how the memories that go into the prompt are picked."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

# What a retriever that needs a model does when the model fails: fall back to BM25, or nothing.
OnFailure = Literal["mechanical", "empty"]


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
