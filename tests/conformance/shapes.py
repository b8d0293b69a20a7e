"""Run the suite against one reference server with three target shapes, each twice.

The shapes are what users hold: ``keys`` - `api_key` and `other_org_id` only; ``credentials`` -
every credential the reference provisions, one key of each (no key pool); ``full`` - the provisioned target
with its key pool and operator. The two no-operator shapes run without an operator adapter. Every run is
`payconform run --target FILE`, as a user runs it, on the same server, each shape in an organization of its own:
its second round sees every row its first one left. The project's tests run the full shape twice and the others
once (`REPEATED`: a second round of each costs minutes of CPU and checks what the full shape's does) (a webhook endpoint cannot be deleted with a key, and each
event goes to every endpoint of its organization: one organization for all three shapes made the reference's
dispatcher send some 6,000 deliveries a tick, past its 15-second bound).

The server runs with scaled limits (``--rate-limit``, ``--ip-rate-limit``) and each target file declares them,
so pacing follows them and a one-key run takes minutes instead of twenty; what that changes is only the
rate-limit checks, which judge a declared limit or skip saying why (`suites/_support/rates.py`). The shapes of
a round run side by side (the server is busy with the other shapes' requests, as a deployment is with other
users'), and a no-operator shape runs `NO_OPERATOR_WORKERS` workers: its tests wait on the sandbox's
clocks in real time, each holding a worker (one run: 624 s with 2 workers, 218 s with 8).

`python -m tests.conformance.shapes --out DIR` runs them and writes `DIR/shapes.json` (`ShapeRuns.load` reads
it back): the project's tests start it in the background when the session collects the shapes' tests
(`tests/conftest.py`), so the runs wait on the sandbox's clocks while the other tests use the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from payconform.cli.serve import limit_args
from payconform.provision import provision_reference
from payconform.refserver import RefServer
from payconform.target import Target

from . import shape_deliveries, shapes_launch
from .conftest import REPORTS, ROOT, SuiteRun

SHAPES = ("full", "keys", "credentials")
ROUNDS = 2
RATE_LIMIT = 2000  # twenty times the spec's per-credential default (history 1,200, batch submission 600)
IP_RATE_LIMIT = 40000  # twenty times the spec's per-source-IP ceiling
RUN_TIMEOUT = 1800
NO_OPERATOR_WORKERS = 8
REPEATED = ("full",)  # the shapes the project's tests run in every round
SUMMARY = shapes_launch.SUMMARY


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
    deliveries: dict[str, dict] = field(default_factory=dict)  # per shape: `shape_deliveries.summary`
    outside_hosts: list[str] = field(default_factory=list)  # `shape_deliveries.outside_hosts`

    def of(self, shape: str) -> list[ShapeRun]:
        return [r for r in self.runs if r.shape == shape]

    def dump(self, path: Path) -> None:
        """The runs without their results (each run's report directory holds them) and without secrets."""
        rows = [{"shape": r.shape, "round": r.round, "wall": r.wall, "cpu": r.cpu, "returncode": r.run.returncode,
                 "output": r.run.output[-20000:], "report_dir": str(r.run.report_dir)} for r in self.runs]
        part = path.with_suffix(".part")
        part.write_text(json.dumps({"runs": rows, "server_cpu": self.server_cpu, "deliveries": self.deliveries,
                                    "outside_hosts": self.outside_hosts}, indent=1), encoding="utf-8")
        part.replace(path)  # whole or not at all: the shape tests read it as soon as it exists

    @classmethod
    def load(cls, path: Path) -> ShapeRuns:
        data = json.loads(path.read_text(encoding="utf-8"))
        out = cls(server_cpu=data["server_cpu"], deliveries=data.get("deliveries") or {},
                  outside_hosts=data.get("outside_hosts") or [])
        for row in data["runs"]:
            report_dir = Path(row["report_dir"])
            results_file = report_dir / "results.json"
            results = json.loads(results_file.read_text()) if results_file.exists() else {}
            run = SuiteRun(f"{row['shape']}-{row['round']}", row["returncode"], row["output"], report_dir, [], results)
            out.runs.append(ShapeRun(row["shape"], row["round"], run, row["wall"], row["cpu"]))
        return out


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


def _child(cmd: list[str]) -> tuple[int, str, float]:
    """Run ``cmd`` to its end or `RUN_TIMEOUT`: exit code, output, and the CPU seconds of it and every process it
    waited for (its xdist workers), from its own rusage (runs of other shapes go on beside it)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(proc.stdout.read()), daemon=True)
    reader.start()
    killer = threading.Timer(RUN_TIMEOUT, proc.kill)
    killer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=60)
    return proc.returncode, "".join(output), usage.ru_utime + usage.ru_stime


def _run(shape: str, round_: int, target_file: Path, out_dir: Path, secrets: list[str],
         extra: list[str]) -> ShapeRun:
    report_dir = out_dir / f"{shape}-{round_}"
    workers = [] if shape == "full" or "-n" in extra else ["-n", str(NO_OPERATOR_WORKERS)]
    started = time.monotonic()
    code, output, cpu = _child([sys.executable, "-m", "payconform.cli", "run", "--target", str(target_file),
                                "--report-dir", str(report_dir), *workers, *extra])
    wall = time.monotonic() - started
    results_file = report_dir / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    run = SuiteRun(f"{shape}-{round_}", code, output, report_dir, secrets, results)
    return ShapeRun(shape, round_, run, wall, cpu)


def run_shapes(shapes: tuple[str, ...] = SHAPES, rounds: int = ROUNDS, *, rate_limit: int = RATE_LIMIT,
               ip_rate_limit: int = IP_RATE_LIMIT, extra: list[str] | None = None,
               out_dir: Path | None = None, side_by_side: bool = True,
               repeated: tuple[str, ...] | None = None) -> ShapeRuns:
    """One reference server at the given limits, an organization per shape; ``rounds`` rounds of one run per
    shape (after the first, of the ``repeated`` shapes only: all by default), the shapes of a round side by side
    (or one after another, in order)."""
    out_dir = out_dir or REPORTS / "shapes"
    out = ShapeRuns()
    with tempfile.TemporaryDirectory(prefix="payconform-shapes-") as private, \
            RefServer(extra_args=limit_args(rate_limit, ip_rate_limit), db=Path(private) / "reference.db") as server:
        provisioned = {shape: provision_reference(server, rate_limit=rate_limit, ip_rate_limit=ip_rate_limit)
                       for shape in shapes}
        secrets = [server.operator_token, *(s for target in provisioned.values() for s in target.secrets())]
        files = {shape: shape_target(target, shape).dump(Path(private) / f"{shape}.yaml")
                 for shape, target in provisioned.items()}
        with ThreadPoolExecutor(max_workers=len(shapes) if side_by_side else 1) as pool:
            for round_ in range(1, rounds + 1):
                now = [s for s in shapes if round_ == 1 or repeated is None or s in repeated]
                out.runs += pool.map(lambda shape: _run(shape, round_, files[shape], out_dir, secrets,
                                                        list(extra or [])), now)
        out.server_cpu = _cpu_seconds(server.proc.pid) if server.proc else 0.0
        out.deliveries = shape_deliveries.summary(Path(private) / "reference.db",
                                                  {shape: str(target.org_id) for shape, target in provisioned.items()})
        out.outside_hosts = shape_deliveries.outside_hosts(Path(private) / "reference.db")
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the shapes and write `SUMMARY` into ``--out`` (the background job of the project's tests)."""
    p = argparse.ArgumentParser(description="run the target shapes against one reference server")
    p.add_argument("--out", type=Path, required=True)
    ns = p.parse_args(argv)
    ns.out.mkdir(parents=True, exist_ok=True)
    run_shapes(out_dir=ns.out, repeated=REPEATED).dump(ns.out / SUMMARY)
    return 0


if __name__ == "__main__":
    sys.exit(main())
