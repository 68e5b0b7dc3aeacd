"""The editor's "Tidy up" button: POST /memories/api/consolidate, one consolidation pass."""

from __future__ import annotations

import functools

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memory import LongTermMemory
from memory.integration import get_settings
from webapp.guard import read_json_object
from webapp.routes import _run, api


@api
async def consolidate(request: Request, memory: LongTermMemory) -> Response:
    """One consolidation pass (no model: the most complete text of each group is kept) and its
    report; a refused pass changed nothing and says why in `refused`."""
    await read_json_object(request, set())
    policy = get_settings().consolidation_policy()
    report = await _run(functools.partial(memory.consolidate, policy=policy))
    return JSONResponse(report.to_dict())
