"""contract/*.openapi.yaml as a client generator reads them: openapi-python-client generates a client from each
document without a warning, and every object schema of the document becomes a model of that client (a schema
the generator cannot read is dropped from the client with a warning, and every operation answering it loses
that answer)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = {name: ROOT / "contract" / f"{name}.openapi.yaml" for name in ("payouts", "checkout")}


@pytest.mark.parametrize("name", sorted(DOCS))
def test_openapi_python_client_generates_every_schema_without_a_warning(name: str, tmp_path: Path) -> None:
    from openapi_python_client import generate  # dev extra: pip install -e .[dev]
    from openapi_python_client.config import Config, ConfigFile, MetaType
    from openapi_python_client.strings import snake_case

    out = tmp_path / "client"
    config = Config.from_sources(ConfigFile(post_hooks=[]), MetaType.NONE, DOCS[name], "utf-8", overwrite=True,
                                 output_path=out)
    problems = generate(config=config)
    assert not problems, f"{name}: openapi-python-client reports:\n" + "\n\n".join(
        f"{p.level}: {p.header}\n{p.detail}" for p in problems)
    schemas = yaml.safe_load(DOCS[name].read_text(encoding="utf-8"))["components"]["schemas"]
    objects = [key for key, schema in schemas.items() if schema.get("type") == "object" and schema.get("properties")]
    models = {p.stem for p in out.rglob("models/*.py")}
    # a schema that is also a oneOf (AuditEvent) becomes one model per branch: `audit_event_type_0`, ...
    missing = [key for key in objects
               if snake_case(key) not in models and not any(m.startswith(f"{snake_case(key)}_type_") for m in models)]
    assert not missing, f"{name}: object schemas the generated client has no model for: {missing}"
