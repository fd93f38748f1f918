"""pyharness: a Python coding agent that runs in Pyodide inside any web page.

The core (agent loop, tools, workspace jail, filesystem operations, models) is plain
Python and runs unchanged on CPython; only :mod:`harness.runtime` knows about the
browser.
"""

__version__ = "0.1.0"
