"""``pyharness build``: assemble the self-hosted static bundle (runs on CPython only)."""
