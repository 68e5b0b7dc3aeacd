"""The chat agent's text, yours to edit: the persona, the system prompt and its tool sentences,
the memory sections and the writer's instructions (persona.py), how memories enter the prompt and
the tool loop's notes (agent.py), compaction's and the MCP server's. Imports memory.integration
only (the library's default sections and writer's instructions)."""
