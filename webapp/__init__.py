"""The web app the LangGraph server mounts: the memory editor (routes, views, the page), the
Conversations page and the MCP server. Talks to memory/'s public API and graph's settings;
nothing imports it."""
