"""End to end with custom auth: the authenticated user, not the client's `user_id`, owns memory."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk import get_client

from tests.e2e.server import DevServer, copy_app
from tests.e2e.stub_openai import NO_MEMORIES_REPLY, StubOpenAI
from tests.e2e.test_langgraph_dev import STARTUP_SECONDS, wait_for_writer_runs

pytestmark = pytest.mark.slow

AUTH_MODULE = """
from langgraph_sdk import Auth

auth = Auth()
TOKENS = {"token-alice": "alice", "token-bob": "bob"}


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    token = (authorization or "").removeprefix("Bearer ").strip()
    if token not in TOKENS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return TOKENS[token]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream-auth") / "app")
    (app / "auth.py").write_text(AUTH_MODULE)
    config = json.loads((app / "langgraph.json").read_text())
    config["auth"] = {"path": "./auth.py:auth"}
    (app / "langgraph.json").write_text(json.dumps(config))
    with StubOpenAI() as stub:
        dev = DevServer(
            app,
            {
                "OPENAI_BASE_URL": stub.base_url,
                "OPENAI_API_KEY": "stub",
                "GULFSTREAM_MODEL": "openai/stub-model",
                "GULFSTREAM_MEMORY_BACKEND": "store",
            },
        )
        try:
            if not dev.wait_ready(STARTUP_SECONDS):
                pytest.fail(f"langgraph dev did not become ready:\n{dev.log()[-5000:]}")
            yield dev
        finally:
            dev.stop()


async def chat_as(server: DevServer, token: str, text: str, claimed_user: str) -> dict:
    client = get_client(url=server.url, headers={"Authorization": f"Bearer {token}"})
    thread_id = (await client.threads.create())["thread_id"]
    state = await client.runs.wait(
        thread_id,
        "agent",
        input={"messages": [{"role": "user", "content": text}]},
        context={"user_id": claimed_user},  # ignored: the server has custom auth
    )
    assert isinstance(state, dict) and "messages" in state, state
    return state


async def test_claimed_user_id_is_ignored_under_custom_auth(server: DevServer) -> None:
    # Bob claims to be alice: the memory is still written to bob.
    await chat_as(server, "token-bob", "My secret word is pineapple.", claimed_user="alice")
    bob_headers = {"Authorization": "Bearer token-bob"}
    runs = await wait_for_writer_runs(server.url, "bob", 1, headers=bob_headers)
    assert [r["status"] for r in runs] == ["success"], server.log()[-4000:]
    alice = await chat_as(server, "token-alice", "secret word pineapple", claimed_user="alice")
    assert alice["related_memories"] == []
    assert alice["messages"][-1]["content"] == NO_MEMORIES_REPLY
    bob = await chat_as(server, "token-bob", "secret word pineapple", claimed_user="someone")
    assert any("pineapple" in m["description"] for m in bob["related_memories"])


async def test_requests_without_a_valid_token_are_refused(server: DevServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        refused = await http.post("/threads", json={}, headers={"Authorization": "Bearer wrong"})
        anonymous = await http.post("/threads", json={})
    assert (refused.status_code, anonymous.status_code) == (401, 401)
