"""embed/ is grouped by realm (page, worker, sandbox, widget, node, shared); the bundle
stays flat, with the names users import (dist/pyharness.mjs, widget.mjs, vite.mjs) and
that the worker and the Vite plugin find by. The build rewrites a module's imports of
another realm to its flat sibling; this holds the source and the bundle to that."""

import os
import re
from pathlib import Path

import pytest

from tooling.build.bundle import EMBED_REALMS, embed_files, flat_imports

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(os.environ.get("PYHARNESS_BUNDLE", ROOT / "dist"))
# import/export ... from "x", import("x"), import("x").Type in JSDoc, import type ... from "x"
SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*)(["'])(\.{1,2}/[^"']+)\1""")


def test_flat_imports_rewrites_only_other_realms():
    text = ('import { a } from "../shared/protocol.mjs";\n'
            "import { b } from './http.mjs';\n"
            '/** @type {import("../page/pyharness.d.ts").Harness} */\n'
            'import c from "../node_modules/x.mjs";\n')
    assert flat_imports(text) == ('import { a } from "./protocol.mjs";\n'
                                  "import { b } from './http.mjs';\n"
                                  '/** @type {import("./pyharness.d.ts").Harness} */\n'
                                  'import c from "../node_modules/x.mjs";\n')


def test_every_embed_file_is_in_a_realm_and_names_are_unique():
    loose = [p.name for p in (ROOT / "embed").iterdir() if p.is_file()]
    assert loose == [], f"embed/ holds files outside a realm folder: {loose}"
    realms = {p.name for p in (ROOT / "embed").iterdir() if p.is_dir()}
    # (sandbox/ is inlined into sandbox-frame.mjs; preview/ is copied and bundled apart;
    # git/ is bundled apart with isomorphic-git)
    assert realms == {*EMBED_REALMS, "sandbox", "preview", "git"}
    files = embed_files(ROOT)
    assert {"pyharness.mjs", "worker.mjs", "widget.mjs", "vite.mjs", "protocol.mjs"} <= set(files)
    for name, src in files.items():
        assert src.parent.parent == ROOT / "embed" and src.name == name


def test_source_imports_resolve_in_the_checkout():
    for src in embed_files(ROOT).values():
        for _, spec in SPECIFIER.findall(src.read_text()):
            target = (src.parent / spec).resolve()
            built = ("markdown-it.mjs", "json-schema.mjs", "mcp-sdk.mjs", "sandbox-frame.mjs")
            if target.name in built:
                continue  # written by the build (bundled from node_modules, or the frame)
            assert target.is_file(), f"{src.relative_to(ROOT)} imports {spec}: no such file"


def test_bundle_is_flat_and_every_import_resolves_in_it():
    if not (BUNDLE / "manifest.json").exists():
        pytest.skip(f"no bundle at {BUNDLE} (make build)")
    files = embed_files(ROOT)
    for name in files:
        assert (BUNDLE / name).is_file(), f"{name} missing from the bundle"
        for _, spec in SPECIFIER.findall((BUNDLE / name).read_text()):
            assert spec.startswith("./") and "/" not in spec[2:], f"{name} imports {spec}"
            assert (BUNDLE / spec[2:]).is_file(), f"{name} imports {spec}: not in the bundle"
