// The page code of e2e/test_markdown.py's rows, on e2e/pages/widget.html (window.mount puts
// a configured <pyharness-chat> on it); called from Python by e2e/conftest.py's call() and
// wait_for(). Each returns JSON values for the row's assertions, which stay in Python.
import * as md from "/pyharness/markdown.mjs";

const chat = () => document.querySelector("pyharness-chat");
/** The widget's rendered answers (.md blocks in its shadow root), in order. */
const answers = () => [...chat().shadowRoot.querySelectorAll(".md")];

// ---------------------------------------------------------------------------
// The timer probe: the worst delay of a 10 ms interval timer and the longest task
// (PerformanceObserver "longtask") between probeStart() and probeStop().

let probe;

export function probeStart() {
  const p = { gap: 0, ticks: 0, longest: 0, last: performance.now() };
  probe = p;
  p.timer = setInterval(() => {
    const now = performance.now();
    p.gap = Math.max(p.gap, now - p.last);
    p.last = now;
    p.ticks++;
  }, 10);
  p.observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) p.longest = Math.max(p.longest, e.duration);
  });
  p.observer.observe({ type: "longtask" });
}

export function probeStop() {
  const p = probe;
  clearInterval(p.timer);
  p.observer.disconnect();
  p.gap = Math.max(p.gap, performance.now() - p.last);
  return { gap: Math.round(p.gap), longest: Math.round(p.longest), ticks: p.ticks };
}

// ---------------------------------------------------------------------------
// The widget, driven like a page would

/** Put a <pyharness-chat> with these options on the page. */
export function mount(options) {
  window.mount({}, options, []);
}

export const chatReady = () => chat()?.dataset.state === "ready";

/** Start the probe and send a prompt; resolves with the run's result, as chat.send() does. */
export function send(text) {
  window.lastResult = undefined;
  probeStart();
  return chat().send(text);
}

export const runEnded = () => window.lastResult !== undefined;

/** Every answer is fully rendered: none has the streaming class any more. */
export function answersRendered() {
  const all = answers();
  return all.length && all.every((m) => !m.classList.contains("streaming"));
}

export const answerText = () => answers().at(-1).textContent;

export const answerHrefs = () => [...answers().at(-1).querySelectorAll("a")].map((a) => a.getAttribute("href"));

/** The deepest nesting of blockquotes in the last answer. */
export function answerQuoteDepth() {
  const answer = answers().at(-1);
  const depths = [...answer.querySelectorAll("blockquote")].map((q) => {
    let n = 0;
    for (let e = q; e !== answer; e = e.parentElement) if (e.tagName === "BLOCKQUOTE") n++;
    return n;
  });
  return Math.max(...depths);
}

/** The last answer's non-space characters and its <pre> blocks. */
export function answerSize() {
  const answer = answers().at(-1);
  return { chars: answer.textContent.replace(/\s+/g, "").length, pre: answer.querySelectorAll("pre").length };
}

export const pwned = () => window.pwned;

// ---------------------------------------------------------------------------
// What it renders

/** Render text at once and describe the DOM it gives. */
export function renderSample(text) {
  const box = document.createElement("div");
  box.append(md.renderMarkdown(text));
  const q = (s) => [...box.querySelectorAll(s)];
  return {
    tags: [...box.children].map((e) => e.tagName.toLowerCase()),
    h: box.querySelector("h3").textContent,
    strong: q("strong").map((e) => e.textContent),
    em: q("em").map((e) => e.textContent),
    del: q("del").map((e) => e.textContent),
    code: q("p code").map((e) => e.textContent),
    links: q("a").map((a) => [a.getAttribute("href"), a.textContent, a.className, a.target, a.rel]),
    lis: q("ul > li").map((li) => li.firstChild.nodeName),
    nested: q("ul ul li").map((e) => e.textContent),
    olStart: box.querySelector("ol").getAttribute("start"),
    quote: box.querySelector("blockquote").textContent.trim(),
    align: q("td").map((td) => td.style.textAlign),
    pre: [box.querySelector("pre").dataset.lang, box.querySelector("pre code").textContent],
    br: box.querySelector("p").querySelectorAll("br").length,
    last: box.lastElementChild.textContent,
  };
}

// ---------------------------------------------------------------------------
// Safety

// The only elements and attributes that Markdown from the model may produce.
const TAGS = new Set("P H3 H4 H5 H6 BR STRONG EM DEL CODE PRE A UL OL LI BLOCKQUOTE HR DIV TABLE THEAD TBODY TR TH TD SPAN".split(" "));
const ATTRS = {
  A: ["href", "title", "target", "rel", "class"],
  OL: ["start"],
  TH: ["style"],
  TD: ["style"],
  PRE: ["data-lang"],
  DIV: ["class"],
  SPAN: ["class", "title"],
};

/** Every rule (TAGS, ATTRS, links, styles) that the DOM under root breaks. */
function brokenRules(root) {
  const bad = [];
  for (const el of root.querySelectorAll("*")) {
    if (!TAGS.has(el.tagName)) bad.push(`tag ${el.tagName}`);
    for (const a of el.attributes) {
      if (!(ATTRS[el.tagName] ?? []).includes(a.name)) bad.push(`${el.tagName}[${a.name}]`);
    }
    if (el.tagName === "A" && !/^(https?:\/\/|mailto:)/.test(el.getAttribute("href") ?? "")) bad.push(`href ${el.getAttribute("href")}`);
    if (el.tagName === "A" && (el.target !== "_blank" || el.rel !== "noopener noreferrer nofollow")) bad.push("link target/rel");
    if (el.tagName === "A" && el.title !== el.getAttribute("href")) bad.push(`title ${el.title} for ${el.getAttribute("href")}`);
    if (el.tagName === "SPAN" && !["", "link-dest", "hidden-char"].includes(el.className)) bad.push(`span.${el.className}`);
    if (el.hasAttribute("style") && !/^text-align: (left|center|right);$/.test(el.getAttribute("style"))) {
      bad.push(`style ${el.getAttribute("style")}`);
    }
  }
  return bad;
}

export const answerBrokenRules = () => brokenRules(answers().at(-1));

/**
 * Generate `count` documents from hostile and ordinary pieces (seeded), render each at once
 * and streamed in random pieces with a render between them; return the first differences
 * and every rule broken (brokenRules).
 */
export function fuzz(seed, count, hostile) {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    return (((s ^ (s >>> 15)) * (1 | s)) >>> 0) / 4294967296;
  };
  const pick = (a) => a[Math.floor(rand() * a.length)];
  // biome-ignore format: one piece of Markdown syntax after another reads better in rows
  const pieces = [...hostile, "# head", "## sub", "- item", "1. first", "  - nested", "> quote", "> > deeper",
    "| a | b |\n|---|:-:|\n| 1 | 2 |", "```js\nlet x = 1;\n```", "```\nunclosed", "    indented code",
    "**bold**", "*em*", "_u_", "~~del~~", "`code`", "[l](https://x.example/p)", "<https://y.example>",
    "https://z.example/q?a=1", "---", "text\n===", "plain words here", "\\*esc\\*", "&amp; &copy; &#0;",
    "\r\n", "\t", "\u0000", "\ud800", "😀", "[", "]", "(", ")", "!", "<", ">", "*", "_", "`", "~", "|"];
  const mismatches = [];
  const broken = [];
  for (let n = 0; n < count; n++) {
    const parts = [];
    for (let k = 1 + Math.floor(rand() * 12); k > 0; k--) parts.push(pick(pieces));
    const text = parts.join(pick(["\n", "\n\n", " ", ""]));
    const once = document.createElement("div");
    once.append(md.renderMarkdown(text));
    const streamed = document.createElement("div");
    const stream = new md.MarkdownStream(streamed);
    for (let i = 0; i < text.length; ) {
      const size = 1 + Math.floor(rand() * 12);
      stream.append(text.slice(i, i + size));
      i += size;
      if (rand() < 0.5) stream.pump(performance.now() + 1000);
    }
    stream.finish();
    if (!stream.done) broken.push(`not done: ${JSON.stringify(text)}`);
    if (once.innerHTML !== streamed.innerHTML && mismatches.length < 5) {
      mismatches.push({ text, once: once.innerHTML, streamed: streamed.innerHTML });
    }
    for (const root of [once, streamed]) for (const b of brokenRules(root)) broken.push(`${b} in ${JSON.stringify(text)}`);
  }
  return { mismatches, broken: broken.slice(0, 10) };
}

// ---------------------------------------------------------------------------
// Bounded time, whatever the text

/** Render text on the page streamed in 2 KB pieces in one burst, with the probe running. */
export async function streamInOneBurst(text) {
  probeStart();
  const box = document.createElement("div");
  document.body.append(box);
  const t0 = performance.now();
  const figures = await new Promise((resolve) => {
    const stream = new md.MarkdownStream(box, { onDone: () => resolve(probeStop()) });
    for (let i = 0; i < text.length; i += 2048) stream.append(text.slice(i, i + 2048));
    stream.finish();
  });
  const total = Math.round(performance.now() - t0);
  const nonSpace = (s) => s.replace(/\s+/g, "").length;
  let depth = 0;
  for (let el = box; el.firstElementChild; el = el.firstElementChild) depth++;
  box.remove();
  return { ...figures, total, chars: nonSpace(box.textContent), depth };
}

/** Stream a 12,000-line fence and a 1,200-row table and describe the blocks they become. */
export async function longCodeBlockAndTable() {
  const code = Array.from({ length: 12000 }, (_, i) => `line ${i}: ${"x".repeat(i % 50)}`).join("\n");
  const rows = Array.from({ length: 1200 }, (_, i) => `| ${i} | r${i} |`).join("\n");
  const text = `intro\n\n\`\`\`py\n${code}\n\`\`\`\n\n| n | name |\n|---|:-:|\n${rows}\n\nend`;
  const box = document.createElement("div");
  document.body.append(box);
  await new Promise((resolve) => {
    const stream = new md.MarkdownStream(box, { onDone: resolve });
    for (let i = 0; i < text.length; i += 700) stream.append(text.slice(i, i + 700));
    stream.finish();
  });
  const tables = [...box.querySelectorAll("table")];
  const result = {
    tags: [...box.children].map((e) => e.tagName.toLowerCase()),
    codeSame: box.querySelector("pre code").textContent === code,
    lang: box.querySelector("pre").dataset.lang,
    rows: tables.map((t) => t.tBodies[0].rows.length),
    heads: tables.map((t) => t.tHead.textContent),
    firstRow: tables[0].tBodies[0].rows[0].textContent,
    lastRow: [...tables.at(-1).tBodies[0].rows].at(-1).textContent,
    align: tables.at(-1).tBodies[0].rows[0].cells[1].style.textAlign,
  };
  box.remove();
  return result;
}

/** Render deeply nested texts at once: the depth of the DOM and whether the leaf text is shown. */
export function deepNesting() {
  const results = {};
  for (const [name, text] of Object.entries({
    quotes: `${">".repeat(20000)} leaf`,
    lists: `${"- ".repeat(20000)}leaf`,
    brackets: `${"[".repeat(20000)}x`,
    mixed: `${"> - ".repeat(5000)}leaf`,
    emphasis: `${"*".repeat(20000)}x${"*".repeat(20000)}`,
  })) {
    const box = document.createElement("div");
    box.append(md.renderMarkdown(text));
    let depth = 0;
    for (let el = box; el.firstElementChild; el = el.lastElementChild) depth++;
    results[name] = { depth, leaf: box.textContent.includes("leaf") || box.textContent.includes("x") };
  }
  return results;
}
