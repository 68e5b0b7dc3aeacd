"""How long a writer model call may take: scaled with the prompt, so that a slow healthy model
(a small one on a few CPU cores reads 100-200 tokens/s) is not cut off while one that sends
nothing still is."""

from __future__ import annotations

from typing import Any

# Lower bounds of a working model: a 1.5B model on 2 CPU cores reads 120-170 prompt tokens/s
# and writes 30-37 tokens/s; a hosted model is ten times faster and never near these limits.
PREFILL_TOKENS_PER_SECOND = 80.0
GENERATION_TOKENS_PER_SECOND = 15.0


def prompt_tokens(messages: list[Any]) -> int:
    """An estimate of the prompt's tokens (no tokenizer download: see DESIGN.md)."""
    from langchain_core.messages.utils import count_tokens_approximately

    return int(count_tokens_approximately(messages))


def scaled_timeout(
    base_seconds: float,
    tokens_in: int,
    tokens_out: int = 0,
    *,
    rate: float = PREFILL_TOKENS_PER_SECOND,
) -> float:
    """`base_seconds` (what any call may take) plus the time a slow healthy model needs to read
    `tokens_in` at `rate` tokens/s and write `tokens_out` (the generation speed scales with it)."""
    generation = GENERATION_TOKENS_PER_SECOND * rate / PREFILL_TOKENS_PER_SECOND
    return base_seconds + tokens_in / rate + tokens_out / generation
