"""The storage backends of BaseMemoryManager: one YAML file per user, one SQLite file, any
LangGraph store (Postgres when deployed). Each imports memory.store and memory.text only."""
