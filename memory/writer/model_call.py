"""One awaited piece of the writer model's work: within a time limit, logged while slow, its
outcome counted by the model's circuit breaker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from memory.writer.breaker import CircuitBreaker

logger = logging.getLogger("memory.writer.consumer")  # the consumer's log, as before


class ModelCallFailed(Exception):
    """The model failed or timed out; the message says which, for the turn's error."""


class ModelCallTimedOut(ModelCallFailed):
    """The model did not answer within its time limit."""


class RoundLimitReached(Exception):
    """The agent used every tool round it had (not the model's fault: no breaker count)."""


async def guarded_call(
    work: Coroutine[Any, Any, Any],
    breaker: CircuitBreaker,
    timeout: float,
    slow_seconds: float,
    while_slow: Callable[[float], None],
) -> Any:
    """`await work` within `timeout` seconds, calling `while_slow(seconds waited)` every
    `slow_seconds` while it waits. The caller names the work in its own messages."""
    from langgraph.errors import GraphRecursionError

    watchdog = asyncio.create_task(_tell_while_slow(while_slow, slow_seconds))
    try:
        async with asyncio.timeout(timeout):
            result = await work
    except TimeoutError as exc:
        breaker.record(ok=False)
        raise ModelCallTimedOut(f"timed out after {timeout:.0f} s") from exc
    except GraphRecursionError as exc:
        raise RoundLimitReached(str(exc)) from exc
    except Exception as exc:
        breaker.record(ok=False)
        raise ModelCallFailed(f"failed: {type(exc).__name__}: {exc}") from exc
    finally:
        watchdog.cancel()
    if breaker.record(ok=True):
        logger.info("the memory writer model answers again; writes resume")
    return result


async def _tell_while_slow(tell: Callable[[float], None], every: float) -> None:
    waited = 0.0
    while True:
        await asyncio.sleep(every)
        waited += every
        tell(waited)
