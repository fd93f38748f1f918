"""The h.fs request definitions of the message protocol (``FS_REQUESTS`` in
embed/shared/protocol.mjs, which the worker's fast paths check against) are the pydantic models
of harness/workspace/fsops.py, field for field: the same operations, field names (by alias), kinds
and optional fields. A change to either side fails here until the other follows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from harness.workspace.fsops import OPS, FsRequest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    sys.platform == "emscripten" or shutil.which("node") is None
    or not (ROOT / "tooling" / "protocol_docs.mjs").exists(),
    reason="needs node and the source tree")

KINDS = {"string": "string", "boolean": "boolean"}


def table() -> dict[str, dict[str, str]]:
    out = subprocess.run(["node", str(ROOT / "tooling" / "protocol_docs.mjs"), "--fs-json"],
                         capture_output=True, text=True, check=True, timeout=60)
    value: dict[str, dict[str, str]] = json.loads(out.stdout)
    return value


def models() -> dict[str, dict[str, str]]:
    """op → {field: kind, "?" suffix when optional}, from the models' JSON Schema."""
    schema: dict[str, Any] = TypeAdapter(FsRequest).json_schema(by_alias=True)
    out: dict[str, dict[str, str]] = {}
    for model in schema["$defs"].values():
        props = dict(model["properties"])
        op = props.pop("op")["const"]
        assert model.get("additionalProperties") is False, op  # no other keys, as the table
        required = set(model.get("required", []))
        out[op] = {name: KINDS[p["type"]] + ("" if name in required else "?")
                   for name, p in props.items()}
    return out


def test_the_protocol_table_defines_the_fs_requests_as_the_models_do() -> None:
    js, py = table(), models()
    assert list(js) == list(OPS)
    assert js == py


def test_a_drift_would_be_caught() -> None:
    # the comparison is of names, kinds and optionality: each change shows
    py = models()
    assert py["writeFile"] == {"path": "string", "append": "boolean?"}
    assert py["rename"] == {"from": "string", "to": "string"}
    assert py["exportZip"] == {}
