"""A process that runs one consolidation pass, for the crash test (killed at random points).

    python -m tests.integration.consolidation_worker SPEC

Prints "start" once the store is open, "done" when the pass returned.
"""

from __future__ import annotations

import sys

from memory import LongTermMemory
from memory.store.factory import open_memory_manager

if __name__ == "__main__":
    memory = LongTermMemory(open_memory_manager(sys.argv[1], "alice"), embeddings="off")
    print("start", flush=True)
    report = memory.consolidate()
    print("done", report.summary(), flush=True)
