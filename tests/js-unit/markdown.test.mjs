// embed/widget/markdown.mjs under node (node --test tests/js-unit/): the link rules (a link shows
// where it really goes) and linear time on adversarial text. The browser tier
// (e2e/test_markdown.py) checks the same renderer in Chromium.

import assert from "node:assert/strict";
import { test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import { all, fakeDocument } from "./fake-dom.mjs";
import * as mdLinks from "../../embed/widget/markdown-links.mjs";
import "./load-embed.mjs"; // its hooks resolve markdown.mjs's "./markdown-it.mjs"

const md = await import("../../embed/widget/markdown.mjs");
const render = (text) => md.renderMarkdown(text, fakeDocument);

/** [href, title, text] of each link, and the text of each destination note. */
function links(text) {
  const root = render(text);
  return {
    links: all(root, "a").map((a) => [a.href, a.title, a.textContent]),
    notes: all(root, "span")
      .filter((s) => s.className === "link-dest")
      .map((s) => s.textContent),
    text: root.textContent,
  };
}

test("a link whose text names another host shows the real one beside it", () => {
  const out = links("[https://bank.example/](https://evil.example/?d=workspace-data)");
  assert.deepEqual(out.links, [
    ["https://evil.example/?d=workspace-data", "https://evil.example/?d=workspace-data", "https://bank.example/"],
  ]);
  assert.deepEqual(out.notes, ["(evil.example)"]);
  assert.equal(out.text, "https://bank.example/ (evil.example)");
  for (const [text, note] of [
    ["[bank.example](https://evil.example/)", "(evil.example)"],
    ["[Log in at www.bank.example/login now](https://evil.example:8443/)", "(evil.example:8443)"],
    ["[BANK.example](http://bank.example.evil.example/)", "(bank.example.evil.example)"],
    ["[me@bank.example](mailto:me@evil.example)", "(me@evil.example)"],
    ["[mailto:me@bank.example](mailto:me@evil.example?subject=x)", "(me@evil.example)"],
    ["[bank。example](https://evil.example/)", "(evil.example)"], // a full-stop look-alike
    ["[https://bank.example/](https://bank.example@evil.example/)", "(evil.example)"], // a user name
    ["<https://xn--bnk-sla.example/>", "(xn--bnk-sla.example)"], // an IDN host, in ASCII
    ["![https://bank.example/logo](https://evil.example/x.png)", "(evil.example)"], // an image link
    ["[https://bank.example/](https://evil.example/) and [ok](https://ok.example/)", "(evil.example)"],
  ]) {
    assert.deepEqual(links(text).notes, [note], text);
  }
});

test("links whose text is plain words, or names their own host, have no note but a title", () => {
  for (const text of [
    "[click here](https://evil.example/)",
    "[the docs](https://docs.python.org/3/)",
    "[bank.example](https://bank.example/login)",
    "[https://Bank.example/a](https://bank.example/b)",
    "[main.py](https://github.com/x/y/blob/main/main.py)",
    "[README.md](https://github.com/x/y)",
    "[version 1.2.3](https://x.example/)",
    "[e.g. this](https://x.example/)",
    "<https://example.org/auto>",
    "https://bare.example/path",
    "<mailto:me@example.com>",
  ]) {
    const out = links(text);
    assert.deepEqual(out.notes, [], text);
    assert.equal(out.links.length, 1, text);
    const [[href, title]] = out.links;
    assert.equal(title, href, text);
  }
});

test("bare URLs: GitHub's rules for where they end, and only http(s) and mailto", () => {
  const hrefs = (text) => links(text).links.map(([href, , shown]) => [href, shown]);
  assert.deepEqual(hrefs("see https://bare.example/path. and more"), [["https://bare.example/path", "https://bare.example/path"]]);
  assert.deepEqual(hrefs("(http://x.example/a_(b))"), [["http://x.example/a_(b)", "http://x.example/a_(b)"]]);
  assert.deepEqual(hrefs("[http://x.example/a]"), [["http://x.example/a", "http://x.example/a"]]);
  assert.deepEqual(hrefs("mail mailto:me@x.example, now"), [["mailto:me@x.example", "mailto:me@x.example"]]);
  assert.deepEqual(hrefs("http://a.example/x<b"), [["http://a.example/x", "http://a.example/x"]]);
  // an invisible character ends a URL: the text after it is not hidden inside the link
  assert.deepEqual(hrefs("https://bank.example/\u202eevil"), [["https://bank.example/", "https://bank.example/"]]);
  for (const text of [
    "xhttp://no.example",
    "http:/no.example",
    "https://",
    "mailto:nobody",
    "javascript:alert(1)",
    "ftp://x.example/",
    "//x.example/",
    "`http://code.example/`",
  ]) {
    assert.deepEqual(hrefs(text), [], text);
  }
  // a link's own text is never linked again
  assert.deepEqual(hrefs("[see http://a.example/](https://b.example/)"), [["https://b.example/", "see http://a.example/"]]);
});

test("linkNote is a pure rule over text and href", () => {
  assert.equal(mdLinks.linkNote("https://bank.example/", "https://evil.example/"), "evil.example");
  assert.equal(mdLinks.linkNote("plain words", "https://evil.example/"), null);
  assert.equal(mdLinks.linkNote("bank.example", "not a url"), null);
  assert.deepEqual(mdLinks.claimedHosts("go to https://a.example/x, b.example or c@d.example."), ["a.example", "b.example", "d.example"]);
});

test("code shows its hidden characters; prose keeps them", () => {
  const root = render("Saved as `invoice\u202efdp.exe`.\n\n```\nif (x) {\u202e} // ok\n```\n\n\u05e9\u200f\u05dc\u05d5\u05dd");
  const [inline, block] = all(root, "code");
  assert.equal(inline.textContent, "invoice⟨U+202E⟩fdp.exe");
  assert.equal(block.textContent, "if (x) {⟨U+202E⟩} // ok");
  assert.deepEqual(
    all(root, "span").map((s) => s.className),
    ["hidden-char", "hidden-char"],
  );
  assert.equal(all(root, "p").at(-1).textContent, "\u05e9\u200f\u05dc\u05d5\u05dd");
});

// ---------------------------------------------------------------------------
// Linear time

const ADVERSARIAL = {
  "bare URL, open parens": (n) => "http://a.b/(".repeat(n / 12),
  "bare URL, open brackets": (n) => "http://a.b/[".repeat(n / 12),
  "bare URL, braces": (n) => "http://a.b/{".repeat(n / 12),
  "autolink, open parens": (n) => "<http://a.b/(".repeat(n / 13),
  "link destination, parens": (n) => "[a](http://a.b/(".repeat(n / 16),
  "mailto without @": (n) => "mailto:a".repeat(n / 8),
  "mailto with @": (n) => "mailto:a@".repeat(n / 9),
  "scheme after scheme": (n) => "https://".repeat(n / 8),
  "trailing punctuation": (n) => `http://a.b/${").".repeat(n / 2)}x`,
  "link text of dots": (n) => `[${"a.".repeat(n / 2)}](https://x.example/)`,
  "link text of colons": (n) => `[${"a:".repeat(n / 2)}](https://x.example/)`,
  "spoofed links": (n) => "[https://bank.example/](https://evil.example/) ".repeat(n / 46),
  brackets: (n) => "[".repeat(n),
  images: (n) => "![".repeat(n / 2),
  "nested brackets": (n) => "[".repeat(n / 2) + "]".repeat(n / 2),
  links: (n) => "[a](".repeat(n / 4),
  emphasis: (n) => "_a* ".repeat(n / 4),
  strong: (n) => "**a ".repeat(n / 4),
  strikethrough: (n) => "~~a ".repeat(n / 4),
  "emphasis mix": (n) => "*_".repeat(n / 2),
  "code spans": (n) => "`a``".repeat(n / 4),
  "angle brackets": (n) => "<a".repeat(n / 2),
  entities: (n) => "&#".repeat(n / 2),
  quotes: (n) => "> ".repeat(n / 2),
  lists: (n) => "- a\n".repeat(n / 4),
  table: (n) => `|a|b|\n|-|-|\n${"|\n".repeat(n / 2)}`,
  "invisible characters": (n) => "\u202e\u200b".repeat(n / 2),
};

// A full garbage collection before each timed run: what the heap holds from the last one
// would otherwise be collected during the next, and large inputs would pay for it.
v8.setFlagsFromString("--expose-gc");
const collect = vm.runInNewContext("gc");

function best(text, reps) {
  let time = Infinity;
  for (let i = 0; i < reps; i++) {
    collect();
    render("*settle* after the collection");
    const start = performance.now();
    render(text);
    time = Math.min(time, performance.now() - start);
  }
  return time;
}

// A quadratic rule takes 64x the time for 8x the text, a linear one about 8x (up to 15x
// for the token-heavy texts: the large ones do not fit the CPU's caches). The best of
// five tries is held to 20x: noise makes one try slow, never all of them fast.

/** The size at which `make`'s text takes a few milliseconds: smaller is mostly noise. */
function timeable(make) {
  let n = 16_000;
  while (n < 256_000 && best(make(n), 2) < 4) n *= 2;
  return n;
}

/** Time at 8n over time at n, each the best of a few runs. */
function growth(make, n) {
  const small = make(n);
  const large = make(8 * n);
  return best(large, 2) / best(small, 3);
}

for (const [name, make] of Object.entries(ADVERSARIAL)) {
  test(`linear time: ${name}`, () => {
    const n = timeable(make);
    const ratios = [];
    while (ratios.length < 5 && !(Math.min(...ratios) < 20)) ratios.push(growth(make, n));
    const shown = ratios.map((r) => `${r.toFixed(1)}x`).join(", ");
    console.log(`${name}: n=${n} ${shown}`);
    assert.ok(Math.min(...ratios) < 20, `${name}: 8x the text (${8 * n} characters) took ${shown} the time`);
  });
}
