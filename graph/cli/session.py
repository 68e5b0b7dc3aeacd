"""make chat's and make demo's session: this app's chat graph in one process (the library's
LocalSession: threads in SQLite, turns to the local queue)."""

from __future__ import annotations

from graph.agent import compile_graph
from memory import integration


class LocalSession(integration.LocalSession):
    """`async with LocalSession(context, data_dir) as session: await session.say(thread, text)`."""

    compile_graph = staticmethod(compile_graph)
