"""The contract as data: requirements, error catalog, limits, profile and OpenAPI documents.

Every file is optional while the contract is being written: a missing file loads as empty, so the
plugin keeps working. ``Contract.load()`` reads ``contract/`` (see ``payconform.paths``) and deep-merges
the target's ``profile`` overrides over ``contract/profile.default.yaml``.
"""

from __future__ import annotations

import copy
import fnmatch
import pickle
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import yaml

from . import paths

# The nine parts of the spec, in the spec's order (used when requirements.yaml has no `parts:` list).
DEFAULT_PARTS: list[dict[str, str]] = [
    {"slug": "conventions", "title": "Conventions"},
    {"slug": "resources", "title": "Resources and their fields"},
    {"slug": "states", "title": "States and transitions"},
    {"slug": "endpoints", "title": "Endpoints"},
    {"slug": "authentication", "title": "Authentication"},
    {"slug": "events", "title": "Events"},
    {"slug": "errors", "title": "Errors"},
    {"slug": "limits", "title": "Limits"},
    {"slug": "versioning", "title": "Versioning"},
]


# The OpenAPI documents of contract/ (`<name>.openapi.yaml`) and the methods an operation may sit under.
OPENAPI_DOCUMENTS = ("payouts", "checkout")
HTTP_METHODS = ("get", "put", "post", "patch", "delete")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Who a requirement binds (its `subject` in requirements.yaml): `server` (the default; what `payconform run`
# tests and counts) or `receiver` (a webhook receiver; what `payconform receiver` checks).
SERVER, RECEIVER = "server", "receiver"


def subject_of(requirement: Mapping[str, Any]) -> str:
    """The `subject` of a requirements.yaml entry (`server` when absent)."""
    return str(requirement.get("subject") or SERVER)


class ContractError(ValueError):
    """A contract file exists but cannot be read."""


# Parsed documents by (path, mtime, size), pickled: a process that loads the contract more than once (the
# CLI's preflight then its run, a test harness forking many short runs) parses each file once, and every
# load still gets its own copy to merge into.
_PARSED: dict[tuple[str, int, int], bytes] = {}


def _load_yaml(path: Path) -> Any:
    if not path.is_file():
        return None
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _PARSED:
        try:
            with path.open(encoding="utf-8") as fh:
                _PARSED[key] = pickle.dumps(yaml.load(fh, Loader=_Loader), protocol=pickle.HIGHEST_PROTOCOL)
        except yaml.YAMLError as exc:
            raise ContractError(f"{path}: not valid YAML: {exc}") from exc
    return pickle.loads(_PARSED[key])


def deep_merge(base: Any, override: Any) -> Any:
    """Merge ``override`` into a copy of ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for key, value in override.items():
            out[key] = deep_merge(out[key], value) if key in out else copy.deepcopy(value)
        return out
    return copy.deepcopy(override)


def _index(items: Any, key: str) -> dict[str, dict]:
    """A list of mappings (or a mapping of key -> mapping) as an ordered dict keyed by ``key``."""
    out: dict[str, dict] = {}
    if isinstance(items, Mapping):
        for k, v in items.items():
            row = dict(v) if isinstance(v, Mapping) else {"value": v}
            row.setdefault(key, k)
            out[str(k)] = row
    elif isinstance(items, list):
        for row in items:
            if isinstance(row, Mapping) and row.get(key) is not None:
                out[str(row[key])] = dict(row)
    return out


class Contract:
    """The loaded contract.

    Attributes: ``requirements`` (id -> dict with id, part, section, quote, needs, testable, reason),
    ``parts`` (list of {slug, title} in the spec's order), ``errors`` (type -> dict), ``limits``
    (the parsed limits catalog), ``profile`` (merged profile: ``profile["operations"][op_id]``),
    ``version`` (contract version string), ``directory``; ``transitions`` and ``events`` (the state
    machine and event catalogs, read on first use).
    """

    def __init__(
        self,
        *,
        requirements: Mapping[str, dict] | None = None,
        parts: list[dict] | None = None,
        errors: Mapping[str, dict] | None = None,
        limits: Any = None,
        profile: Mapping[str, Any] | None = None,
        version: str = "unknown",
        directory: Path | None = None,
    ) -> None:
        self.requirements: dict[str, dict] = dict(requirements or {})
        self.parts: list[dict] = list(parts or DEFAULT_PARTS)
        self.errors: dict[str, dict] = dict(errors or {})
        self.limits: Any = limits if limits is not None else {}
        self.profile: dict[str, Any] = dict(profile or {})
        self.profile.setdefault("operations", {})
        if self.profile["operations"] is None:
            self.profile["operations"] = {}
        self.version = version
        self.directory = directory
        self._openapi: dict[str, Any] = {}
        self._catalogs: dict[str, dict] = {}

    # -- loading -------------------------------------------------------------------------------

    @classmethod
    def load(cls, directory: str | Path | None = None, profile_overrides: Mapping[str, Any] | None = None,
             *, subject: str = SERVER) -> "Contract":
        """Read ``contract/``; ``requirements`` keeps the entries of ``subject`` only, so a run's coverage
        never counts what binds another side (a webhook receiver)."""
        base = Path(directory) if directory is not None else paths.contract_dir()
        req_doc = _load_yaml(base / "requirements.yaml") or {}
        if isinstance(req_doc, list):
            req_doc = {"requirements": req_doc}
        requirements = {rid: row for rid, row in _index(req_doc.get("requirements") or [], "id").items()
                        if subject_of(row) == subject}
        parts = [
            {"slug": str(p.get("slug")), "title": str(p.get("title") or p.get("slug"))}
            for p in (req_doc.get("parts") or [])
            if isinstance(p, Mapping) and p.get("slug")
        ] or None

        err_doc = _load_yaml(base / "catalog" / "errors.yaml") or {}
        errors = _index(err_doc.get("errors") if isinstance(err_doc, Mapping) else err_doc, "type")

        limits = _load_yaml(base / "catalog" / "limits.yaml") or {}

        profile = _load_yaml(base / "profile.default.yaml") or {}
        if not isinstance(profile, Mapping):
            raise ContractError(f"{base / 'profile.default.yaml'}: expected a mapping")
        if profile_overrides:
            profile = deep_merge(profile, profile_overrides)

        version = None
        if isinstance(req_doc, Mapping):
            version = req_doc.get("contract_version") or req_doc.get("version")
        if not version:
            try:
                doc = _load_yaml(base / "payouts.openapi.yaml")
            except ContractError:
                doc = None
            if isinstance(doc, Mapping):
                version = (doc.get("info") or {}).get("version")
        return cls(
            requirements=requirements,
            parts=parts,
            errors=errors,
            limits=limits,
            profile=profile,
            version=str(version) if version else "unknown",
            directory=base,
        )

    def with_profile(self, overrides: Mapping[str, Any] | None) -> "Contract":
        """A copy whose profile has ``overrides`` deep-merged in."""
        other = copy.copy(self)
        other.profile = deep_merge(self.profile, overrides or {})
        other.profile.setdefault("operations", {})
        other._openapi = self._openapi
        other._catalogs = self._catalogs
        return other

    # -- lookups -------------------------------------------------------------------------------

    def openapi(self, name: str) -> dict:
        """An OpenAPI document by short name (``payouts``, ``checkout``), or {} if absent."""
        if name not in self._openapi:
            doc = _load_yaml(self.directory / f"{name}.openapi.yaml") if self.directory else None
            self._openapi[name] = doc or {}
        return self._openapi[name]

    def openapi_operations(self) -> Iterator[tuple[str, str, str, dict]]:
        """(document name, METHOD, path, operation) of every operation of the OpenAPI documents, in order."""
        for doc in OPENAPI_DOCUMENTS:
            for path, item in (self.openapi(doc).get("paths") or {}).items():
                for method in HTTP_METHODS:
                    op = (item or {}).get(method)
                    if isinstance(op, dict):
                        yield doc, method.upper(), path, op

    def openapi_operation(self, op_id: str) -> tuple[str, dict] | None:
        """(document name, operation) of the OpenAPI operation ``op_id``, or None when no document has it."""
        return next(((doc, op) for doc, _, _, op in self.openapi_operations() if op.get("operationId") == op_id), None)

    def _catalog(self, name: str) -> dict:
        """A catalog file of ``contract/catalog/`` read once per contract (empty if absent)."""
        if name not in self._catalogs:
            doc = _load_yaml(self.directory / "catalog" / f"{name}.yaml") if self.directory else None
            self._catalogs[name] = doc if isinstance(doc, Mapping) else {}
        return self._catalogs[name]

    @property
    def transitions(self) -> dict:
        """``catalog/transitions.yaml``: ``machines`` (name -> {states, rows, ...}) and what the rows add."""
        return self._catalog("transitions")

    @property
    def events(self) -> dict:
        """``catalog/events.yaml``: ``types`` (one row per event type), retry schedules, delivery rules."""
        return self._catalog("events")

    def machine(self, name: str) -> dict:
        """One transition table (``payout``, ``payout_batch``, ``checkout_link``, ...)."""
        return (self.transitions.get("machines") or {})[name]

    def requirement(self, req_id: str) -> dict | None:
        return self.requirements.get(req_id)

    def checks(self, req_id: str) -> dict | None:
        """How deep a verdict of ``req_id`` goes (``catalog/checks.yaml``, generated from the reference's mutants):
        ``checked``, the clauses its tests are shown to check (``{mutant, breaks, with?}``), ``not_checked``,
        what a run with an API key alone cannot check and why, and ``other_clauses`` (where present), why a clause
        of the sentence has no mutant of its own; None when the record has no entry."""
        entry = (self._catalog("checks").get("requirements") or {}).get(req_id)
        return dict(entry) if isinstance(entry, Mapping) else None

    def operation(self, op_id: str) -> dict:
        """The profile entry of an operation; ``KeyError`` with a helpful message if unknown."""
        ops = self.profile.get("operations") or {}
        if op_id not in ops:
            known = ", ".join(sorted(ops)) or "none (contract/profile.default.yaml is empty or missing)"
            raise KeyError(f"operation {op_id!r} is not in the profile; known operations: {known}")
        return ops[op_id]

    def unshown_answers(self) -> dict[str, dict]:
        """The profile's `response` entry of every operation whose answer body the spec does not show
        (``response.source: profile``), by operation id: what a test may read of such an answer is what the
        entry names (its ``fields`` and the properties of its ``shape``), and a failure there names the entry."""
        return {op_id: dict(op["response"]) for op_id, op in (self.profile.get("operations") or {}).items()
                if isinstance(op, Mapping) and isinstance(op.get("response"), Mapping)
                and op["response"].get("source") == "profile"}

    def part_title(self, slug: str | None) -> str:
        for part in self.parts:
            if part["slug"] == slug:
                return part["title"]
        return str(slug or "?")

    def part_order(self) -> list[str]:
        return [p["slug"] for p in self.parts]

    def table_rows(self) -> dict[str, list[str]]:
        """Every row of every catalog table, as ``table -> [requirement id of each row]``: the error types, the
        event types, each state machine's transitions and the Limits table (rate limits, list routes and the
        other limits, each quoting its row)."""
        tables = {"errors": [str(e["requirement"]) for e in self.errors.values() if e.get("requirement")],
                  "events": [str(e["req"]) for e in self.events.get("types") or [] if e.get("req")]}
        for name, machine in (self.transitions.get("machines") or {}).items():
            tables[f"transitions.{name}"] = [str(r["id"]) for r in machine.get("rows") or []]
        limits: list[str] = []

        def walk(node: Any) -> None:
            if isinstance(node, Mapping):
                if node.get("requirement") and (node.get("quote") or node.get("route")):
                    limits.append(str(node["requirement"]))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(self.limits)
        tables["limits"] = limits
        return tables

    def error_types(self) -> set[str]:
        return set(self.errors)

    def has_requirements(self) -> bool:
        return bool(self.requirements)

    def matches(self, req_ids: Iterable[str], patterns: Iterable[str], extra_parts: Iterable[str] = (),
                id_parts: bool = True) -> bool:
        """Whether any of ``req_ids`` matches a select pattern (id glob or part slug: one of ``extra_parts``,
        or with ``id_parts`` the part of one of the ids)."""
        ids = list(req_ids)
        part_slugs = {str((self.requirements.get(i) or {}).get("part")) for i in ids} if id_parts else set()
        part_slugs |= set(extra_parts)
        for pat in patterns:
            if pat in part_slugs:
                return True
            if any(fnmatch.fnmatchcase(i, pat) or fnmatch.fnmatchcase(i.upper(), pat.upper()) for i in ids):
                return True
        return False


# A process-wide "current contract", set by the plugin so that assertions can consult the catalogs.
_current: Contract | None = None
_default: Contract | None = None


def set_current(contract: Contract | None) -> None:
    global _current
    _current = contract


def current() -> Contract | None:
    """The contract the plugin set for this run, or None outside a run (harness code that must know)."""
    return _current


def run_contract() -> Contract:
    """The run's contract, the one way tests and harness code read ``contract/``.

    Inside a run: the contract the plugin loaded, with the target's ``profile`` overrides merged, so a
    target that describes its own "not shown" operations is judged by its own description. Outside a
    run (collection by a unit test, a tool): the repository's contract, loaded once.
    """
    global _default
    if _current is not None:
        return _current
    if _default is None:
        _default = Contract.load()
    return _default
