"""What a run made and the API can remove (`suites/_support/leftovers.py`): noted from each exchange, removed at
the end with one request per row, in the target's organization only, never failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from payconform.provision import provision_reference
from payconform.refserver import RefServer

from suites._support.leftovers import Leftovers

BASE = "http://127.0.0.1:1/business/api/v1"
ORG, OTHER = "org_mine", "org_other"


def _ex(op_id: str | None, path: str, answer: Any = None, sent: Any = None, status: int = 200,
        method: str = "POST") -> Any:
    request = SimpleNamespace(url=BASE + path + "?x=1", json=sent, method=method)
    return SimpleNamespace(op_id=op_id, status=status, json=answer, request=request)


class FakeApi:
    org_id = ORG

    def __init__(self, refuse: set[str] = frozenset(), broken: bool = False) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.refuse, self.broken = refuse, broken

    def op(self, op_id: str, **kw: Any) -> Any:
        if self.broken:
            raise AssertionError("the target stopped answering")
        self.calls.append((op_id, kw))
        return SimpleNamespace(status=409 if op_id in self.refuse else 200)


def _made(left: Leftovers) -> None:
    products = f"/checkout/organizations/{ORG}/products"
    links = f"/checkout/organizations/{ORG}/links"
    for n in range(1, 5):
        left.note(_ex("createCheckoutProduct", products, {"id": f"prod_{n}"}, status=201))
    left.note(_ex("createCheckoutLink", links, {"id": "lnk_draft", "status": "draft"}, {"productId": "prod_1"}, 201))
    left.note(_ex("createCheckoutLink", links, {"id": "lnk_sent", "status": "sent"},
                  {"items": [{"productId": "prod_2", "quantity": 1}]}, 201))
    left.note(_ex("createCheckoutLink", links, {"id": "lnk_published", "status": "draft"}, {"productId": "prod_1"},
                  201))
    left.note(_ex("publishCheckoutLink", f"{links}/lnk_published/publish", {"id": "lnk_published"}))
    left.note(_ex("updateCheckoutProduct", f"{products}/prod_3", {"id": "prod_3"}, {"archived": True}))
    left.note(_ex("createCheckoutProduct", products, {"id": "prod_refused"}, status=409))
    left.note(_ex("createBeneficiary", f"/recipients/{ORG}", {"id": "rcp_1"}, status=201))
    left.note(_ex("createBeneficiary", f"/recipients/{ORG}", {"id": "rcp_gone"}, status=201))
    left.note(_ex("deleteBeneficiary", f"/recipients/{ORG}/rcp_gone", {}))
    left.note(_ex("createBeneficiary", f"/recipients/{OTHER}", {"id": "rcp_other"}, status=201))
    left.note(_ex("createBeneficiary", f"/recipients/{ORG}", "not json", status=201))
    left.note(_ex(None, f"/recipients/{ORG}", {"id": "rcp_signed"}, status=201, method="POST"))  # a raw request
    left.note(_ex(None, f"/recipients/{ORG}/rcp_signed", {"id": "rcp_signed"}, method="GET"))


def test_the_sweep_removes_what_the_api_allows_once_each() -> None:
    left, api = Leftovers(), FakeApi()
    _made(left)
    assert left.sweep(api) == 6  # type: ignore[arg-type]
    assert api.calls == [
        ("deleteCheckoutLink", {"linkId": "lnk_draft"}),
        ("updateCheckoutProduct", {"productId": "prod_1", "json": {"archived": True}}),
        ("updateCheckoutProduct", {"productId": "prod_2", "json": {"archived": True}}),
        ("deleteCheckoutProduct", {"productId": "prod_4"}),
        ("deleteBeneficiary", {"recipientId": "rcp_1"}),
        ("deleteBeneficiary", {"recipientId": "rcp_signed"}),
    ]
    assert left.sweep(api) == 0 and len(api.calls) == 6  # type: ignore[arg-type]


def test_a_refused_delete_archives_and_a_dead_target_ends_the_sweep_quietly() -> None:
    left, api = Leftovers(), FakeApi(refuse={"deleteCheckoutProduct"})
    left.note(_ex("createCheckoutProduct", f"/checkout/organizations/{ORG}/products", {"id": "prod_x"}, status=201))
    assert left.sweep(api) == 2  # type: ignore[arg-type]
    assert [c[0] for c in api.calls] == ["deleteCheckoutProduct", "updateCheckoutProduct"]
    _made(left)
    assert left.sweep(FakeApi(broken=True)) == 0  # type: ignore[arg-type]



def test_with_a_pool_each_row_goes_to_the_key_picked_for_it() -> None:
    """A run with a key pool spreads its sweep over the pool (one key's windows would hold up the run's end):
    each removal goes to the client `pick` gives, and only rows of the first client's organization go."""
    left, first, keys = Leftovers(), FakeApi(), [FakeApi(), FakeApi()]
    _made(left)
    turn = iter(keys * 10)
    assert left.sweep(first, lambda: next(turn)) == 6  # type: ignore[arg-type]
    assert not first.calls and sum(len(k.calls) for k in keys) == 6 and all(k.calls for k in keys)
    assert {c[1].get("recipientId") for k in keys for c in k.calls} >= {"rcp_1", "rcp_signed"}


def test_keep_created_leaves_the_rows_and_spends_no_request_on_them(tmp_path: Path) -> None:
    """`payconform run --keep-created` leaves the recipient its test made: the same run without it spends one
    request more, the sweep's delete."""
    spent = {}
    with RefServer() as server:
        target_file = provision_reference(server).dump(tmp_path / "target.yaml")
        for keep in (True, False):
            report = tmp_path / f"keep-{keep}"
            cmd = [sys.executable, "-m", "payconform.cli", "run", "--target", str(target_file), "--report-dir",
                   str(report), "-n", "0", "--no-fuzz", "--select", "test_created_recipient_reads_back",
                   *(["--keep-created"] if keep else [])]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
            spent[keep] = json.loads((report / "results.json").read_text())["cost"]["requests"]
    assert spent[False] == spent[True] + 1, f"requests with and without --keep-created: {spent}"
