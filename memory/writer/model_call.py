"""One awaited piece of the writer model's work: within a time limit, logged while slow, its
outcome counted by the model's circuit breaker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from memory.writer.breaker import CircuitBreaker

logger = logging.getLogger("memory.writer.consumer")  # the consumer's log, as before


class ModelCallFailed(Exception):
    """The model failed or timed out; the message says which, for the turn's error."""


class RoundLimitReached(Exception):
    """The agent used every tool round it had (not the model's fault: no breaker count)."""


async def guarded_call(
    work: Coroutine[Any, Any, Any],
    turn_id: str,
    breaker: CircuitBreaker,
    timeout: float,
    slow_seconds: float,
) -> Any:
    """`await work` within `timeout` seconds, warning every `slow_seconds` while it waits."""
    from langgraph.errors import GraphRecursionError

    watchdog = asyncio.create_task(_tell_while_slow(turn_id, timeout, slow_seconds))
    try:
        async with asyncio.timeout(timeout):
            result = await work
    except TimeoutError as exc:
        breaker.record(ok=False)
        raise ModelCallFailed(
            f"memory agent for turn {turn_id} timed out after {timeout:.0f} s"
        ) from exc
    except GraphRecursionError as exc:
        raise RoundLimitReached(str(exc)) from exc
    except Exception as exc:
        breaker.record(ok=False)
        raise ModelCallFailed(
            f"memory agent for turn {turn_id} failed: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        watchdog.cancel()
    if breaker.record(ok=True):
        logger.info("the memory writer model answers again; writes resume")
    return result


async def _tell_while_slow(turn_id: str, timeout: float, every: float) -> None:
    waited = 0.0
    while True:
        await asyncio.sleep(every)
        waited += every
        logger.warning(
            "memory turn %s: still waiting for the writer model after %.0f s (gives up at %.0f s)",
            turn_id,
            waited,
            timeout,
        )
