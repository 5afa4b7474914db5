"""A fake plugin whose import fails."""

raise ImportError("oprt_fake_broken: deliberate failure at import")
