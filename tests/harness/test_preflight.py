"""The preflight tells a dead, foreign or refused target apart in seconds, and passes a conforming one.

"In seconds" is the number of requests before the verdict and the deadline each is given (its transport's
total deadline, ``PREFLIGHT_TIMEOUT`` at most): what the preflight sends is recorded, never timed."""

from __future__ import annotations

import copy
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from payconform import preflight as preflight_module
from payconform.client import Api
from payconform.preflight import POLICY_PATH, PREFLIGHT_TIMEOUT, Preflight, preflight
from payconform.profile.preflight_step import PREFLIGHT_PROBES, profile_step, ranked
from payconform.profile.probe import calls
from payconform.profile.resolve import default_profile
from payconform.provision import provision_reference
from payconform.refserver import RefServer
from payconform.target import Target
from tests.harness.wire import Counting

# The bound for a run against a broken target, of which the preflight is the first seconds: the
# requests a broken target is given before the verdict, each by its deadline, fit in it.
BOUND = 10.0


def _unknown_key() -> str:
    return f"svc_test_{secrets.token_hex(16)}_{secrets.token_urlsafe(32)[:43]}"


def _target(base_url: str, api_key: str | None = None, **credentials: str) -> Target:
    creds = {"api_key": api_key, **credentials} if api_key else dict(credentials)
    return Target.from_dict({"base_url": base_url, "org_id": "ckpreflightorg0000000000", "credentials": creds})


@pytest.fixture(scope="module")
def reference() -> Iterator[Target]:
    with RefServer() as ref:
        yield provision_reference(ref)


class _Html(BaseHTTPRequestHandler):
    """A web server that is not this API: an HTML page for everything."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        body = b"<html><body>Welcome to nginx!</body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def html_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


def _dead_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The deadline (the transport's timeout) of each request the preflight sends, in order."""
    deadlines: list[float] = []

    class Recording(Api):
        def request(self, *args, **kwargs):
            deadlines.append(self.transport.timeout)
            return super().request(*args, **kwargs)

    monkeypatch.setattr(preflight_module, "Api", Recording)
    return deadlines


def _told_after_one_request(result: Preflight, sent: list[float], deadline: float = PREFLIGHT_TIMEOUT) -> None:
    """The verdict came from the first request, sent with ``deadline``: a broken target costs one deadline."""
    assert result.requests == 1 and sent == [deadline], (result.requests, sent)
    assert deadline <= PREFLIGHT_TIMEOUT < BOUND


def test_a_conforming_target_passes_in_a_handful_of_requests(reference: Target, sent: list[float]) -> None:
    result = preflight(reference)
    assert result.ok, result.fatal
    keys = sum(1 for name, value in reference.credentials.items() if isinstance(value, str) and name.endswith("_key"))
    # the unknown route, a read per key, other_org_id, and the probes of the profile's most used routes
    assert result.requests == len(sent) <= (2 + keys + len(reference.credentials.get("api_key_pool") or [])
                                            + PREFLIGHT_PROBES)
    assert any("answers as this API" in line and "ROUTE_NOT_FOUND" in line for line in result.lines)
    assert any(line.startswith("other_org_id") and "403 FORBIDDEN" in line for line in result.lines)
    assert not result.warnings, result.warnings


def test_an_unknown_key_is_refused_with_one_message(reference: Target, sent: list[float]) -> None:
    target = _target(reference.base_url, _unknown_key())
    result = preflight(target)
    assert not result.ok and "api_key is refused" in result.fatal and "UNAUTHORIZED" in result.fatal
    # the unknown route answers as this API, then the key's one read is refused: two requests, two deadlines
    assert result.requests == 2 and sent == [PREFLIGHT_TIMEOUT] * 2 and 2 * PREFLIGHT_TIMEOUT <= BOUND


def test_a_dead_port_is_told_in_seconds(sent: list[float]) -> None:
    result = preflight(_target(f"http://127.0.0.1:{_dead_port()}/business/api/v1", _unknown_key()))
    assert not result.ok and "does not answer" in result.fatal
    _told_after_one_request(result, sent)


def test_a_target_that_never_answers_is_told_within_the_bound(silent_port: int, sent: list[float]) -> None:
    """The silent target is given its request's whole deadline (a target file's shorter one here, so the test
    waits one second, not five) and no second request."""
    target = _target(f"http://127.0.0.1:{silent_port}/business/api/v1", _unknown_key())
    target.request_timeout = 1.0
    result = preflight(target)
    assert not result.ok and "does not answer" in result.fatal
    _told_after_one_request(result, sent, deadline=1.0)


def test_a_web_server_that_is_not_this_api_is_named(html_server: str, sent: list[float]) -> None:
    result = preflight(_target(f"{html_server}/business/api/v1", _unknown_key()))
    assert not result.ok and "does not answer as this API" in result.fatal and "text/html" in result.fatal
    _told_after_one_request(result, sent)


def test_no_credential_at_all_is_refused_before_any_request(reference: Target) -> None:
    result = preflight(_target(reference.base_url))
    assert not result.ok and "no credential" in result.fatal
    assert result.requests == 0


def test_a_revoked_key_that_still_works_is_reported_not_fatal(reference: Target) -> None:
    target = _target(reference.base_url, reference.api_key, revoked_key=reference.api_key)
    target.org_id = reference.org_id
    result = preflight(target)
    assert result.ok, result.fatal
    assert any(w.startswith("revoked_key: answers 200") for w in result.warnings), result.warnings


def test_a_key_whose_window_is_full_is_not_refused(reference: Target) -> None:
    """Right after a run's rate-limit tests the unpaced key's window is full: the key is known, not refused."""
    limited = Api(reference, reference.credential("rate_limit_key"))
    answers = [limited.request("GET", POLICY_PATH, raw=True).status for _ in range(101)]
    assert answers[-1] == 429
    result = preflight(reference)
    assert result.ok, result.fatal
    assert any(line.startswith("rate_limit_key: answers 429 RATE_LIMITED") for line in result.lines), result.lines


@pytest.mark.parametrize("path", ["/x/business/api/v1", "/business/api/v1/business/api/v1"],
                         ids=["extra-segment", "prefix-twice"])
def test_a_base_url_whose_path_misses_the_api_is_told_as_such(reference: Target, path: str) -> None:
    """A wrong path answers ROUTE_NOT_FOUND to the unknown route, as the API would, and to the key's read of a
    route the spec defines: the cause told is the path, not a refused key."""
    target = _target(reference.base_url.removesuffix("/business/api/v1") + path, reference.api_key)
    target.org_id = reference.org_id
    result = preflight(target)
    assert not result.ok and "is refused" not in result.fatal, result.fatal
    assert result.fatal.startswith("the base URL's path does not reach this API"), result.fatal
    assert "404 ROUTE_NOT_FOUND" in result.fatal and f"GET {path}/payments/organizations/" in result.fatal
    assert "is the path right?" in result.fatal and result.requests == 2



@pytest.fixture(scope="module")
def other_choices() -> Iterator[tuple[Target, str]]:
    """The reference configured otherwise where the spec does not show (other paths), and its root URL."""
    with RefServer(choices="other") as ref:
        yield provision_reference(ref), str(ref.root_url)


def test_the_routes_most_tests_go_through_are_probed_first() -> None:
    profile = default_profile()
    order = ranked(profile, calls())
    assert set(order[:2]) == {"fundSandbox", "createBeneficiary"}, order
    assert all(profile["operations"][op_id]["source"] == "profile" for op_id in order)
    assert all(profile["operations"][op_id]["method"] == "GET" for op_id in ranked(profile, calls(), live=True))


def test_the_profile_step_says_the_routes_match_within_its_budget(reference: Target) -> None:
    wire = Counting()
    step = profile_step(reference, Api(reference, reference.api_key, transport=wire))
    assert not step.warnings, step.warnings
    [line] = step.lines
    assert line.startswith(f"profile: {PREFLIGHT_PROBES} route(s) answer as the profile says: ") and (
        "fundSandbox" in line and "createBeneficiary" in line), line
    assert step.requests == len(wire.sent) == PREFLIGHT_PROBES, wire.sent
    assert all(not s.startswith(("DELETE", "PUT")) for s in wire.sent)


def test_a_route_served_elsewhere_is_a_warning_naming_its_entry_not_fatal(other_choices) -> None:
    target, _ = other_choices
    result = preflight(target)
    assert result.ok, result.fatal
    funding = next(w for w in result.warnings if w.startswith("profile: operations.fundSandbox.path: "))
    assert "404 ROUTE_NOT_FOUND" in funding and "x-request-id req_" in funding, funding
    assert any("not fatal" in w and "payconform profile suggest" in w for w in result.warnings), result.warnings
    assert not any(secret in line for secret in target.secrets() for line in result.warnings + result.lines)


def test_the_document_is_read_once_and_its_routes_probed(other_choices) -> None:
    """The target's OpenAPI document, still to be read, is folded into its profile: the probes go where the
    run's requests will, and the run does not fetch the document again."""
    target, root_url = other_choices
    target = copy.deepcopy(target)
    target.openapi = f"{root_url}/openapi.json"
    result = preflight(target)
    assert result.ok, result.fatal
    assert not result.warnings, result.warnings
    assert any(line.startswith(f"profile: {PREFLIGHT_PROBES} route(s) answer") for line in result.lines)
    default_path = default_profile()["operations"]["fundSandbox"]["path"]
    assert target.openapi is None and target.profile["operations"]["fundSandbox"]["path"] != default_path
