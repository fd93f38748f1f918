// docs/protocol.md lists exactly the table's types per direction (its hand-written
// tables, and the generated part is current), and docs/security.md exactly its codes.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { DIAGNOSTICS, FS_REQUESTS, PROTOCOL } from "../../embed/shared/protocol.mjs";
import { BEGIN, DOCS, END, renderCodes, renderProtocol, replaced } from "../../tooling/protocol_docs.mjs";

const read = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** The types each hand-written table of protocol.md lists, by channel: the heading it
 * is under and, where the table has a `from` column, who sends. */
const SECTIONS = {
  "Page → worker": "pageToWorker",
  "Worker → page": "workerToPage",
  "The sandbox|harness": "harnessToSandbox",
  "The sandbox|sandbox": "sandboxToHarness",
  "The sandbox|page": "pageToFrame",
  "The sandbox|frame": "frameToPage",
  "fs requests": "fs",
};

function documentedTypes(text) {
  const found = {};
  let heading = "";
  let fromColumn = false;
  const body = text.slice(0, text.indexOf(BEGIN));
  for (const line of body.split("\n")) {
    const h = /^#{2,3} (.+)$/.exec(line);
    if (h) heading = h[1].trim();
    if (!line.startsWith("|") || /^\|[-| ]+\|$/.test(line)) continue;
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells[0] === "type" || cells[0] === "`op`" || cells[0] === "from") {
      fromColumn = cells[0] === "from";
      continue;
    }
    const key = fromColumn ? `${heading}|${cells[0]}` : heading;
    const channel = SECTIONS[key];
    if (channel === undefined) continue;
    const cell = fromColumn ? cells[1] : cells[0];
    found[channel] ??= new Set();
    for (const m of cell.matchAll(/`([a-zA-Z_]+)`/g)) found[channel].add(m[1]);
  }
  return found;
}

test("protocol.md's tables list exactly the table's types, per direction", () => {
  const found = documentedTypes(read("docs/protocol.md"));
  for (const [name, channel] of Object.entries(PROTOCOL)) {
    assert.deepEqual(found[name], new Set(Object.keys(channel.types)), name);
  }
  assert.deepEqual(found.fs, new Set(Object.keys(FS_REQUESTS)), "fs requests");
});

test("the generated parts of protocol.md and security.md are current", () => {
  for (const [path, render] of Object.entries(DOCS)) {
    const text = read(path);
    assert.ok(text.includes(BEGIN) && text.includes(END), `${path} has the markers`);
    assert.equal(replaced(text, render()), text, `${path} is stale: run node tooling/protocol_docs.mjs --write`);
  }
});

test("security.md lists exactly the table's diagnostic codes", () => {
  const text = read("docs/security.md");
  const section = text.slice(text.indexOf(BEGIN), text.indexOf(END));
  const listed = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(
    listed,
    Object.values(DIAGNOSTICS).map((d) => d.name),
  );
  assert.equal(section, renderCodes().slice(0, -END.length));
  // every channel and type is in the generated table of protocol.md
  const protocol = renderProtocol();
  for (const [name, channel] of Object.entries(PROTOCOL)) {
    assert.ok(protocol.includes(`(\`${name}\``), name);
    for (const type of Object.keys(channel.types)) assert.ok(protocol.includes(`| \`${type}\` |`), type);
  }
});
