"""Test-only oprt plugins (see README.md); never import this package outside the tests."""

RAISING_HOOK_MESSAGE = "oprt_testplugin.raising_hook: deliberate failure in oprt_register_backends"
BROKEN_IMPORT_MESSAGE = "oprt_testplugin.broken_import: deliberate failure at import"
