"""The deployment's profile: its own OpenAPI document read into profile overrides, the profile checked
against what the target shows (``payconform profile check``) and the override block that fits it
(``payconform profile suggest``).

The profile (contract/profile.default.yaml) holds payconform's choices where the spec does not show one. A
run uses the merged profile: the entries derived from the target's OpenAPI document (``openapi:`` in the
target file, ``--openapi``) over the default, and the target file's own ``profile:`` over both.

``document`` reads the OpenAPI document, ``openapi`` and ``bodies`` map it onto the profile, ``resolve``
folds it into a target's profile; ``probe``, ``check`` and ``suggest`` are the two commands. The package
imports nothing on its own: the client imports ``bodies`` without the rest.
"""

