"""CircuitBreaker: stop calling a writer model that keeps failing, then try it again later."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

DEFAULT_FAILURES = 5
DEFAULT_PAUSE_SECONDS = 60.0


class WriterPaused(Exception):
    """The writer model failed too often in a row; turns are dead-lettered without calling it
    until a probe after the pause succeeds."""

    dead_letter = True  # the queue dead-letters the turn at once instead of retrying it


class CircuitBreaker:
    """Closed: calls go through. After `failures` consecutive failures: open for
    `pause_seconds` (`check` raises WriterPaused). Then one probe call goes through: success
    closes it, failure opens it again."""

    def __init__(
        self,
        name: str,
        failures: int = DEFAULT_FAILURES,
        pause_seconds: float = DEFAULT_PAUSE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.failures = failures
        self.pause_seconds = pause_seconds
        self.clock = clock
        self.consecutive = 0
        self.opened_at: float | None = None
        self._probing = False
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None

    def check(self) -> None:
        """Raise WriterPaused while open; let one probe through once the pause is over."""
        with self._lock:
            if self.opened_at is None:
                return
            waited = self.clock() - self.opened_at
            if waited >= self.pause_seconds and not self._probing:
                self._probing = True
                return
            raise WriterPaused(
                f"the memory writer model {self.name!r} failed {self.consecutive} times in a row; "
                f"writes are paused (retried {max(0.0, self.pause_seconds - waited):.0f} s after "
                "the last failure); this turn waits in the dead-letter list"
            )

    def record(self, ok: bool) -> bool:
        """Count a call's outcome; True when this success closed an open breaker."""
        with self._lock:
            was_open = self.opened_at is not None
            self._probing = False
            if ok:
                self.consecutive, self.opened_at = 0, None
                return was_open
            self.consecutive += 1
            if self.consecutive >= self.failures:
                self.opened_at = self.clock()
            return False


_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(name: str) -> CircuitBreaker:
    """The process's breaker for one writer model (one per provider/model name)."""
    with _breakers_lock:
        breaker = _breakers.get(name)
        if breaker is None:
            breaker = _breakers[name] = CircuitBreaker(name)
        return breaker
