"""The consolidation door of `LongTermMemory` (its `consolidate`), deleted with the feature: the
package is imported at the first pass, not with the memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

    from memory.upkeep.consolidation import ConsolidationPolicy, ConsolidationReport
    from memory.upkeep.upkept import UpkeptMemory


def consolidation_pass(
    memory: UpkeptMemory,
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

    return consolidate(memory, llm, now=now, policy=policy)
