"""Run the suite against one reference server with three target shapes, each twice.

The shapes are what users hold (issue 14): ``keys`` - `api_key` and `other_org_id` only; ``credentials`` -
every credential the reference provisions, one key of each (no key pool); ``full`` - the provisioned target
with its key pool and operator. The two no-operator shapes run without an operator adapter. Every run is
`payconform run --target FILE`, as a user runs it, on the same server and organization: the second round
sees every row the first one left.

The server runs with scaled limits (``--rate-limit``, ``--ip-rate-limit``) and each target file declares them,
so pacing follows them and a one-key run takes minutes instead of twenty; what that changes is only the
rate-limit checks, which judge a declared limit or skip saying why (`suites/_support/rates.py`).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from payconform.cli.serve import limit_args
from payconform.provision import provision_reference
from payconform.refserver import RefServer
from payconform.target import Target

from .conftest import REPORTS, ROOT, SuiteRun

SHAPES = ("full", "keys", "credentials")  # the full shape first: its first run meets an empty organization
ROUNDS = 2
RATE_LIMIT = 2000  # twenty times the spec's per-credential default (history 1,200, batch submission 600)
IP_RATE_LIMIT = 40000  # twenty times the spec's per-source-IP ceiling
RUN_TIMEOUT = 1800


@dataclass
class ShapeRun:
    """One `payconform run` of one shape: its results, requests, wall and CPU seconds (of the run's processes)."""

    shape: str
    round: int
    run: SuiteRun
    wall: float
    cpu: float

    @property
    def counts(self) -> dict[str, int]:
        out = {"passed": 0, "failed": 0, "skipped": 0}
        for t in self.run.tests:
            key = "failed" if t["outcome"] == "error" else t["outcome"]
            out[key] = out.get(key, 0) + 1
        return out

    @property
    def passed_requirements(self) -> set[str]:
        return {r["id"] for r in self.run.results.get("requirements", []) if r.get("verdict") == "passed"}

    @property
    def requests(self) -> int:
        return int((self.run.results.get("cost") or {}).get("requests") or 0)

    def row(self) -> dict:
        return {"shape": self.shape, "round": self.round, **self.counts,
                "requirements passed": len(self.passed_requirements), "requests": self.requests,
                "wall s": round(self.wall, 1), "cpu s": round(self.cpu, 1)}


@dataclass
class ShapeRuns:
    runs: list[ShapeRun] = field(default_factory=list)
    server_cpu: float = 0.0

    def of(self, shape: str) -> list[ShapeRun]:
        return [r for r in self.runs if r.shape == shape]


def shape_target(full: Target, shape: str) -> Target:
    """The provisioned target cut down to ``shape`` (see the module's docstring)."""
    data = full.to_dict(keep_env_refs=False)
    creds = data["credentials"]
    if shape == "keys":
        data["credentials"] = {"api_key": creds["api_key"]}
    elif shape == "credentials":
        creds.pop("api_key_pool", None)
    if shape != "full":
        data["operator"] = {"adapter": "none"}
    return Target.from_dict(data)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU of a running process (the server), from /proc; 0 where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(shape: str, round_: int, target_file: Path, out_dir: Path, secrets: list[str],
         extra: list[str]) -> ShapeRun:
    report_dir = out_dir / f"{shape}-{round_}"
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "payconform.cli", "run", "--target", str(target_file),
                           "--report-dir", str(report_dir), *extra], cwd=ROOT, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, env={**os.environ, "PYTHONHASHSEED": "0"})
    wall, after = time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    results_file = report_dir / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    run = SuiteRun(f"{shape}-{round_}", proc.returncode, proc.stdout + proc.stderr, report_dir, secrets, results)
    return ShapeRun(shape, round_, run, wall, cpu)


def run_shapes(shapes: tuple[str, ...] = SHAPES, rounds: int = ROUNDS, *, rate_limit: int = RATE_LIMIT,
               ip_rate_limit: int = IP_RATE_LIMIT, extra: list[str] | None = None,
               out_dir: Path | None = None) -> ShapeRuns:
    """One reference server at the given limits; ``rounds`` rounds of one run per shape, in order."""
    out_dir = out_dir or REPORTS / "shapes"
    out = ShapeRuns()
    with RefServer(extra_args=limit_args(rate_limit, ip_rate_limit)) as server, \
            tempfile.TemporaryDirectory(prefix="payconform-shapes-") as private:
        full = provision_reference(server, rate_limit=rate_limit, ip_rate_limit=ip_rate_limit)
        secrets = [*full.secrets(), server.operator_token]
        files = {shape: shape_target(full, shape).dump(Path(private) / f"{shape}.yaml") for shape in shapes}
        for round_ in range(1, rounds + 1):
            for shape in shapes:
                out.runs.append(_run(shape, round_, files[shape], out_dir, secrets, list(extra or [])))
        out.server_cpu = _cpu_seconds(server.proc.pid) if server.proc else 0.0
    return out
