"""A plugin whose import fails."""

from oprt_testplugin import BROKEN_IMPORT_MESSAGE

raise ImportError(BROKEN_IMPORT_MESSAGE)
