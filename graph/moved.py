"""The old paths of graph/'s modules that moved into packages in 0.2, kept for one release:
`import graph.handoff` still works, with a DeprecationWarning naming the new path, and so do the
names that moved to another module."""

MOVED_MODULES = {
    "graph.offline_model": "graph.models.offline",
    "graph.offline_rules": "graph.models.offline_rules",
    "graph.embeddings": "graph.models.embeddings",
    "graph.handoff": "graph.writing.ltm_write",
    "graph.memory_writer": "graph.writing.writer_graph",
    "graph.memory_consolidator": "graph.writing.consolidator_graph",  # feature: consolidation
    "graph.pending": "graph.writing.pending",
    "graph.pending_mirror": "graph.writing.pending_mirror",
    "graph.said_recently": "graph.writing.said_recently",
    "graph.write_now": "graph.writing.write_now",
    "graph.admitting": "graph.writing.admission",  # feature: admission
    "graph.archiving": "graph.archive.archiving",  # feature: archive
    "graph.archive_tools": "graph.archive.search_tool",  # feature: archive
    "graph.digests": "graph.archive.digests",  # feature: digests
}

# Public names that moved to another module: still importable from the old one (its
# `__getattr__`), with a DeprecationWarning, for one release.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "graph.writing.ltm_write": {
        "writer_thread_id": "graph.writing.server_runs",
        "schedule_flush": "graph.writing.server_runs",
        "WRITER_GRAPH_ID": "graph.writing.server_runs",
        "WRITER_THREAD_NAMESPACE": "graph.writing.server_runs",
    },
    "graph.models.loading": {
        "DEFAULT_MODEL": "graph.context",
    },
}
