"""The target file: one YAML or JSON document describing a deployment under test.

See docs/architecture.md ("The target file"). ``fields`` names what the file and the command line may say,
``model`` holds ``Target`` (load, override, dump) and ``validation`` lists what makes a target unusable.
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
