// The Vite plugin (embed/node/vite.mjs) copies the files the worker loads at run time next to
// the app's chunk. Its list is held here to what embed/worker/worker.mjs really imports, module
// by module: a new import the list misses would boot in the repo and fail in every Vite
// app ("could not load .../assets/worker.mjs").
import assert from "node:assert/strict";
import { test } from "node:test";
import { embedSource as source } from "./load-embed.mjs";

/** The bundle's modules `name` imports statically or dynamically ("./x.mjs", or
 * "../realm/x.mjs" in the checkout: x.mjs in the flat bundle), and theirs. */
function localImports(name, seen = new Set()) {
  for (const [, spec] of source(name).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"\.\.?\/(?:[a-z]+\/)?([^"/]+\.mjs)"/g)) {
    if (!seen.has(spec)) {
      seen.add(spec);
      localImports(spec, seen);
    }
  }
  return seen;
}

test("the plugin copies every module the worker imports", () => {
  const list = source("vite.mjs").match(/const RUNTIME = (\[[^\]]*\]);/);
  assert.ok(list, "RUNTIME not found in embed/node/vite.mjs");
  const runtime = new Set(JSON.parse(list[1].replace(/,\s*\]$/, "]")));
  const needed = ["worker.mjs", ...localImports("worker.mjs")];
  assert.deepEqual(
    needed.filter((name) => !runtime.has(name)),
    [],
  );
  assert.ok(needed.includes("protocol.mjs") && needed.includes("http.mjs"), needed.join(", "));
});
