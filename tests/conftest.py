"""Fixtures shared by the provider tests."""

import pytest


@pytest.fixture(scope="module")
def shared_server():
    """One scripted provider server (both wire formats, real HTTP on loopback) per module."""
    from harness.models.provider_server import ProviderServer  # sockets: not in Pyodide

    with ProviderServer() as s:
        yield s


@pytest.fixture
def server(shared_server):
    """The shared server with no queued replies and no recorded requests."""
    shared_server.reset()
    return shared_server
