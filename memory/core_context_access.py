"""CoreContextAccess: get, set and seed the core context block over a manager's storage."""

from __future__ import annotations

from collections.abc import Mapping

from memory.core_context import (
    HUMAN_SOURCE,
    StoredChanges,
    core_context_view,
    goal_key,
    seed_changes,
)


class CoreContextAccess:
    """The public core context calls; the manager supplies the storage (`_read_core_context`,
    `_update_core_context`, which runs under its write lock), `_check_writable` and
    `_notify_changed`."""

    def _read_core_context(self) -> dict[str, str]:
        raise NotImplementedError

    def _update_core_context(self, changes: StoredChanges) -> dict[str, str]:
        raise NotImplementedError

    def _check_writable(self) -> None:
        raise NotImplementedError

    def _notify_changed(self) -> None:
        raise NotImplementedError

    def get_core_context(self, thread_id: str | None = None) -> dict[str, str]:
        """persona, human, the goal of `thread_id` ("" without one or without a thread) and
        updated_at; `{}` until anything is stored."""
        return core_context_view(self._read_core_context(), thread_id)

    def set_core_context(
        self,
        persona: str | None = None,
        human: str | None = None,
        goal: str | None = None,
        *,
        thread_id: str | None = None,
    ) -> dict[str, str]:
        """Set the given parts (None leaves a part as it is) and return the block as
        `get_core_context(thread_id)` shows it. A goal belongs to one thread: it needs
        `thread_id`. Setting `human` by hand pins it: the writer no longer refreshes it."""
        changes: dict[str, str] = {}
        if persona is not None:
            changes["persona"] = persona
        if human is not None:
            changes["human"], changes[HUMAN_SOURCE] = human, "user"
        if goal is not None:
            if thread_id is None:
                raise ValueError("goal needs thread_id: each conversation has its own goal")
            changes[goal_key(thread_id)] = goal
        self._check_writable()
        stored = self._update_core_context(changes)
        self._notify_changed()
        return core_context_view(stored, thread_id)

    def seed_core_context(
        self,
        *,
        persona: str | None = None,
        human: str | None = None,
        thread_id: str | None = None,
        goal: str | None = None,
    ) -> dict[str, str]:
        """The writer's seeding, decided against the block as read under the write lock (see
        `memory.core_context.seed_changes`), so a concurrent hand edit is never overwritten."""
        self._check_writable()
        seeds = {"persona": persona, "human": human, "thread_id": thread_id, "goal": goal}
        current = self._read_core_context()
        if not seed_changes(current, **seeds):
            # Nothing to seed now; an edit landing meanwhile never makes seeding due again (it
            # pins human, clears or sets a part), so the usual turn skips the write lock.
            return core_context_view(current, thread_id)
        written: list[bool] = []

        def decide(current: Mapping[str, str]) -> dict[str, str]:
            changes = seed_changes(current, **seeds)
            written.append(bool(changes))
            return changes

        stored = self._update_core_context(decide)
        if any(written):
            self._notify_changed()
        return core_context_view(stored, thread_id)
