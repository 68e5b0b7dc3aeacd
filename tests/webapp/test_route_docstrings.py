"""The LangGraph server reads every route function's docstring as OpenAPI YAML when it starts
(Starlette's schema generator, `langgraph_api.utils.SchemaGenerator`): one that YAML cannot
parse (a colon followed by a space, in most prose) prints a traceback at every `langgraph dev`."""

from __future__ import annotations

import pytest
from starlette.schemas import SchemaGenerator

from memory.integration.settings import Settings, use_settings
from webapp.app import server_app


@pytest.mark.parametrize("mcp", [False, True], ids=["editor", "editor-and-mcp"])
def test_every_route_docstring_parses_as_the_server_parses_it(
    clean_process: Settings, mcp: bool
) -> None:
    with use_settings(clean_process, mcp=mcp):
        app = server_app()
    schemas = SchemaGenerator({})
    endpoints = schemas.get_endpoints(app.routes)
    assert any(e.path.endswith("/erase-user") for e in endpoints)
    unreadable = {}
    for endpoint in endpoints:
        try:
            schemas.parse_docstring(endpoint.func)  # split on '---', then yaml.safe_load
        except Exception as error:  # what the server catches and prints with its traceback
            unreadable[f"{endpoint.http_method} {endpoint.path}"] = str(error).splitlines()[0]
    assert not unreadable, unreadable
