"""The one way a benchmark records what it measured, and the docs page made from the records.

A benchmark script starts a ``Recording`` (which notes the date and the machine), prints its figures as it
goes, and saves its table with ``Recording.save``: that writes ``benchmarks/results/<name>.json``, one file
per benchmark and command line, and regenerates ``docs/figures.md`` from every file there. The page is
generated, never edited: ``python benchmarks/record.py`` regenerates it, ``--check`` exits 1 when it is stale.
The docs quote no measured figure; they link to that page.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "figures.md"


@dataclass(frozen=True)
class Benchmark:
    """A script of benchmarks/: what it measures, and the command lines the page asks to be recorded."""

    title: str
    about: str
    commands: tuple[str, ...]


BENCHMARKS: dict[str, Benchmark] = {
    "run_cost": Benchmark(
        "What a run costs",
        "`payconform run` per tier against the reference server, with one key of each kind (`one-key`) and with "
        "the embedded reference's key pool and operator (`embedded`): requests, floor, wall time, wall/floor, "
        "unplanned 429s and requirements passed, from each run's results.json. See "
        "[Tiers and cost of a run](tiers-and-cost.md#cost-of-a-run).",
        ("python benchmarks/run_cost.py", "python benchmarks/run_cost.py --targets one-key --tiers smoke")),
    "target_shapes": Benchmark(
        "What each target shape covers and costs",
        "each [target shape](deployment.md#what-each-kind-of-target-covers) run twice against one reference "
        "server: tests passed, failed and skipped, requirements passed, requests, wall and CPU seconds.",
        ("python benchmarks/target_shapes.py",)),
    "matrix_open": Benchmark(
        "Opening a matrix of many runs",
        "`payconform report matrix` of copies of two runs (the embedded reference as is and under a mutant), opened "
        "in headless Chromium with the \"differs\" filter: the page's size and its own measure of the time from its "
        "script's start to the rows laid out. See [Comparing runs: the matrix](matrix.md).",
        ("python benchmarks/matrix_open.py",)),
    "hostile": Benchmark(
        "Runs against hostile targets",
        "`payconform run` against each hostile loopback mode (never answering, slow, garbage, resets, huge or "
        "HTML answers): wall time, exit code, whether the report was written, peak memory, leaked secrets and "
        "verdicts.",
        ("python benchmarks/hostile.py",)),
}
NUMBER_FORMAT = "{:,.0f}"  # a float of 10 or more; a smaller one keeps two decimals


def machine() -> dict[str, Any]:
    """What the figures depend on besides the code: processor, cores, memory, Python, load when it started."""
    cpuinfo = Path("/proc/cpuinfo")
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                if line.startswith("model name")), "") if cpuinfo.exists() else ""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    return {
        "cpu": cpu or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def describe(m: Mapping[str, Any]) -> str:
    """One line for a reader: ``2 cores (Model), 24.0 GiB, Python 3.11.9, Linux 6.1, load average 0.3 at start``."""
    load = f", load average {m['load_average']} at start" if m.get("load_average") is not None else ""
    return f"{m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python {m['python']}, {m['system']}{load}"


def _commit() -> str | None:
    """The checkout's commit, with ``+changes`` when its work tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if dirty else "")


class Recording:
    """One run of a benchmark script: its command line, date and machine, taken when it starts."""

    def __init__(self, name: str, argv: Sequence[str] | None = None) -> None:
        if name not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {name!r}: add it to BENCHMARKS in benchmarks/record.py")
        self.name = name
        self.argv = list(sys.argv[1:] if argv is None else argv)
        self.command = shlex.join(["python", f"benchmarks/{name}.py", *self.argv])
        self.started = datetime.now(timezone.utc)
        self.machine = machine()

    def save(self, columns: Sequence[str], rows: Sequence[Mapping[str, Any]], notes: Sequence[str] = ()) -> Path:
        """Write the record of this run (the ``columns`` of each row, and free ``notes``), then the page."""
        ended = datetime.now(timezone.utc)
        data = {
            "benchmark": self.name,
            "command": self.command,
            "date": self.started.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "seconds": round((ended - self.started).total_seconds(), 1),
            "commit": _commit(),
            "machine": self.machine,
            "columns": list(columns),
            "rows": [{c: row.get(c) for c in columns} for row in rows],
            "notes": list(notes),
        }
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{slug(self.name, self.argv)}.json"
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        PAGE.write_text(render(), encoding="utf-8")
        return path


def slug(name: str, argv: Sequence[str]) -> str:
    """The record's file name: the benchmark and its arguments, so each command line keeps its own record."""
    text = "_".join([name, *(a.lstrip("-") for a in argv)])
    return re.sub(r"[^A-Za-z0-9.=,_-]+", "-", text)[:120]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The option every benchmark script takes."""
    parser.add_argument("--no-record", action="store_true",
                        help="print the figures only; by default they are also recorded in benchmarks/results/ "
                             "and docs/figures.md")


def records() -> list[dict[str, Any]]:
    """Every recorded run, by benchmark, then command line."""
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RESULTS.glob("*.json"))]
    return sorted(found, key=lambda r: (list(BENCHMARKS).index(r["benchmark"]), r["command"]))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return NUMBER_FORMAT.format(value) if abs(value) >= 10 else f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """A Markdown table of the ``columns`` of ``rows``: what the scripts print and the page shows."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def render() -> str:
    """docs/figures.md from the records: each benchmark's recorded runs, then the commands not recorded yet."""
    recorded = records()
    lines = [
        "# Figures",
        "",
        "<!-- generated by `python benchmarks/record.py` from benchmarks/results/*.json: do not edit -->",
        "",
        "The figures that depend on a machine (times, requests, memory) come from the scripts under "
        "`benchmarks/`. Each script prints them and records them in `benchmarks/results/`, with the date, the "
        "machine and the command; this page is made from those records. Run a command again to record it "
        "on your machine (`--no-record` only prints).",
    ]
    for name, bench in BENCHMARKS.items():
        mine = [r for r in recorded if r["benchmark"] == name]
        lines += ["", f"## {bench.title}", "", f"`benchmarks/{name}.py`: {bench.about}"]
        for record in mine:
            commit = f", commit `{record['commit']}`" if record.get("commit") else ""
            lines += ["", "```sh", record["command"], "```", "",
                      f"Recorded {record['date']} in {_cell(record['seconds'])} s{commit}, on "
                      f"{describe(record['machine'])}.", "", table(record["columns"], record["rows"])]
            if record["notes"]:
                lines += ["", *(f"- {_cell(note)}" for note in record["notes"])]
        missing = [c for c in bench.commands if c not in {r["command"] for r in mine}]
        if missing:
            lines += ["", "Not recorded yet:", "", "```sh", *missing, "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate docs/figures.md from benchmarks/results/*.json.")
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale; write nothing")
    ns = parser.parse_args(argv)
    text = render()
    if ns.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: python benchmarks/record.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
