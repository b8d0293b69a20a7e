import multiprocessing as mp
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from payconform.pacing import pacer as pacing, files as pacing_files
from payconform import paths
from payconform.pacing.pacer import Pacer, credential_id, route_limits
from payconform.pacing.files import new_db_path, run_db_path, target_db_path

ROOT = Path(__file__).resolve().parents[2]
KEY_C = "svc_test_" + "c" * 32 + "_" + "C" * 43

KEY_A = "svc_test_" + "a" * 32 + "_" + "A" * 43
KEY_B = "svc_test_" + "b" * 32 + "_" + "B" * 43
WINDOW = 0.5


def _hammer(path, key, n, rate, ip_rate):
    pacer = Pacer(path, rate, ip_rate, window=WINDOW)
    for _ in range(n):
        pacer.acquire(key)


def _max_in_window(timestamps, window):
    ts = sorted(timestamps)
    best = 0
    j = 0
    for i, t in enumerate(ts):
        while ts[j] <= t - window:
            j += 1
        best = max(best, i - j + 1)
    return best


def _run_two(path, keys, n, rate, ip_rate):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(path), k, n, rate, ip_rate)) for k in keys]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0


def test_two_processes_share_one_credential_budget(tmp_path):
    path = new_db_path(tmp_path)
    Pacer(path, 10, 1000, window=WINDOW)  # create the table first
    _run_two(path, [KEY_A, KEY_A], 12, rate=10, ip_rate=1000)
    pacer = Pacer(path, 10, 1000, window=WINDOW)
    ts = pacer.timestamps(KEY_A)
    assert len(ts) == 24
    assert _max_in_window(ts, WINDOW) <= 10
    assert _max_in_window(ts, WINDOW) >= 9  # and the budget is actually used


def test_two_processes_share_the_ip_budget(tmp_path):
    path = new_db_path(tmp_path)
    Pacer(path, 100, 10, window=WINDOW)
    _run_two(path, [KEY_A, KEY_B], 10, rate=100, ip_rate=10)
    pacer = Pacer(path, 100, 10, window=WINDOW)
    ts = pacer.timestamps()
    assert len(ts) == 20
    assert _max_in_window(ts, WINDOW) <= 10


def test_no_key_is_stored(tmp_path):
    path = new_db_path(tmp_path)
    pacer = Pacer(path, 10, 100, window=WINDOW)
    pacer.acquire(KEY_A)
    rows = sqlite3.connect(path).execute("SELECT cred FROM sends").fetchall()
    assert rows == [(credential_id(KEY_A),)]
    assert KEY_A[9:41] not in open(path, "rb").read().decode("latin-1")


def test_least_loaded_and_exempt(tmp_path):
    now = [1000.0]
    slept = []
    pacer = Pacer(new_db_path(tmp_path), 10, 1000, window=60, clock=lambda: now[0], sleep=slept.append,
                  exempt=[KEY_B])
    for _ in range(3):
        pacer.acquire(KEY_A)
    assert pacer.least_loaded([KEY_A, KEY_B]) == KEY_B
    for _ in range(5):
        pacer.acquire(KEY_B)
    assert pacer.least_loaded([KEY_A, KEY_B]) == KEY_A
    # the exempt key (rate_limit_key) may go past the credential budget without waiting
    for _ in range(20):
        pacer.acquire(KEY_B)
    assert slept == []


def _fake_time():
    """A clock that sleeping moves forward: (now, slept, sleep)."""
    now = [1000.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    return now, slept, sleep


def test_acquire_waits_for_the_window(tmp_path):
    now, slept, sleep = _fake_time()
    pacer = Pacer(new_db_path(tmp_path), 10, 1000, window=61, clock=lambda: now[0], sleep=sleep)
    for _ in range(10):  # the whole limit
        pacer.acquire(KEY_A)
    assert slept == []
    waited = pacer.acquire(KEY_A)
    assert waited == pytest.approx(61.0, abs=0.1)  # the oldest send had to leave the 61 s window


def test_an_urgent_request_takes_the_next_free_slot(tmp_path):
    """A payout walk's read is due at an instant of real time: while it waits (in any process), the slot that
    frees next is its, and the other requests with that credential wait for the one after."""
    now, slept, sleep = _fake_time()
    path = new_db_path(tmp_path)
    pacer = Pacer(path, 10, 1000, window=61, clock=lambda: now[0], sleep=sleep)
    walk = Pacer(path, 10, 1000, window=61, clock=lambda: now[0], sleep=sleep)  # another process's
    start = now[0]
    for _ in range(10):  # the whole limit, one send a second
        pacer.acquire(KEY_A)
        now[0] += 1.0
    now[0] = start + 61.5  # the first send has left the window: one slot is free
    with walk._waiting_urgently(credential_id(KEY_A)):  # the walk's read waits for it
        waited = pacer.acquire(KEY_A)  # another test's request leaves it be: it takes the slot after (62.0)
    assert waited == pytest.approx(0.5, abs=pacing.URGENT_POLL)
    assert pacer.acquire(KEY_B) == 0.0  # another credential's requests are not held
    now[0] = start + 63.2  # the sends at 1.0 and 2.0 have left: two slots free, nobody waits urgently
    with pacing.urgent():
        assert walk.acquire(KEY_A) == 0.0
    assert pacer.acquire(KEY_A) == 0.0
    assert pacer.acquire(KEY_A) == pytest.approx(64.0 - 63.2, abs=0.01)  # the window is full again
    assert walk._conn().execute("SELECT COUNT(*) FROM urgent").fetchone()[0] == 0  # nothing kept once sent


def test_a_slot_frees_a_window_after_its_answer(tmp_path):
    """The target counts a request somewhere between its send and its answer: a slow answer holds the slot
    a window from the answer, so a delayed request never lands in the same window as a later one."""
    now, slept, sleep = _fake_time()
    pacer = Pacer(new_db_path(tmp_path), 2, 1000, window=61, clock=lambda: now[0], sleep=sleep)
    pacer.acquire(KEY_A)
    now[0] += 5.0  # the answer comes 5 s later
    pacer.settle()
    pacer.acquire(KEY_A)
    pacer.settle()
    pacer.settle()  # nothing pending: no change
    assert pacer.acquire(KEY_A) == pytest.approx(61.0, abs=0.1)  # 61 s after the first answer (not 56: its send)



BASE_URL = "https://sandbox.example.test/business/api/v1"


def test_a_run_right_after_another_counts_what_that_one_sent(tmp_path):
    """The target's window does not end with a run: the next run on the same target and key opens the same
    pacing file and waits out the sends of the last one (its Retry-After holds too), where a run's own
    scratch file would have let it meet a 429."""
    now, slept, sleep = _fake_time()
    first = Pacer(target_db_path(BASE_URL, tmp_path), 10, 1000, window=61, clock=lambda: now[0], sleep=sleep)
    for _ in range(10):  # the first run spends the key's whole minute, then ends
        first.acquire(KEY_A)
        first.settle()
    first.hold(KEY_B, 90.0)  # a 429's Retry-After the first run met
    first.close()
    now[0] += 30.0
    second = Pacer(target_db_path(BASE_URL + "/", tmp_path), 10, 1000, window=61, clock=lambda: now[0], sleep=sleep)
    assert second.acquire(KEY_A) == pytest.approx(31.0, abs=0.1)  # 61 s after the first run's answers
    assert second.acquire(KEY_B) == pytest.approx(29.0, abs=0.1)  # 90 s after the first run's 429
    elsewhere = Pacer(target_db_path("https://other.example.test/api", tmp_path), 10, 1000, window=61,
                      clock=lambda: now[0], sleep=sleep)
    assert elsewhere.sent_after(KEY_A, 0.0) == [] and elsewhere.acquire(KEY_B) == 0.0  # another target: its own file


def _used(pacer: Pacer) -> None:
    """One send through `pacer`, then its connection closed: an open one checkpoints into the file (and touches
    it) whenever the cycle collector gets to it."""
    pacer.acquire(KEY_A)
    pacer.close()


def test_a_targets_pacing_file_holds_no_secret_and_stale_files_go(tmp_path, monkeypatch):
    monkeypatch.setenv(pacing_files.CACHE_VAR, str(tmp_path / "cache"))
    url = BASE_URL + "?token=" + "s" * 24
    path = run_db_path(url, tmp_path / "scratch")
    assert path.parent == tmp_path / "cache" / "pacing" and path == target_db_path(url.replace("https://sandbox", "HTTPS://SANDBOX"))
    assert run_db_path(None, tmp_path) != run_db_path(None, tmp_path)  # a server the run started: scratch
    _used(Pacer(path, 10, 100))
    stored = b"".join(p.read_bytes() for p in path.parent.iterdir())
    assert KEY_A[9:41].encode() not in stored and b"s" * 24 not in stored and b"example" not in stored
    stale = target_db_path("https://stale.example.test", tmp_path / "cache" / "pacing")
    _used(Pacer(stale, 10, 100))
    old = pacing_files.time.time() - pacing_files.STALE_AFTER - 10
    for part in stale.parent.glob(stale.name + "*"):
        os.utime(part, (old, old))
    target_db_path(BASE_URL, tmp_path / "cache" / "pacing")
    assert list(stale.parent.glob(stale.name + "*")), "swept again within the hour of the last sweep"
    mark = stale.parent / pacing_files.SWEPT_MARK
    within = pacing_files.time.time() - pacing_files.SWEEP_EVERY + 60
    os.utime(mark, (within, within))
    target_db_path(BASE_URL, tmp_path / "cache" / "pacing")
    assert list(stale.parent.glob(stale.name + "*")), "swept again within the hour of the last sweep"
    due = pacing_files.time.time() - pacing_files.SWEEP_EVERY - 1
    os.utime(mark, (due, due))
    target_db_path(BASE_URL, tmp_path / "cache" / "pacing")
    assert not list(stale.parent.glob(stale.name + "*")) and path.exists()


HISTORY = "http://h/business/api/v1/payments/organizations/ck1/balance/history?limit=5"
BATCHES = "http://h/business/api/v1/payments/organizations/ck1/payouts/batches"


def _route_pacer(tmp_path):
    now, slept, sleep = _fake_time()
    rows = yaml.safe_load((ROOT / "contract" / "catalog" / "limits.yaml").read_text())["rate_limits"]
    return Pacer(new_db_path(tmp_path), 1000, 100000, window=61, clock=lambda: now[0], sleep=sleep,
                 routes=route_limits(rows), exempt=[KEY_C]), slept


def test_balance_history_has_a_budget_per_credential(tmp_path):
    pacer, slept = _route_pacer(tmp_path)
    for _ in range(60):  # the row's 60 a minute
        pacer.acquire(KEY_A, "GET", HISTORY)
    pacer.acquire(KEY_B, "GET", HISTORY)  # another credential has its own history budget
    pacer.acquire(KEY_A, "GET", HISTORY.replace("/history", ""))  # the balance itself is not held to it
    pacer.acquire(KEY_C, "GET", HISTORY)  # exempt: trips limits on purpose
    assert slept == []
    assert pacer.acquire(KEY_A, "GET", HISTORY) == pytest.approx(61.0, abs=0.1)


def test_batch_submission_has_one_budget_for_the_run(tmp_path):
    """The row does not say whose 30 per minute: every paced credential shares it."""
    pacer, slept = _route_pacer(tmp_path)
    for _ in range(40):
        pacer.acquire(KEY_C, "POST", BATCHES)  # exempt, and not counted
    for key in (KEY_A, KEY_B) * 15:  # the row's 30 a minute
        pacer.acquire(key, "POST", BATCHES)
    pacer.acquire(KEY_B, "GET", BATCHES)  # reading batches is not submitting
    for _ in range(5):
        pacer.acquire(None, "POST", BATCHES)  # no credential: the per-IP ceiling only
    assert slept == []
    assert pacer.acquire(KEY_B, "POST", BATCHES) == pytest.approx(61.0, abs=0.1)
    # the exempt key's submissions are recorded all the same: a rate-limit test counts them
    assert len(pacer.sent_after(KEY_C, 0.0, "batch_submission")) == 40 == len(pacer.sent_after(KEY_C, 0.0))


def test_the_pacing_file_is_a_write_ahead_log(tmp_path):
    """A rollback journal fsyncs every send, as long as a request on a busy disk; the log does not."""
    path = new_db_path(tmp_path)
    Pacer(path, 10, 100, window=WINDOW).acquire(KEY_A)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_retry_after_holds_the_credential_in_every_process(tmp_path):
    now, slept, sleep = _fake_time()
    path = new_db_path(tmp_path)
    pacer = Pacer(path, 100, 1000, window=61, clock=lambda: now[0], sleep=sleep, exempt=[KEY_C])
    other = Pacer(path, 100, 1000, window=61, clock=lambda: now[0], sleep=sleep)  # another worker
    pacer.hold(KEY_A, 7.0)
    pacer.hold(KEY_C, 30.0)  # exempt: trips its limit on purpose, never held
    other.acquire(KEY_B)
    other.acquire(KEY_C)
    assert slept == []
    assert other.acquire(KEY_A) == pytest.approx(7.0, abs=0.01)
    assert other.acquire(KEY_A) == 0.0  # the hold is over


def test_each_module_is_spread_over_the_run():
    """Tests that wait on the same thing (deliveries, the batch budget) do not all run at once; a module
    sharing a wider fixture stays in one block."""
    from payconform.plugin.order import spread

    events, fuzz, shared = ["e0", "e1"], ["f0", "f1", "f2", "f3"], ["s0", "s1", "s2"]
    order = spread([events, fuzz, shared], [False, False, True])
    assert sorted(order) == sorted(events + fuzz + shared)
    assert order == ["f0", "e0", "f1", "f2", "e1", "s0", "s1", "s2", "f3"]
    assert spread([]) == []


def test_tests_that_fill_lists_run_last():
    """A test marked ``fill`` (many rows, or a list's shortfall) goes after the others, which make its rows; one
    marked ``late`` (checked on the answers the others got) after those."""
    from types import SimpleNamespace

    from payconform.plugin.order import fills_last

    def item(name, mark=None):
        return SimpleNamespace(name=name, get_closest_marker=lambda wanted: object() if wanted == mark else None)

    order = fills_last([item("l1", "late"), item("a"), item("f1", "fill"), item("b"), item("f2", "fill"),
                        item("c")])
    assert [i.name for i in order] == ["a", "b", "c", "f1", "f2", "l1"]


def test_in_the_smoke_tier_the_long_real_time_waits_start_first(tmp_path):
    """``long_wait`` tests (the bank return's 90 s) go first where the tier runs marked tests; the suites mark
    the `payout.returned` row of the event types, and a smoke collection hands it out first."""
    from types import SimpleNamespace

    from payconform.plugin.order import long_waits_first

    def item(name, wait=False):
        return SimpleNamespace(name=name,
                               get_closest_marker=lambda mark: object() if wait and mark == "long_wait" else None)

    order = long_waits_first([item("a"), item("w1", True), item("b"), item("w2", True)])
    assert [i.name for i in order] == ["w1", "w2", "a", "b"]
    listed = subprocess.run([sys.executable, "-m", "pytest", str(paths.suites_dir()), "-p", "payconform.plugin",
                             "--tier", "smoke", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
                            capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path).stdout.splitlines()
    first = next(line for line in listed if "::" in line)
    assert first.endswith("test_event_type_is_delivered_and_fed[payout.returned]"), first


def test_a_wider_fixture_keeps_its_module_whole():
    from types import SimpleNamespace

    from payconform.plugin.order import _shares_fixtures

    def item(*scopes):
        defs = {f"f{i}": [SimpleNamespace(scope=s)] for i, s in enumerate(scopes)}
        return SimpleNamespace(_fixtureinfo=SimpleNamespace(name2fixturedefs=defs))

    assert _shares_fixtures(item("function", "module"))
    assert not _shares_fixtures(item("function", "session"))  # one per worker whatever the order

