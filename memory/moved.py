"""The old paths of memory/'s modules that moved into packages in 0.2, kept for one release:
`import memory.yaml_manager` still works, with a DeprecationWarning naming the new path, and so
do the names that moved to another module."""

MOVED_MODULES = {
    "memory.item": "memory.store.item",
    "memory.document": "memory.store.document",
    "memory.operations": "memory.store.operations",
    "memory.manager": "memory.store.manager",
    "memory.core_context": "memory.store.core_context",
    "memory.repair": "memory.store.repair",
    "memory.branch": "memory.store.branch",
    "memory.factory": "memory.store.factory",
    "memory.snapshot": "memory.store.snapshots",
    "memory.stored_snapshots": "memory.store.snapshot_rows",
    "memory.state_db": "memory.store.state_db",
    "memory.atomic_file": "memory.store.atomic_file",
    "memory.locking": "memory.store.locking",
    "memory.postgres": "memory.store.postgres",
    "memory.writer.sqlite_file": "memory.store.sqlite_file",
    "memory.yaml_manager": "memory.store.backends.yaml_files",
    "memory.sqlite_manager": "memory.store.backends.sqlite_db",
    "memory.sqlite_rows": "memory.store.backends.sqlite_rows",
    "memory.sqlite_check": "memory.store.backends.sqlite_check",
    "memory.store_manager": "memory.store.backends.langgraph_store",
    "memory.store_changes": "memory.store.backends.store_changes",
    "memory.tokenize": "memory.text.tokenize",
    "memory.language": "memory.text.language",
    "memory.statement_kinds": "memory.text.statement_kinds",
    "memory.fencing": "memory.text.fencing",
    "memory.messages": "memory.text.messages",
    "memory.entities": "memory.text.entities",
    "memory.entity_lexicon": "memory.text.entity_lexicon",
    "memory.episodic": "memory.text.episodic",
    "memory.metering": "memory.usage.metering",
    "memory.hotness": "memory.retrieval.hotness",  # feature: hotness
    "memory.ranking": "memory.retrieval.ranking",
    "memory.recall_log": "memory.retrieval.recall_log",
    "memory.retrieval.mechanical": "memory.retrieval.bm25",
    "memory.consolidation": "memory.upkeep.consolidation",  # feature: consolidation
    "memory.consolidating": "memory.upkeep.consolidating",  # feature: consolidation
    "memory.forgetting": "memory.store.forgotten",
    "memory.fingerprint": "memory.text.fingerprint",
    "memory.archive.forgetting": "memory.archive.reconcile",  # feature: archive
    "memory.turn": "memory.writer.turn",
    "memory.writer.budget": "memory.writer.listing",
    "memory.retrieval.topical": "memory.topics.routing",  # feature: topics
}

# Public names that moved to another module: still importable from the old one (its
# `__getattr__`), with a DeprecationWarning, for one release.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "memory.writer.queue": {
        "BatchPolicy": "memory.writer.batching",
        "split_runs": "memory.writer.batching",
        "continues": "memory.writer.batching",
        "MAX_BATCH_SIZE": "memory.writer.batching",
        "WriteHook": "memory.writer.target",
    },
    "memory.erasure.rows": {
        "Needles": "memory.text.needles",
        "strings_in": "memory.text.needles",
        "ERASED": "memory.text.needles",
        "MIN_NEEDLE_CHARS": "memory.text.needles",
        "MIN_CONTAINED_CHARS": "memory.text.needles",
        "SUMMARIES_FILE": "memory.store.state_db",
    },
    "memory.writer.tool_calls": {
        "REPAIR_NOTE": "memory.prompts.writer",
    },
}
