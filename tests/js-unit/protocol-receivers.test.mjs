// Every receiver handles exactly its channel's types in embed/shared/protocol.mjs, and gives
// every condition its table uses: each module registers its handler map with receiver()
// when it is imported, so this reads what they dispatch on, not their source.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { PROTOCOL, RECEIVERS } from "../../embed/shared/protocol.mjs";
import { loadEmbed } from "./load-embed.mjs";

globalThis.self ??= /** @type {any} */ (globalThis); // worker.mjs sets self.onmessage
await loadEmbed("pyharness.mjs"); // page (worker → page), and sandbox-host.mjs (frame → page)
await loadEmbed("worker.mjs"); // page → worker, and sandbox-client.mjs (sandbox → harness)
await import("../../shell/sandbox.mjs"); // harness → sandbox

const conditionsOf = (channel) => new Set(Object.values(channel.types).flatMap((e) => [...e.when, ...e.accept].map(([name]) => name)));

for (const [name, channel] of Object.entries(PROTOCOL)) {
  if (name === "pageToFrame") continue; // the frame's classic script: below
  test(`${channel.receiver} handles exactly the ${name} types`, () => {
    const registered = RECEIVERS.get(name);
    assert.ok(registered, `${channel.receiver} registers no receiver for ${name}`);
    assert.deepEqual(new Set(registered.handlers), new Set(Object.keys(channel.types)));
    assert.deepEqual(new Set(registered.conditions), conditionsOf(channel));
  });
}

test("the sandbox frame's script takes exactly the pageToFrame types", () => {
  // An inline classic script pinned by its CSP hash cannot import the table: its one
  // check of the message's type is held to it here.
  const source = readFileSync(new URL("../../embed/sandbox/sandbox-frame.js", import.meta.url), "utf8");
  const listener = source.slice(source.indexOf('addEventListener("message"'));
  const types = [...listener.matchAll(/data\.type [!=]== "([a-z_]+)"/g)].map((m) => m[1]);
  assert.deepEqual(new Set(types), new Set(Object.keys(PROTOCOL.pageToFrame.types)));
  // and what it sends the page are frameToPage types
  const sent = [...source.matchAll(/report\(\{ type: ([^,}]+)/g)].flatMap((m) => [...m[1].matchAll(/"([a-z_]+)"/g)].map((s) => s[1]));
  assert.deepEqual(new Set(sent), new Set(Object.keys(PROTOCOL.frameToPage.types)));
});
