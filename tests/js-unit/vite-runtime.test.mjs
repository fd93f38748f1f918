// The Vite plugin (embed/vite.mjs) copies the files the worker loads at run time next to
// the app's chunk. Its list is held here to what embed/worker.mjs really imports, module
// by module: a new import the list misses would boot in the repo and fail in every Vite
// app ("could not load .../assets/worker.mjs").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const EMBED = new URL("../../embed/", import.meta.url);
const source = (name) => readFileSync(new URL(name, EMBED), "utf8");

/** The ./x.mjs modules `name` imports statically or dynamically, and theirs. */
function localImports(name, seen = new Set()) {
  for (const [, spec] of source(name).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)"\.\/([^"]+\.mjs)"/g)) {
    if (!seen.has(spec)) {
      seen.add(spec);
      localImports(spec, seen);
    }
  }
  return seen;
}

test("the plugin copies every module the worker imports", () => {
  const list = source("vite.mjs").match(/const RUNTIME = (\[[^\]]*\]);/);
  assert.ok(list, "RUNTIME not found in embed/vite.mjs");
  const runtime = new Set(JSON.parse(list[1]));
  const needed = ["worker.mjs", ...localImports("worker.mjs")];
  assert.deepEqual(
    needed.filter((name) => !runtime.has(name)),
    [],
  );
  assert.ok(needed.includes("protocol.mjs") && needed.includes("http.mjs"), needed.join(", "));
});
