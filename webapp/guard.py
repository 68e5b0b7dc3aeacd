"""Who is asking and may they read or write: the user id, cross-site protection, bounded JSON
bodies, JSON errors."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse

from memory import BaseMemoryManager
from memory.integration import Settings, get_settings

CSRF_HEADER = "x-gulfstream-csrf"
USER_HEADER = "x-gulfstream-user"
MAX_BODY_BYTES = 5 * 1024 * 1024
MAX_JSON_DEPTH = 32  # an export nests five levels; anything far deeper is an attack
# Sec-Fetch-Site values a browser sends for the editor's own page ("none": a typed URL).
OWN_SITE = {"same-origin", "none"}
DEFAULT_LOCAL_USER = "default"
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]


class ApiError(Exception):
    """A refused request: HTTP status, a message, and the field that was wrong (if any)."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    def response(self) -> JSONResponse:
        return error_response(self.status, self.message, self.field)


def error_response(status: int, message: str, field: str | None = None) -> JSONResponse:
    """The one JSON error shape the page reads: {"error": ..., "field": ...}. A message may
    quote what the client sent, lone surrogates included: those are escaped, never a 500."""
    return JSONResponse(
        {"error": _encodable(message), "field": None if field is None else _encodable(field)},
        status_code=status,
        # A refused body may be half sent: close rather than read the rest of it.
        headers={"Connection": "close"} if status == 413 else None,
    )


def _encodable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Caller:
    """The resolved user and how we know it (`auth` = LangGraph custom auth, `local` = no auth)."""

    user_id: str
    mode: str


def resolve_caller(request: Request) -> Caller:
    """The user this request acts for.

    An authenticated LangGraph user (custom auth with `enable_custom_route_auth`) always wins and
    cannot be overridden by the client. Without authentication the user comes from the
    `X-Gulfstream-User` header or the `user` query parameter (local use only); setting
    GULFSTREAM_EDITOR_REQUIRE_AUTH=1 refuses that mode.
    """
    user = request.scope.get("user")
    identity = getattr(user, "identity", "") if user is not None else ""
    custom_auth = Settings.custom_auth()
    if custom_auth and Settings.is_studio_user(user):
        # `x-auth-scheme: langsmith` skips custom auth unless disable_studio_auth is set; that
        # shared Studio identity is no end user, so it gets no memories here.
        raise ApiError(403, "the LangGraph Studio user cannot use the memory editor", "user")
    if user is not None and getattr(user, "is_authenticated", False) and identity:
        return Caller(_checked_user(identity), "auth")
    settings = get_settings()
    if custom_auth or settings.editor_require_auth:
        raise ApiError(401, "sign in first: this editor needs an authenticated user", "user")
    requested = (
        request.headers.get(USER_HEADER)
        or request.query_params.get("user")
        or settings.editor_user
        or DEFAULT_LOCAL_USER
    )
    return Caller(_checked_user(requested), "local")


def _checked_user(user_id: str) -> str:
    try:
        return BaseMemoryManager.validate_user_id(user_id)
    except ValueError as exc:
        raise ApiError(400, str(exc), "user") from exc


def check_write_allowed(request: Request) -> None:
    """Refuse what a cross-site page could send: form encodings, no custom header, foreign Origin.

    A plain HTML form can only post urlencoded, multipart or text/plain bodies and cannot add
    headers; a cross-site fetch with a JSON body or a custom header needs a CORS preflight,
    which this app never grants.
    """
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise ApiError(415, "send the body as application/json", "content-type")
    if request.headers.get(CSRF_HEADER) != "1":
        raise ApiError(403, "missing the X-Gulfstream-CSRF: 1 header", CSRF_HEADER)
    check_same_origin(request)


def check_same_origin(request: Request) -> None:
    """Refuse a request another web site's page made (reads included): a foreign or opaque
    `Origin`, or a `Sec-Fetch-Site` other than `same-origin` / `none`.

    A browser sends `Origin` on every cross-origin fetch and `Sec-Fetch-Site` on every request,
    `<img>` and `<script>` loads included, so a page elsewhere can neither read the API (even
    where the LangGraph server would add `Access-Control-Allow-Origin: *`) nor make it open a
    user. Clients that are not browsers send neither. GULFSTREAM_EDITOR_ORIGINS lists origins
    allowed besides the server's own (a proxy that rewrites the Host header).
    """
    origin = request.headers.get("origin")
    allowed = set(get_settings().editor_origins)
    if origin == "null":
        raise ApiError(403, "requests from an opaque origin are refused", "origin")
    if origin:
        host = request.headers.get("host", "")
        if urlsplit(origin).netloc != host and origin not in allowed:
            raise ApiError(403, f"cross-site request from origin {origin!r} refused", "origin")
    site = request.headers.get("sec-fetch-site", "").strip().lower()
    if site and site not in OWN_SITE and not (origin and origin in allowed):
        raise ApiError(
            403,
            f"a {site} request is refused: only the editor's own page may call its API",
            "sec-fetch-site",
        )


def is_local_dev_server() -> bool:
    """True under `langgraph dev` (it sets this variable); deployments run other API variants."""
    return os.environ.get("LANGSMITH_LANGGRAPH_API_VARIANT") == "local_dev"


def allowed_hosts() -> list[str]:
    """The loopback names plus GULFSTREAM_EDITOR_HOSTS (comma-separated; `*` allows any)."""
    return LOOPBACK_HOSTS + [host.lower() for host in get_settings().editor_hosts]


def check_local_host(request: Request) -> None:
    """Under `langgraph dev`, answer only requests addressed to a loopback name.

    This stops DNS rebinding: a web page whose name resolves to 127.0.0.1 would otherwise be
    same-origin with the editor and could read memories. GULFSTREAM_EDITOR_HOSTS adds names
    (comma-separated; `*` turns the check off), e.g. for `langgraph dev --tunnel`. Deployed
    servers are not checked here: their ingress and custom auth guard them. The standalone
    editor (`python -m webapp`) does the same check with Starlette's TrustedHostMiddleware.
    """
    if not is_local_dev_server():
        return
    allowed = allowed_hosts()
    if "*" in allowed:
        return
    host = request.headers.get("host", "").strip().lower()
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if name not in allowed:
        raise ApiError(
            400,
            f"host {host!r} is not a loopback name; add it to GULFSTREAM_EDITOR_HOSTS",
            "host",
        )


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The body, refused with a 413 as soon as it is known to exceed `limit`: from
    `Content-Length` before anything is read, else while the chunks arrive (never buffered
    whole first)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise ApiError(400, "Content-Length is not a number", "content-length") from None
        if size > limit:
            raise ApiError(413, f"body is {size} bytes; the limit is {limit}", "body")
    chunks: list[bytes] = []
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > limit:
            raise ApiError(413, f"body is over the limit of {limit} bytes", "body")
        chunks.append(chunk)
    return b"".join(chunks)


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return False


async def read_json_object(request: Request, allowed: set[str] | None = None) -> dict[str, Any]:
    """The JSON body as a dict with only the `allowed` fields (None: what reads it checks);
    anything else is a 4xx naming the field (a body too large, malformed or nested too deeply
    included: never a 500)."""
    body = getattr(request.state, "body", None)  # read already, before the user was opened
    if body is None:
        body = await read_body(request)
    try:
        data = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"body is not valid JSON: {exc}", "body") from exc
    except RecursionError as exc:
        raise ApiError(400, f"body nests deeper than {MAX_JSON_DEPTH} levels", "body") from exc
    if json_depth_exceeds(data, MAX_JSON_DEPTH):
        raise ApiError(400, f"body nests deeper than {MAX_JSON_DEPTH} levels", "body")
    if not isinstance(data, dict):
        raise ApiError(400, "body must be a JSON object", "body")
    unknown = sorted(set(data) - allowed) if allowed is not None else []
    if unknown and allowed is not None:
        raise ApiError(400, f"unknown field {unknown[0]!r}; expected {sorted(allowed)}", unknown[0])
    return data
