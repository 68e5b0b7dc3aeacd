"""Example custom auth for Gulfstream: bearer tokens → users, per-user threads and memory store.

Turn it on in `langgraph.json` (all three keys are needed; docs/AUTH.md says why):

    "http": {"app": "./webapp/app.py:app", "enable_custom_route_auth": true},
    "auth": {"path": "./memory/integration/auth.py:auth", "disable_studio_auth": true}

`GULFSTREAM_AUTH_TOKENS="tok1:alice,tok2:bob"` maps tokens to user ids. That is a stand-in: a real
deployment replaces `authenticate` with a check against its identity provider (verify a JWT, call
your session service) and keeps the resource handlers below as they are.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from langgraph_sdk import Auth

from memory.integration.run_memory import DEAD_WRITES_NAMESPACE
from memory.integration.settings import get_settings
from memory.integration.writing.pending import PENDING_NAMESPACE
from memory.store.backends.langgraph_store import (
    BACKUP_NAMESPACE,
    ITEMS_NAMESPACE,
    META_NAMESPACE,
    TURNS_NAMESPACE,
    namespace_label,
)
from memory.store.backends.store_changes import CHANGES_NAMESPACE
from memory.store.manager import validate_user_id

TOKENS_ENV = "GULFSTREAM_AUTH_TOKENS"
OWNER_KEY = "owner"
# Store namespaces laid out as (kind, user label): the second label says whose they are. The
# memory writer's failed turns (DEAD_WRITES_NAMESPACE) and the turns waiting for their batch
# (PENDING_NAMESPACE) are the user's too: listed, sent again.
MEMORY_NAMESPACES = frozenset(
    {ITEMS_NAMESPACE, META_NAMESPACE, TURNS_NAMESPACE, BACKUP_NAMESPACE, CHANGES_NAMESPACE,
     DEAD_WRITES_NAMESPACE, PENDING_NAMESPACE}
)  # fmt: skip
EDITOR_PAGE_PREFIX = "/memories"
EDITOR_API_PREFIX = "/memories/api/"
ANONYMOUS: Auth.types.MinimalUserDict = {"identity": "anonymous", "is_authenticated": False}

logger = logging.getLogger(__name__)
auth = Auth()


def parse_tokens(spec: str) -> dict[str, str]:
    """`"tok1:alice,tok2:bob"` → `{"tok1": "alice", "tok2": "bob"}`; a bad entry is a ValueError."""
    tokens: dict[str, str] = {}
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        token, sep, user_id = (text.strip() for text in entry.partition(":"))
        if not sep or not token or not user_id:
            raise ValueError(f"{TOKENS_ENV}: entry {entry!r} is not 'token:user_id'")
        if token in tokens:
            raise ValueError(f"{TOKENS_ENV}: a token is listed twice (user {user_id!r})")
        tokens[token] = validate_user_id(user_id)
    return tokens


def user_for_token(token: str) -> str | None:
    """The user a token belongs to, comparing in constant time so timing reveals no token."""
    found = None
    for known, user_id in parse_tokens(get_settings().auth_tokens).items():
        if hmac.compare_digest(known.encode(), token.encode()):
            found = user_id
    return found


# A malformed token list stops the server at start instead of failing every request later.
if not parse_tokens(get_settings().auth_tokens):
    logger.warning("%s is empty: every authenticated request will be refused", TOKENS_ENV)


def _is_editor_page(path: str, method: str) -> bool:
    """The editor's page and static files: a browser navigation cannot carry a bearer header."""
    in_editor = path == EDITOR_PAGE_PREFIX or path.startswith(EDITOR_PAGE_PREFIX + "/")
    return method == "GET" and in_editor and not path.startswith(EDITOR_API_PREFIX)


@auth.authenticate
async def authenticate(
    authorization: str | None, path: str, method: str
) -> Auth.types.MinimalUserDict:
    """A valid `Authorization: Bearer <token>` is that token's user; anything else is a 401,
    except the editor's page, which loads anonymously and then calls its API with the token."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        user_id = user_for_token(token.strip())
        if user_id is None:
            raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
        return {"identity": user_id, "is_authenticated": True}
    if _is_editor_page(path, method):
        return ANONYMOUS
    raise Auth.exceptions.HTTPException(
        status_code=401, detail="send Authorization: Bearer <token>"
    )


def end_user(ctx: Auth.types.AuthContext) -> str:
    """The signed-in user's id; refuses anonymous requests and LangGraph Studio's shared user
    (which appears only without `disable_studio_auth` and is nobody's identity)."""
    if isinstance(ctx.user, Auth.types.StudioUser):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail="the Studio user has no data here: sign in with a token"
        )
    if not ctx.user.is_authenticated:
        raise Auth.exceptions.HTTPException(status_code=401, detail="sign in first")
    return str(ctx.user.identity)


@auth.on
async def deny_by_default(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """A resource or action without its own handler below is refused."""
    end_user(ctx)
    return False


@auth.on(resources=["threads", "crons"])
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads (and their runs) and crons: stamp the owner on what is created, see only your own.

    Runs are checked through their thread (`threads.create_run`). The background memory writer's
    thread is created inside the user's own run, so it is stamped with that user too.
    """
    owner = end_user(ctx)
    metadata = value.get("metadata")
    if isinstance(metadata, dict):
        metadata[OWNER_KEY] = owner
    elif "metadata" in value or ctx.action in ("create", "create_run"):
        value["metadata"] = {OWNER_KEY: owner}
    return {OWNER_KEY: owner}


@auth.on(resources="assistants", actions=["read", "search"])
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every signed-in user may use the graphs' assistants."""
    end_user(ctx)


@auth.on.assistants
async def own_assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Assistants a user creates are theirs; the graphs' own assistants stay read-only."""
    owner = end_user(ctx)
    if ctx.action == "create":
        value["metadata"] = {**(value.get("metadata") or {}), OWNER_KEY: owner}
    return {OWNER_KEY: owner}


def owns_namespace(namespace: tuple[str, ...] | list[str] | None, user_id: str) -> bool:
    """True when the namespace (or search prefix) lies inside the user's own part of the store:
    `(memories…, <label>, ...)` for Gulfstream memory, `(<label>, ...)` for anything else."""
    labels = tuple(namespace or ())
    label = namespace_label(user_id)
    if not labels:
        return False
    if labels[0] in MEMORY_NAMESPACES:
        return len(labels) >= 2 and labels[1] == label
    return labels[0] == label


@auth.on.store
async def own_store_namespaces(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Store get/put/delete/search/list only inside the caller's own namespaces.

    Without this handler `/store/items/search` with prefix `["memories"]` reads every user's
    memories. The graph's nodes use the store in-process, which this handler does not see.
    """
    user_id = end_user(ctx)
    namespace = value.get("namespace")
    if not owns_namespace(namespace, user_id):
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"store namespace {list(namespace or [])} is not yours"
        )
