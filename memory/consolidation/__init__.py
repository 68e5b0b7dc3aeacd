"""Consolidation: merge near-duplicate memories, mark passed plans stale, archive cold ones."""

from memory.consolidation.dates import dates_in, is_stale, passed_date
from memory.consolidation.plan import ConsolidationPolicy
from memory.consolidation.report import ConsolidationReport
from memory.consolidation.run import consolidate
from memory.consolidation.similarity import duplicate_groups, same_fact
from memory.consolidation.trigger import (
    ConsolidatingConsumer,
    ConsolidationSchedule,
    ConsolidationTrigger,
)

__all__ = [
    "ConsolidatingConsumer",
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
