"""The chat agent's text, yours to edit: the persona, the system prompt and its tool sentences
(persona.py), how memories enter the prompt and the tool loop's notes (agent.py), compaction's
and the MCP server's. Imports memory.prompts only (the memory sections)."""
