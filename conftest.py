"""Repository root conftest: intentionally thin.

The payconform pytest plugin is activated by its entry point (``payconform.plugin``, installed with
``pip install -e .``), so ``pytest suites --target FILE`` works from here. Everything lives in
the ``payconform/plugin/`` package.
"""

# Loads the plugin even when the package is not installed (same name as the entry point: no double load).
pytest_plugins = ["payconform.plugin"]
