"""The public page at a checkout link's `shareUrl`, served by the reference outside the API prefix.

No credential: anyone holding the URL sees the page. What it answers for each link status is
`ref.checkout.page_status` (200 with an HTML page while `sent`, 410 once cancelled or expired).
"""

from __future__ import annotations

import html
import json

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..resources.links import PUBLIC_PAGE, LinkServer, public_link
from ..core.requestid import request_id_of

TITLES = {200: "Pay", 404: "Not found", 410: "This link is no longer available"}


def _page(title: str, lines: list[str]) -> str:
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>")


def routes(ref: LinkServer) -> list[Route]:
    async def page(request: Request) -> Response:
        row = public_link(ref, request.path_params["linkId"])
        status = ref.checkout.page_status(row["status"]) if row is not None else 404
        lines = []
        if status == 200 and row is not None:
            lines = [f"{item['name']} x {item['quantity']}" for item in json.loads(row["items"])]
            lines += [f"Total: {row['total_amount']} {row['currency']}", "Pay by card."]
        return HTMLResponse(_page(TITLES.get(status, "Unavailable"), lines), status_code=status,
                            headers={"x-request-id": request_id_of(request)})

    return [Route(PUBLIC_PAGE, page, methods=["GET"])]
