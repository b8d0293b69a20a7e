"""Validation of a loaded target: every problem at once, so a user fixes the file in one pass.

Safety lives here too: every API key but ``live_key`` must be a test key, so the suite never writes with a
live key because of a mistyped file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping
from urllib.parse import urlsplit

from .fields import (ADAPTER_PATTERN, API_KEY_NAMES, API_PREFIX, CREDENTIAL_NAMES, FIELD, LIVE_KEY_PREFIX,
                     TEST_KEY_PREFIX, WEBHOOK_FIELD_NAMES)

if TYPE_CHECKING:
    from .model import Target


def problems(target: Target) -> list[str]:
    """What makes ``target`` unusable, one line each (empty when it is usable)."""
    found: list[str] = []
    url = target.base_url
    if not url or not isinstance(url, str):
        found.append(f"base_url is required (for example http://127.0.0.1:8123{API_PREFIX})")
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            found.append(f"base_url must start with http:// or https://, got {url!r}")
        elif not parts.hostname:
            found.append(f"base_url has no host: {url!r}")
        if not parts.path.rstrip("/").endswith(API_PREFIX):
            found.append(f"base_url must end with the fixed prefix {API_PREFIX}, got {url!r}")
        if parts.query or parts.fragment:
            found.append(f"base_url must not have a query or fragment: {url!r}")
    for name in ("org_id", "other_org_id"):
        value = getattr(target, name)
        if value is None:
            if name == "org_id":
                found.append("org_id is required (the opaque organization id the api key belongs to)")
            continue
        if not isinstance(value, str) or not value.strip():
            found.append(f"{name} must be a non-empty string")
        elif value.startswith("org_"):
            found.append(f"{name} {value!r} looks like an org_ alias; the spec requires the opaque organization id")
        elif "/" in value:
            found.append(f"{name} must not contain '/'")
    if target.org_id and target.other_org_id and target.org_id == target.other_org_id:
        found.append("other_org_id must differ from org_id")

    for name, value in target.credentials.items():
        if name not in CREDENTIAL_NAMES:
            found.append(f"unknown credential {name!r} (known: {', '.join(CREDENTIAL_NAMES)})")
            continue
        if name == "api_key_pool":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                found.append("api_key_pool must be a list of api keys")
                continue
            for i, key in enumerate(value):
                if not key.startswith(TEST_KEY_PREFIX):
                    found.append(f"api_key_pool[{i}] must be a test key ({TEST_KEY_PREFIX}...)")
            continue
        if not isinstance(value, str):
            found.append(f"credential {name} must be a string")
            continue
        if name == "live_key":
            if not value.startswith(LIVE_KEY_PREFIX):
                found.append(f"live_key must be a live key ({LIVE_KEY_PREFIX}...)")
        elif name in API_KEY_NAMES and not value.startswith(TEST_KEY_PREFIX):
            found.append(f"{name} must be a test key ({TEST_KEY_PREFIX}...): the suite never writes with a live key")
        elif name == "signing_private_key" and "PRIVATE KEY" not in value:
            found.append("signing_private_key must be a PEM private key")

    for name in ("rate_limit", "ip_rate_limit"):
        minimum = FIELD[name].schema["minimum"]
        value = getattr(target, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            try:
                ok = int(str(value)) >= minimum and not isinstance(value, bool)
            except ValueError:
                ok = False
            if not ok:
                found.append(f"{name} must be a positive integer (requests per minute), got {value!r}")
    longest = FIELD["request_timeout"].schema["maximum"]
    try:
        timeout = float(target.request_timeout)
        if not 0 < timeout <= longest:
            raise ValueError
    except (TypeError, ValueError):
        found.append(f"request_timeout must be a number of seconds between 0 and {longest}, "
                     f"got {target.request_timeout!r}")

    adapter = target.operator_config.get("adapter", "none")
    if adapter in (None, "none"):
        pass
    elif adapter == "reference":
        url = target.operator_config.get("url")
        if not url:
            found.append("operator.url is required for adapter 'reference' (for example http://127.0.0.1:8123/_operator)")
        elif urlsplit(str(url)).scheme not in ("http", "https"):
            found.append(f"operator.url must be http(s), got {url!r}")
        if not target.operator_config.get("token"):
            found.append("operator.token is required for adapter 'reference'")
    elif not (isinstance(adapter, str) and re.match(ADAPTER_PATTERN, adapter)):
        found.append(f"operator.adapter must be 'reference', 'none' or 'package.module:Class', got {adapter!r}")

    document = target.openapi
    if document is not None:
        if not isinstance(document, str) or not document:
            found.append(f"openapi must be a file path or a URL of the deployment's OpenAPI document, got {document!r}")
        elif document.startswith(("http://", "https://")) and isinstance(url, str) \
                and urlsplit(document).netloc.lower() != urlsplit(url).netloc.lower():
            found.append(f"openapi {document!r} is not on the target's host {urlsplit(url).netloc!r}: the suite "
                         "sends nothing elsewhere (save the document and give its file path)")

    if not isinstance(target.webhooks, Mapping):
        found.append("webhooks must be a mapping")
    else:
        found.extend(f"unknown field 'webhooks.{name}' (known: {', '.join(WEBHOOK_FIELD_NAMES)})"
                     for name in sorted(set(target.webhooks) - set(WEBHOOK_FIELD_NAMES)))
    return found
