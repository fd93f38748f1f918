// The widget's visible-name rule (embed/widget/widget-dom.mjs): characters that change how a
// file name reads without showing themselves are shown as marked escapes.

import assert from "node:assert/strict";
import { test } from "node:test";
import { all, fakeDocument } from "./fake-dom.mjs";
import * as dom from "../../embed/widget/widget-dom.mjs";

test("bidi controls, zero-width and control characters are escaped", () => {
  const hidden = [
    0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff,
    0x00, 0x07, 0x1b, 0x7f, 0x85, 0x9f, 0x00ad, 0x2028, 0x00a0, 0x3164,
  ];
  for (const code of hidden) {
    const name = `a${String.fromCodePoint(code)}b`;
    const hex = code.toString(16).toUpperCase().padStart(4, "0");
    assert.deepEqual(dom.invisibleParts(name), ["a", code, "b"], hex);
    assert.equal(dom.visibleText(name), `a⟨U+${hex}⟩b`);
  }
  assert.equal(dom.visibleText("invoice\u202efdp.exe"), "invoice⟨U+202E⟩fdp.exe");
  assert.equal(dom.visibleText("lone \ud800 surrogate"), "lone ⟨U+D800⟩ surrogate");
  assert.equal(dom.visibleText("tag\u{e0041}"), "tag⟨U+E0041⟩");
});

test("ordinary names are left alone; lines: true keeps line breaks and tabs", () => {
  for (const name of ["report.csv", "données/été.txt", "数据.csv", "עברית.txt", "emoji 😀.md", "a b", ""]) {
    assert.deepEqual(dom.invisibleParts(name), [name]);
  }
  assert.equal(dom.visibleText("a\nb\tc"), "a⟨U+000A⟩b⟨U+0009⟩c");
  assert.equal(dom.visibleText("a\r\nb\tc\u202e", { lines: true }), "a\r\nb\tc⟨U+202E⟩");
});

test("visibleName gives text nodes and a titled span per hidden character", () => {
  const box = fakeDocument.createElement("div");
  box.append(...dom.visibleName("invoice\u202efdp.exe", undefined, fakeDocument));
  const [span] = all(box, "span");
  assert.equal(box.textContent, "invoice⟨U+202E⟩fdp.exe");
  assert.equal(span.className, "hidden-char");
  assert.equal(span.title, "Hidden character U+202E (right-to-left override)");
  // a flood of them stays bounded in elements, and still visible
  const flood = fakeDocument.createElement("div");
  const nodes = dom.visibleName("x\u200b".repeat(500_000), undefined, fakeDocument);
  assert.ok(nodes.length <= 4002, `${nodes.length} nodes`);
  flood.append(...nodes);
  assert.equal(all(flood, "span").length, 2000);
  assert.equal(flood.textContent, "x⟨U+200B⟩".repeat(500_000));
});
