"""The target file: one YAML or JSON document describing a deployment under test.

See docs/architecture.md ("The target file"). ``fields`` describes every field once (its JSON Schema, default
and meaning) and names the flags, ``model`` holds ``Target`` (load, override, dump), ``validation`` lists what
makes a target unusable, and ``schema`` with ``reference`` generates payconform/schemas/target.schema.json and
the field reference of docs/target-file.md from ``fields``.
"""

from .fields import (
    API_KEY_NAMES,
    API_PREFIX,
    CREDENTIAL_NAMES,
    ENV_PREFIX,
    FLAG_FIELDS,
    OVERRIDE_FIELDS,
    TOP_LEVEL_FIELDS,
    TargetConfigError,
    flag_overrides,
    option_name,
)
from .model import Target

__all__ = ["API_KEY_NAMES", "API_PREFIX", "CREDENTIAL_NAMES", "ENV_PREFIX", "FLAG_FIELDS", "OVERRIDE_FIELDS",
           "TOP_LEVEL_FIELDS", "Target", "TargetConfigError", "flag_overrides", "option_name"]
