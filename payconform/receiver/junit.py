"""`junit.xml` for CI, from the kit's results rows (the same rows as results.json's `tests`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


def write_junit(path: Path, tests: list[dict], suite: str = "payconform-receiver") -> Path:
    """One testcase per check: `failure` with the (redacted) message, `skipped` with the reason."""
    failed = sum(1 for t in tests if t["outcome"] == "failed")
    skipped = sum(1 for t in tests if t["outcome"] == "skipped")
    root = ET.Element("testsuites")
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(tests)), failures=str(failed), errors="0",
                         skipped=str(skipped), time=f"{sum(t['duration'] for t in tests):.3f}")
    for t in tests:
        case = ET.SubElement(node, "testcase", classname=suite, name=t["nodeid"], time=f"{t['duration']:.3f}")
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="requirements",
                      value=" ".join(t["requirements"]))
        if t["outcome"] == "failed":
            message = t.get("message") or ""
            ET.SubElement(case, "failure", message=message.splitlines()[0] if message else "").text = message
        elif t["outcome"] == "skipped":
            ET.SubElement(case, "skipped", message=t.get("skip_reason") or "")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path
