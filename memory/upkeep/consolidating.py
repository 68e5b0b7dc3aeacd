"""LongTermMemory's consolidation door (`memory.upkeep.consolidation`), deleted with the feature."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from datetime import datetime

    from memory.upkeep.consolidation import ConsolidationPolicy, ConsolidationReport
    from memory.upkeep.upkept import UpkeptMemory


class Consolidating:
    """A mixin of `LongTermMemory`; the package is imported at the first pass, not with it."""

    def consolidate(
        self,
        llm: Any | None = None,
        *,
        now: datetime | None = None,
        policy: ConsolidationPolicy | None = None,
    ) -> ConsolidationReport:
        """One consolidation pass (`memory.upkeep.consolidation`): merge near-duplicates (rewritten
        by `llm` when given), mark passed plans stale, archive long-cold memories; snapshot first,
        refused when it would remove more than a quarter of the live memories, and resumed where it
        stopped when an earlier pass was interrupted."""
        from memory.upkeep.consolidation import consolidate

        return consolidate(cast("UpkeptMemory", self), llm, now=now, policy=policy)
