"""A tiny stand-in for the reference server, for the harness's own tests.

Implements the operator API of docs/architecture.md (in memory) and a handful of API routes. Run it like
the reference: ``python fake_reference.py --host 127.0.0.1 --port 0 --operator-token T``; it prints
``payconform reference listening on http://HOST:PORT`` to stderr when ready.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import secrets
import socket
import sys
import uuid
from datetime import datetime, timezone

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PREFIX = "/business/api/v1"
ORGS: dict[str, dict] = {}
KEYS: dict[str, dict] = {}  # key string -> {id, org, mode, scopes, revoked, expires_at, pinned}
TOKEN = {"value": ""}
COUNTER = itertools.count(1)


def rid() -> str:
    return uuid.uuid4().hex


def error(status: int, type_: str, detail: str) -> JSONResponse:
    r = rid()
    return JSONResponse({"type": type_, "status": status, "detail": detail, "requestId": r}, status_code=status,
                        headers={"x-request-id": r})


def ok(body, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"x-request-id": rid()})


def need_token(request: Request):
    if request.headers.get("x-operator-token") != TOKEN["value"]:
        return error(401, "UNAUTHORIZED", "operator token required")
    return None


async def health(request: Request):
    return ok({"ok": True})


async def create_org(request: Request):
    if (e := need_token(request)) is not None:
        return e
    body = await request.json()
    org_id = "c" + secrets.token_hex(12)
    ORGS[org_id] = dict(body, clock=0)
    return ok({"orgId": org_id}, 201)


async def update_org(request: Request):
    if (e := need_token(request)) is not None:
        return e
    org = ORGS.get(request.path_params["org_id"])
    if org is None:
        return error(404, "NOT_FOUND", "no such org")
    org.update(await request.json())
    return ok(org)


async def issue_key(request: Request):
    if (e := need_token(request)) is not None:
        return e
    org_id = request.path_params["org_id"]
    if org_id not in ORGS:
        return error(404, "NOT_FOUND", "no such org")
    body = await request.json()
    mode = body.get("mode", "test")
    public = secrets.token_hex(16)
    secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    key = f"svc_{mode}_{public}_{secret}"
    kid = f"key{next(COUNTER)}"
    KEYS[key] = {"id": kid, "org": org_id, "mode": mode, "scopes": body.get("scopes", []), "revoked": False,
                 "expires_at": body.get("expires_at"), "pinned": body.get("pinned_ips")}
    return ok({"id": kid, "key": key, "prefix": key[:20], "scopes": body.get("scopes", []), "mode": mode,
               "expiresAt": body.get("expires_at")}, 201)


async def revoke_key(request: Request):
    if (e := need_token(request)) is not None:
        return e
    for info in KEYS.values():
        if info["id"] == request.path_params["key_id"]:
            info["revoked"] = True
            return ok({})
    return error(404, "NOT_FOUND", "no such key")


async def clock(request: Request):
    if (e := need_token(request)) is not None:
        return e
    org = ORGS[request.path_params["org_id"]]
    org["clock"] += (await request.json())["advance_seconds"]
    return ok({"now": datetime.now(timezone.utc).isoformat()})


async def faults(request: Request):
    if (e := need_token(request)) is not None:
        return e
    return ok({}, 201)


def auth(request: Request):
    key = request.headers.get("x-api-key")
    info = KEYS.get(key or "")
    if info is None or info["revoked"]:
        return None, error(401, "UNAUTHORIZED", "unknown key")
    if info["expires_at"] and info["expires_at"] < datetime.now(timezone.utc).isoformat():
        return None, error(401, "KEY_EXPIRED", "expired")
    if info["pinned"]:
        return None, error(401, "KEY_IP_NOT_ALLOWED", "pinned")
    if info["org"] != request.path_params.get("org_id"):
        return None, error(403, "FORBIDDEN", "other organization")
    return info, None


async def balance(request: Request):
    info, e = auth(request)
    if e is not None:
        return e
    return ok({"available": "0.00", "currency": "USD", "wallet": [], "unavailable": []})


async def policy(request: Request):
    info, e = auth(request)
    if e is not None:
        return e
    return ok({"features": ["developer", "mass_payouts"]})


async def not_json(request: Request):
    from starlette.responses import PlainTextResponse

    return PlainTextResponse("<html>oops</html>", headers={"x-request-id": rid()})


async def not_found(request: Request):
    return error(404, "ROUTE_NOT_FOUND", "no route")


routes = [
    Route("/_operator/health", health),
    Route("/_operator/orgs", create_org, methods=["POST"]),
    Route("/_operator/orgs/{org_id}", update_org, methods=["PATCH"]),
    Route("/_operator/orgs/{org_id}/keys", issue_key, methods=["POST"]),
    Route("/_operator/orgs/{org_id}/keys/{key_id}/revoke", revoke_key, methods=["POST"]),
    Route("/_operator/orgs/{org_id}/clock", clock, methods=["POST"]),
    Route("/_operator/faults", faults, methods=["POST"]),
    Route(PREFIX + "/payments/organizations/{org_id}/balance", balance),
    Route(PREFIX + "/payments/organizations/{org_id}/policy", policy),
    Route(PREFIX + "/not-json", not_json),
    Route(PREFIX + "/{rest:path}", not_found, methods=["GET", "POST", "PATCH", "DELETE", "PUT"]),
]
app = Starlette(routes=routes)


def main() -> None:
    import uvicorn

    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--operator-token", default=os.environ.get("PAYCONFORM_OPERATOR_TOKEN", "token"))
    p.add_argument("--db")
    p.add_argument("--mutant")
    ns = p.parse_args()
    if ns.mutant == "explode":
        print("unknown mutant explode", file=sys.stderr)
        sys.exit(2)
    TOKEN["value"] = ns.operator_token
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((ns.host, ns.port))
    host, port = sock.getsockname()[:2]
    print(f"payconform reference listening on http://{host}:{port}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
