"""The writer's circuit breaker: open after N failures in a row, one probe after the pause."""

from __future__ import annotations

import pytest

from memory.writer.breaker import CircuitBreaker, WriterPaused


def test_opens_after_consecutive_failures_and_closes_on_a_successful_probe() -> None:
    now = [0.0]
    breaker = CircuitBreaker("openai/x", failures=3, pause_seconds=60, clock=lambda: now[0])
    for _ in range(2):
        breaker.check()
        breaker.record(ok=False)
    breaker.record(ok=True)  # a success in between resets the count
    for _ in range(3):
        breaker.check()
        breaker.record(ok=False)
    assert breaker.is_open
    with pytest.raises(WriterPaused, match="paused") as paused:
        breaker.check()
    assert paused.value.dead_letter
    now[0] = 59.0
    with pytest.raises(WriterPaused):
        breaker.check()
    now[0] = 61.0
    breaker.check()  # the probe goes through...
    with pytest.raises(WriterPaused):
        breaker.check()  # ...alone: others wait for its outcome
    assert breaker.record(ok=True)  # it worked: closed again, and says so
    assert not breaker.is_open
    breaker.check()


def test_a_failed_probe_opens_it_again() -> None:
    now = [0.0]
    breaker = CircuitBreaker("openai/x", failures=1, pause_seconds=10, clock=lambda: now[0])
    breaker.record(ok=False)
    now[0] = 11.0
    breaker.check()
    breaker.record(ok=False)
    with pytest.raises(WriterPaused):
        breaker.check()
    now[0] = 22.0
    breaker.check()
