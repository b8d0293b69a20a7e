"""What a run made in the target's organization and the API can remove, removed at the end of the run.

Leave the sandbox as it was found, where the API allows. Every request's final exchange passes
`note` (an observer of the run's transport, `Run.observe`), which keeps, for this worker, the
recipients, products and checkout links a 2xx answer created, and forgets what a later request deleted.
When the worker's tests are over, `sweep` deletes the links still in draft (Endpoints > Checkout: DELETE
`/links/{linkId}` "Drafts only"), deletes each product no link was made from and archives the others
("Only while `linkCount` is 0, else 409 (archive instead)"), and deletes the recipients (DELETE
`/{recipientId}`). One request per row, counted like any other; a refusal or an error is ignored: cleanup never
fails a test. Left behind, because no key can remove them: sent links (they can only be paused), payouts,
batches, checkout payments, events, and the sandbox webhook endpoints (a key can only register them; the
suites register one per worker and reuse it, `deliveries.reused`). What a worker made for the whole run
(`runwide`) other workers may still use after its own tests are over: it hands those rows over (`hand_over`, a
file in the run's directory) and the controller removes them once every worker is done (`take_over`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from payconform.suite import Api, Exchange, run_contract

from . import runwide

CREATES = {"createBeneficiary": "recipient", "createCheckoutProduct": "product", "createCheckoutLink": "link"}
DELETES = {"deleteBeneficiary": ("recipient", "recipientId"), "deleteCheckoutProduct": ("product", "productId"),
           "deleteCheckoutLink": ("link", "linkId")}
SENDS = {"publishCheckoutLink", "pauseCheckoutLink"}  # a link that is no longer a draft cannot be deleted
ARCHIVES = "updateCheckoutProduct"
HANDED = "leftovers-shared-"  # the files in the run's directory of the rows workers made for the whole run


@dataclass
class Made:
    """One row this worker created: its kind, id, the path it was created under (which names the
    organization), and what the sweep needs to know (a link still a draft, a product with links, archived,
    made for the whole run)."""

    kind: str
    id: str
    path: str
    draft: bool = True
    linked: bool = False
    archived: bool = False
    shared: bool = False


@dataclass
class Leftovers:
    rows: dict[tuple[str, str], Made] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, ex: Exchange) -> None:
        """Keep or forget what this exchange created or removed (a transport observer: never raises)."""
        try:
            if 200 <= ex.status < 300:
                with self.lock:
                    self._note(ex)
        except Exception:  # noqa: BLE001 - an observer must not break the request that it watches
            return

    def _note(self, ex: Exchange) -> None:
        path = urlsplit(ex.request.url).path
        op_id = ex.op_id or _create_of(ex.request.method, path)  # a raw request (Mode B tests sign their own)
        if op_id in CREATES:
            body = ex.json if isinstance(ex.json, dict) else {}
            if isinstance(body.get("id"), str):
                made = Made(CREATES[op_id], body["id"], path, draft=body.get("status", "draft") == "draft",
                            shared=runwide.making())
                self.rows[(made.kind, made.id)] = made
            if op_id == "createCheckoutLink":
                self._linked(ex.request.json, body)
            return
        if op_id not in DELETES and op_id not in SENDS and op_id != ARCHIVES:
            return
        names = _path_params(op_id, path)
        if op_id in DELETES:
            kind, name = DELETES[op_id]
            self.rows.pop((kind, names.get(name, "")), None)
        elif op_id in SENDS and ("link", names.get("linkId", "")) in self.rows:
            self.rows[("link", names["linkId"])].draft = False
        elif op_id == ARCHIVES and ("product", names.get("productId", "")) in self.rows:
            sent = ex.request.json if isinstance(ex.request.json, dict) else {}
            self.rows[("product", names["productId"])].archived = sent.get("archived") is True

    def _linked(self, *bodies: Any) -> None:
        """Mark the products a link was made from (`productId`, or `items[].productId`)."""
        for body in bodies:
            if not isinstance(body, dict):
                continue
            ids = [body.get("productId")] + [i.get("productId") for i in body.get("items") or [] if isinstance(i, dict)]
            for product_id in ids:
                if isinstance(product_id, str) and ("product", product_id) in self.rows:
                    self.rows[("product", product_id)].linked = True

    def hand_over(self, run_dir: Path) -> None:
        """Leave the rows made for the whole run to the controller (a worker whose tests are over)."""
        with self.lock:
            shared = [asdict(m) for m in self.rows.values() if m.shared]
            for m in shared:
                del self.rows[(m["kind"], m["id"])]
        if shared:
            (run_dir / f"{HANDED}{os.getpid()}.json").write_text(json.dumps(shared), encoding="utf-8")

    def take_over(self, run_dir: Path) -> None:
        """The rows the workers handed over, to sweep with this process's own (the controller, at the end)."""
        for path in run_dir.glob(f"{HANDED}*.json"):
            with self.lock:
                self.rows.update({(m["kind"], m["id"]): Made(**m) for m in json.loads(path.read_text("utf-8"))})

    def sweep(self, api: Api, pick: Callable[[], Api] | None = None) -> int:
        """Remove what this worker made in `api`'s organization; how many requests that took. With a key pool,
        `pick` gives the client of each row's removal (the least used key then): on one key the sweep of a
        run's rows would wait out that key's windows at the end of the run."""
        with self.lock:
            mine = [m for m in self.rows.values() if f"/{api.org_id}/" in m.path + "/"]
            self.rows.clear()
        order = {"link": 0, "product": 1, "recipient": 2}
        sent = 0
        for made in sorted(mine, key=lambda m: order[m.kind]):
            try:
                sent += _remove(pick() if pick else api, made)
            except Exception:  # noqa: BLE001 - cleanup never fails a run (the target may have stopped answering)
                return sent
        return sent


def _remove(api: Api, made: Made) -> int:
    """Remove one row the API can remove; how many requests that took."""
    if made.kind == "link":
        if not made.draft:
            return 0
        api.op("deleteCheckoutLink", linkId=made.id)
        return 1
    if made.kind == "recipient":
        api.op("deleteBeneficiary", recipientId=made.id)
        return 1
    if made.archived:
        return 0
    if not made.linked and 200 <= api.op("deleteCheckoutProduct", productId=made.id).status < 300:
        return 1
    api.op("updateCheckoutProduct", productId=made.id, json={"archived": True})
    return 1 if made.linked else 2


def _path_params(op_id: str, path: str) -> dict[str, str]:
    """The path parameters of an operation's request, read against its path in the profile."""
    template = str(run_contract().operation(op_id).get("path") or "")
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    found = re.search(pattern + "$", path)
    return found.groupdict() if found else {}


def _create_of(method: str, path: str) -> str | None:
    """The create operation a request without an operation id is (by its method and path), if any."""
    for op_id in CREATES:
        op = run_contract().operation(op_id)
        if str(op.get("method", "")).upper() == method.upper() and _path_params(op_id, path):
            return op_id
    return None


LEFTOVERS = Leftovers()  # this worker's

