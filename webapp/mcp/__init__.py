"""The MCP server over one user's long-term memory (official `mcp` SDK): stdio and HTTP.

`tools.py` is what each tool does to a `LongTermMemory` (sync, no MCP in it); `server.py` makes
them MCP tools and a resource and says who the user is (the one stdio was started for, or the
HTTP caller as the editor resolves it: docs/AUTH.md); `__main__.py` is `python -m webapp.mcp`.
"""
