"""Contract: the committed JS-side schema and types match harness/events.py."""

from pathlib import Path

from harness.events import EVENT_TYPES
from tooling.schema import (
    json_schema,
    model_apis_module,
    options_typescript,
    schema_json,
    typescript,
    with_init_row,
)

EMBED = Path(__file__).resolve().parents[1] / "embed"
FIX = "run `pyharness schema --write` and commit the result"


def test_committed_schema_is_current():
    assert (EMBED / "shared" / "events.schema.json").read_text() == schema_json(), FIX


def test_committed_typescript_is_current():
    assert (EMBED / "shared" / "events.d.ts").read_text() == typescript(), FIX


def test_committed_options_are_current():
    """A field added to HarnessConfig without regenerating fails here (options.d.ts)."""
    assert (EMBED / "shared" / "options.d.ts").read_text() == options_typescript(), FIX


def test_protocol_init_row_is_current():
    """docs/protocol.md's init row lists HarnessConfig's fields (generated, like options.d.ts)."""
    text = (EMBED.parent / "docs" / "protocol.md").read_text()
    assert text == with_init_row(text), FIX


def test_public_options_compose_the_generated_ones():
    dts = (EMBED / "page" / "pyharness.d.ts").read_text()
    assert 'from "../shared/options.d.ts"' in dts
    assert "extends Omit<HarnessConfig" in dts


def test_committed_model_apis_are_current():
    assert (EMBED / "page" / "model-apis.mjs").read_text() == model_apis_module(), FIX


def test_every_event_type_is_published():
    schema = json_schema()
    published = {d["properties"]["type"]["const"] for d in schema["$defs"].values()
                 if "type" in d.get("properties", {})}
    assert published == {cls.model_fields["type"].default for cls in EVENT_TYPES}
    for name in schema["$defs"]:
        if name not in ("Usage", "Totals", "BudgetLimit", "AttachmentRef"):  # parts of events
            assert "type" in schema["$defs"][name]["required"]


def test_public_types_reexport_the_events():
    dts = (EMBED / "page" / "pyharness.d.ts").read_text()
    assert 'from "../shared/events.d.ts"' in dts
    assert "PyharnessEvent" in dts
