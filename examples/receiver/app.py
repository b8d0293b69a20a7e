"""A webhook receiver that follows every rule of the spec's Events part, small enough to copy.

    python examples/receiver/app.py --port 8700 --secret whsec_...
    payconform receiver --url http://127.0.0.1:8700/webhooks --secret whsec_... \
        --state-url http://127.0.0.1:8700/state

Rules, in the order a delivery meets them:
- verify `whk-signature` over the raw bytes before parsing, with the `standardwebhooks` library (constant-time
  comparison, any of the space-separated `v1` signatures, five-minute tolerance both ways); else 401;
- dedupe on `whk-id`: a retry is answered 2xx and not processed again;
- answer 2xx to a type it does not know and do nothing with it;
- answer 2xx first and process afterwards (a background task);
- never move a payout backwards; from `completed` the one forward move is `payout.returned`.
`GET /state/payouts/{payoutId}` shows what it concluded (the kit's `--state-url` contract).
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Mapping

import uvicorn
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

EVENT_TYPES = frozenset({
    "payout.pending", "payout.processing", "payout.completed", "payout.failed", "payout.returned", "payout.canceled",
    "payout_approval.pending", "payout_approval.approved", "payout_approval.rejected", "payout_approval.expired",
    "payout_approval.executed", "payout_approval.execution_failed", "payout_batch.awaiting_confirmation",
    "payout_batch.completed", "payout_batch.canceled", "payout_batch.failed", "checkout_payment.paid",
    "checkout_payment.failed", "checkout_payment.refunded", "checkout_payment.reversed",
    "checkout_payment.partially_refunded", "webhook_endpoint.disabled"})
# The status each payout event leads to, and how far along the payout machine it is.
PAYOUT_STATUS = {"payout.pending": "pending", "payout.processing": "processing", "payout.completed": "completed",
                 "payout.failed": "failed", "payout.returned": "failed", "payout.canceled": "canceled"}
PROGRESS = {"pending": 0, "processing": 1, "completed": 2}
TERMINAL = frozenset({"failed", "canceled"})
# The spec's neutral header names, as the Standard Webhooks library spells them.
LIBRARY_HEADERS = {"whk-id": "webhook-id", "whk-timestamp": "webhook-timestamp", "whk-signature": "webhook-signature"}


class Rejected(Exception):
    """A delivery that does not verify: answered 401, never processed."""


class Receiver:
    """The receiver's rules (one method each, so a test can break exactly one) and its state."""

    def __init__(self, secret: str) -> None:
        self.webhook = Webhook(secret)
        self.lock = threading.Lock()
        self.seen: set[str] = set()
        self.payouts: dict[str, dict] = {}

    def verify(self, raw: bytes, headers: Mapping[str, str]) -> dict:
        """The parsed event, once the raw bytes verify (the library parses only after verifying)."""
        renamed = {LIBRARY_HEADERS[k]: v for k, v in headers.items() if k in LIBRARY_HEADERS}
        try:
            return self.webhook.verify(raw, renamed)
        except (WebhookVerificationError, ValueError) as exc:  # a malformed entry raises a bare ValueError
            raise Rejected(str(exc)) from None

    def first_delivery(self, event_id: str) -> bool:
        """True the first time an event id arrives; retries of it are acknowledged and dropped."""
        with self.lock:
            if event_id in self.seen:
                return False
            self.seen.add(event_id)
            return True

    def unknown_type(self, event: dict) -> Response:
        """New event types are backwards compatible: acknowledge and ignore."""
        return Response(status_code=204)

    @staticmethod
    def moves(current: str | None, event_type: str) -> bool:
        """Whether an event may change the payout: never backwards; from completed only the bank return."""
        if current is None:
            return True
        if current in TERMINAL:
            return False
        if current == "completed":
            return event_type == "payout.returned"
        new = PAYOUT_STATUS[event_type]
        return new in TERMINAL or PROGRESS[new] > PROGRESS[current]

    def process(self, event: dict) -> None:
        """The work, done after answering: follow the payout's status."""
        if event["type"] not in PAYOUT_STATUS:
            return
        payout_id = event["data"]["payoutId"]
        with self.lock:
            payout = self.payouts.setdefault(payout_id, {"status": None, "events": []})
            payout["events"].append(event["id"])
            if self.moves(payout["status"], event["type"]):
                payout["status"] = PAYOUT_STATUS[event["type"]]

    async def delivery(self, request: Request) -> Response:
        try:
            event = self.verify(await request.body(), request.headers)
        except Rejected as exc:
            return JSONResponse({"error": str(exc)}, status_code=401)
        if not self.first_delivery(event["id"]):
            return Response(status_code=204)
        if event["type"] not in EVENT_TYPES:
            return self.unknown_type(event)
        return Response(status_code=204, background=BackgroundTask(self.process, event))

    async def payout(self, request: Request) -> Response:
        with self.lock:
            payout = self.payouts.get(request.path_params["payout_id"])
            body = {"status": payout["status"], "events": list(payout["events"])} if payout else None
        return JSONResponse(body) if body else JSONResponse({"error": "unknown payout"}, status_code=404)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/webhooks", self.delivery, methods=["POST"]),
                                 Route("/state/payouts/{payout_id}", self.payout, methods=["GET"])])


def main() -> None:
    parser = argparse.ArgumentParser(description="An example webhook receiver for the service's deliveries.")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--secret", required=True, help="the endpoint's signing secret (whsec_...)")
    args = parser.parse_args()
    uvicorn.run(Receiver(args.secret).app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
