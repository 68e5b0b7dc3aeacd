"""Metering: `with metered(meter, "writer"):` counts every model call made inside the block."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import LLMResult
from langchain_core.tracers.context import register_configure_hook

from memory.usage.counts import UsageMeter


class UsageCallback(BaseCallbackHandler):
    """Counts the model calls of one purpose into a meter: the provider's token counts when it
    reports them, else an estimate (about four characters a token) of what was sent and said."""

    run_inline = True  # cheap and thread-safe: no hop to an executor in async runs

    def __init__(self, meter: UsageMeter, purpose: str) -> None:
        self.meter, self.purpose = meter, purpose
        self._sent: dict[UUID, int] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        with self._lock:
            self._sent[run_id] = count_tokens_approximately(messages[0]) if messages else 0

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            sent = self._sent.pop(run_id, 0)
        reported = _reported(response)
        if reported is not None:
            self.meter.record(self.purpose, *reported)
            return
        said = [g.message for gs in response.generations for g in gs if hasattr(g, "message")]
        self.meter.record(self.purpose, sent, count_tokens_approximately(said) if said else 0)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:  # the call was made (and may be billed) even though it failed
            sent = self._sent.pop(run_id, 0)
        self.meter.record(self.purpose, sent, 0)


def _reported(response: LLMResult) -> tuple[int, int] | None:
    for generations in response.generations:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    if token_usage:
        prompt, completion = token_usage.get("prompt_tokens"), token_usage.get("completion_tokens")
        return int(prompt or 0), int(completion or 0)
    return None


_active: ContextVar[UsageCallback | None] = ContextVar("gulfstream_usage", default=None)
# Every runnable configured while `_active` is set gets the callback (nested runs too: the
# memory agent's model calls inside its graph), without touching the run's own callbacks.
register_configure_hook(_active, inheritable=True)


@contextmanager
def metered(meter: UsageMeter, purpose: str) -> Iterator[UsageMeter]:
    """Count into `meter`, as `purpose`, the model calls made in this block (and the tasks it
    starts), on any LangChain chat model."""
    token = _active.set(UsageCallback(meter, purpose))
    try:
        yield meter
    finally:
        _active.reset(token)
