"""What is stored and where: a MemoryItem, the document a manager keeps, the changes a write
makes, BaseMemoryManager and its backends (backends/), snapshots, repair, the state database and
the locks. The bottom of memory/: it imports only memory.errors and memory.text, never the writer,
retrieval or upkeep."""
