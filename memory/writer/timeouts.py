"""How long a writer model call may take: scaled with the prompt, so that a slow healthy model
(a small one on a few CPU cores reads 100-200 tokens/s) is not cut off while one that sends
nothing still is."""

from __future__ import annotations

import threading
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
    slowdown: float = 1.0,
) -> float:
    """`base_seconds` (what any call may take) plus the time a slow healthy model needs to read
    `tokens_in` at `rate` tokens/s and write `tokens_out` (the generation speed scales with it),
    times `slowdown` (`Pace`: how much slower the endpoint has been lately)."""
    generation = GENERATION_TOKENS_PER_SECOND * rate / PREFILL_TOKENS_PER_SECOND
    return base_seconds + (tokens_in / rate + tokens_out / generation) * slowdown


class Pace:
    """How much slower than the configured rates each writer model has answered lately (an
    average over its last calls), so that the next limit follows the endpoint's measured speed:
    a model on a loaded machine is waited for, not cut off and its turn's facts lost."""

    def __init__(self) -> None:
        self._slowdown: dict[str, float] = {}
        self._lock = threading.Lock()

    def record(self, model_key: str, seconds: float, tokens_in: int, tokens_out: int,
               rate: float = PREFILL_TOKENS_PER_SECOND) -> None:  # fmt: skip
        """One answered call: `seconds` for `tokens_in` read and `tokens_out` written."""
        expected = scaled_timeout(0.0, tokens_in, tokens_out, rate=rate)
        if expected < MIN_MEASURED_SECONDS:  # too short to tell a slow model from latency
            return
        with self._lock:
            before = self._slowdown.get(model_key, 1.0)
            self._slowdown[model_key] = (before + seconds / expected) / 2

    def record_timeout(self, model_key: str) -> None:
        """A call that was cut off: the model is slower than its limit allowed, by how much is
        unknown, so the next limit doubles its reading and writing time (up to `MAX_SLOWDOWN`).
        Without this, a loaded machine's first call (no speed measured yet) times out, and so
        does every retry of the turn under the same limit, until it is dead-lettered."""
        with self._lock:
            before = max(self._slowdown.get(model_key, 0.0), 1.0 / SAFETY_MARGIN)
            self._slowdown[model_key] = min(before * 2, MAX_SLOWDOWN)

    def slowdown(self, model_key: str) -> float:
        """The factor the model's reading and writing time is multiplied by (1: as configured)."""
        with self._lock:
            return max(1.0, SAFETY_MARGIN * self._slowdown.get(model_key, 0.0))

    def clear(self) -> None:
        with self._lock:
            self._slowdown.clear()


SAFETY_MARGIN = 1.5  # a call may be this much slower than the last ones were
MAX_SLOWDOWN = 16.0  # after repeated time-outs: a hung model is still given up on
MIN_MEASURED_SECONDS = 1.0
pace = Pace()  # one per process, like the breakers
