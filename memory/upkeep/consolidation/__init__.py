"""Consolidation: merge near-duplicate memories, mark passed plans stale, archive cold ones, in a
pass that is planned, guarded, and resumed after a crash. Deleted with the consolidation feature."""

from memory.upkeep.consolidation.dates import dates_in, is_stale, passed_date
from memory.upkeep.consolidation.plan import ConsolidationPolicy
from memory.upkeep.consolidation.report import ConsolidationReport
from memory.upkeep.consolidation.run import consolidate
from memory.upkeep.consolidation.similarity import duplicate_groups, same_fact
from memory.upkeep.consolidation.trigger import (
    ConsolidationSchedule,
    ConsolidationTrigger,
)

__all__ = [
    "ConsolidationPolicy",
    "ConsolidationReport",
    "ConsolidationSchedule",
    "ConsolidationTrigger",
    "consolidate",
    "dates_in",
    "duplicate_groups",
    "is_stale",
    "passed_date",
    "same_fact",
]
