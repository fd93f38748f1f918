"""pyharness's development tools: what builds, measures and serves, never what runs.

``build`` (the static bundle), ``bench`` (``pyharness bench``), ``serve`` (the loopback
static server), ``provider_server`` (the scripted model provider for tests), ``schema``
(the event JSON Schema and ``.d.ts``) and ``cli`` (the ``pyharness`` command). They run
on CPython in a checkout; none of them is in the wheel the browser loads (the
``harness`` package), and nothing in ``harness`` imports them.
"""
