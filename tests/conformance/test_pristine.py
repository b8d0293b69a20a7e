"""The whole suite passes on the pristine reference server, and leaks no secret into its report."""

from __future__ import annotations

import pytest

from payconform.results.artifacts import find_leaks

from .conftest import SuiteRun, iter_report_files

pytestmark = pytest.mark.xdist_group("reference-runs")

# real-time tests (the reference offers the clock instead), and lists the suite cannot fill yet (shown in the
# report so users see what is not checked; each is recorded on its issue)
ALLOWED_SKIP_PREFIXES = ("needs --run-slow", "no seeder for ")


def test_every_suite_test_passes_on_the_pristine_reference(pristine_run: SuiteRun) -> None:
    assert pristine_run.tests, f"the suite ran no test:\n{pristine_run.output[-3000:]}"
    failures = pristine_run.with_outcome("failed", "error")
    assert not failures, f"the pristine reference fails {len(failures)} test(s):\n{pristine_run.describe_failures()}"
    assert pristine_run.returncode == 0, pristine_run.output[-3000:]


def test_nothing_is_skipped_for_lack_of_a_credential_or_the_operator(pristine_run: SuiteRun) -> None:
    """The reference provisions every credential and offers the operator and the clock: a skip there
    means a test would silently not run in CI."""
    skipped = {n: t.get("skip_reason") or "" for n, t in pristine_run.with_outcome("skipped").items()}
    unexpected = {n: r for n, r in skipped.items() if not r.startswith(ALLOWED_SKIP_PREFIXES)}
    assert not unexpected, "skipped against the reference:\n" + "\n".join(f"- {n}: {r}" for n, r in unexpected.items())


def test_no_secret_appears_in_any_report_file(pristine_run: SuiteRun) -> None:
    files = list(iter_report_files(pristine_run))
    assert any(p.name == "results.json" for p in files), f"no results.json in {pristine_run.report_dir}"
    leaks = find_leaks(pristine_run.report_dir, pristine_run.secrets)
    assert not leaks, f"secrets found in report files (file, secret kind): {[(lk.path.name, lk.kind) for lk in leaks]}"


def test_every_result_row_names_its_requirements(pristine_run: SuiteRun) -> None:
    unnamed = [t["nodeid"] for t in pristine_run.tests if not t.get("requirements")]
    assert not unnamed, f"tests without requirement ids: {unnamed}"
