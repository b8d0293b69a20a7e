"""Judge recorded answers against the OpenAPI documents of contract/, as a validating proxy would.

Each answer names the operation the server matched (its operationId, from the reference's exchange log), so
an operation the profile places at a path the spec does not show (`x-profile-path`) is judged wherever it is
served. An answer is undocumented when its operation lists neither its status nor its class (`2XX`) nor a
`default`, and off its schema when the JSON body is not accepted by the schema the document gives that status
(jsonschema, draft 2020-12, formats checked, `$ref`s resolved in the document). Answers of no operation (an
unknown route's 404 `ROUTE_NOT_FOUND`) are left out: a proxy refuses such a request before it reaches the server.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from payconform.contract import HTTP_METHODS

JSON = "application/json"


def read_exchanges(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of an exchange log (`python -m payconform.reference --exchange-log FILE`)."""
    # split on newlines only: a body may hold other characters `str.splitlines` would split on
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass
class Documented:
    """The operations of some OpenAPI documents, and the answers judged against them."""

    documents: Mapping[str, Mapping[str, Any]]
    operations: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # op id -> (doc, METHOD, path)
    _validators: dict[str, jsonschema.Draft202012Validator] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for name, doc in self.documents.items():
            for path, item in (doc.get("paths") or {}).items():
                for method in HTTP_METHODS:
                    if isinstance((item or {}).get(method), Mapping):
                        self.operations[str(item[method].get("operationId"))] = (name, method.upper(), path)

    def _operation(self, op_id: str) -> dict[str, Any]:
        name, method, path = self.operations[op_id]
        return self.documents[name]["paths"][path][method.lower()]

    def _response(self, op_id: str, status: int) -> tuple[str, str] | None:
        """(document, JSON pointer of the response object) the operation gives ``status``, or None."""
        name, method, path = self.operations[op_id]
        responses = self._operation(op_id).get("responses") or {}
        key = next((k for k in (str(status), f"{status // 100}XX", f"{status // 100}xx", "default") if k in responses),
                   None)
        if key is None:
            return None
        response = responses[key]
        if isinstance(response, Mapping) and str(response.get("$ref", "")).startswith("#/"):
            return name, str(response["$ref"])[1:]
        return name, f"/paths/{_escape(path)}/{method.lower()}/responses/{_escape(key)}"

    def _validator(self, doc: str, pointer: str) -> jsonschema.Draft202012Validator:
        key = f"{doc}#{pointer}"
        if key not in self._validators:
            uri = f"urn:payconform:{doc}"
            resource = Resource.from_contents(self.documents[doc], default_specification=DRAFT202012)
            self._validators[key] = jsonschema.Draft202012Validator(
                {"$ref": f"{uri}#{pointer}"}, registry=Registry().with_resource(uri, resource),
                format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        return self._validators[key]

    def _content(self, doc: str, pointer: str) -> Mapping[str, Any] | None:
        node: Any = self.documents[doc]
        for token in pointer.strip("/").split("/"):
            node = node[token.replace("~1", "/").replace("~0", "~")]
        return (node.get("content") or {}) if isinstance(node, Mapping) else None

    def problem(self, answer: Mapping[str, Any]) -> str | None:
        """Why ``answer`` (a row of the exchange log) is undocumented or off its schema; None when it is neither."""
        op_id, status = answer.get("operationId"), int(answer["status"])
        if op_id not in self.operations:
            return f"{status}: operation {op_id!r} is in no document"
        found = self._response(str(op_id), status)
        if found is None:
            return f"{status}: status not documented"
        doc, pointer = found
        body, media = answer.get("body"), str(answer.get("contentType") or "").split(";")[0].strip()
        if body is None:
            return None
        content = self._content(doc, pointer) or {}
        if media not in content:
            return f"{status}: {media or 'a body'} not documented (the document gives {sorted(content) or 'none'})"
        if media != JSON or "schema" not in content[media]:
            return None
        error = jsonschema.exceptions.best_match(
            self._validator(doc, f"{pointer}/content/{_escape(media)}/schema").iter_errors(body))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(the body)"
        return f"{status}: body off its schema at {where}: {error.message[:200]}"

    def judge(self, answers: Iterable[Mapping[str, Any]]) -> dict[str, Counter[str]]:
        """operationId -> Counter of its answers' problems (operations whose answers are all fine left out)."""
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for answer in answers:
            if answer.get("operationId") is None:
                continue
            why = self.problem(answer)
            if why is not None:
                out[str(answer["operationId"])][why] += 1
        return dict(out)


def describe(problems: Mapping[str, Counter[str]]) -> str:
    """One block per operation: each problem with how many answers had it."""
    return "\n".join(f"- {op_id}:\n" + "\n".join(f"    {why} ({n} answer{'s' if n > 1 else ''})"
                                                for why, n in counts.most_common())
                     for op_id, counts in sorted(problems.items()))
