"""The spec's Authentication: API keys (Mode A), signed requests and their challenge (Mode B), key rotation."""
