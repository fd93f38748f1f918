// Safe Markdown for model text, used by the widget.
//
// Model text is untrusted. This renderer never parses anything as HTML: it reads a
// small Markdown subset into plain objects (parseMarkdown), then builds DOM nodes with
// createElement and textContent only, from a fixed list of tags (renderMarkdown). So a
// "<script>" or "<img onerror>" in the text stays visible text. Links are kept only for
// http:, https: and mailto: URLs, open in a new tab without a referrer, and images are
// shown as links: the page never loads a URL the model chose.
//
// Supported: paragraphs (single newlines are line breaks, as in chat), # headings, ```
// fences (an unclosed fence runs to the end, so streamed code looks right), `code`,
// **strong**, *em*, ~~del~~, [links](url), <autolinks>, bare URLs, - and 1. lists
// (nested by indentation), > quotes, --- rules, | tables |, and \ escapes.

/**
 * @typedef {{type: "text", text: string} | {type: "br"} | {type: "code", text: string}
 *   | {type: "strong" | "em" | "del", children: Inline[]}
 *   | {type: "link", href: string, image: boolean, children: Inline[]}} Inline
 * @typedef {{type: "para", text: string} | {type: "heading", level: number, text: string}
 *   | {type: "code", lang: string, text: string} | {type: "hr"}
 *   | {type: "quote", blocks: Block[]}
 *   | {type: "list", ordered: boolean, start: number, items: Block[][]}
 *   | {type: "table", align: string[], head: string[], rows: string[][]}} Block
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:\s+(.*))?$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const URL_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** Parse Markdown text into blocks (plain data; no DOM needed). @returns {Block[]} */
export function parseMarkdown(text) {
  return parseBlocks(String(text).replace(/\r\n?/g, "\n").split("\n"));
}

/** Render Markdown text as DOM nodes that cannot contain live HTML. */
export function renderMarkdown(text, doc = document) {
  const fragment = doc.createDocumentFragment();
  for (const block of parseMarkdown(text)) fragment.append(renderBlock(block, doc));
  return fragment;
}

// ---------------------------------------------------------------------------
// Blocks

function startsBlock(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)
    || ITEM.test(line) || isTableStart(line, next);
}

function isTableStart(line, next) {
  return line.includes("|") && next !== undefined && next.includes("-") && TABLE_SEP.test(next);
}

/** @param {string[]} lines @returns {Block[]} */
function parseBlocks(lines) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) {
      i++;
    } else if ((m = FENCE.exec(line))) {
      const marker = m[1];
      const body = [];
      for (i++; i < lines.length; i++) {
        const trimmed = lines[i].trim();
        if (trimmed.startsWith(marker) && trimmed.replaceAll(marker[0], "") === "") break;
        body.push(lines[i]);
      }
      i++; // the closing fence, or past the end while the text is still streaming
      out.push({ type: "code", lang: m[2], text: body.join("\n") });
    } else if ((m = HEADING.exec(line))) {
      out.push({ type: "heading", level: m[1].length, text: m[2] });
      i++;
    } else if (RULE.test(line)) {
      out.push({ type: "hr" });
      i++;
    } else if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(lines[i++].replace(QUOTE, ""));
      out.push({ type: "quote", blocks: parseBlocks(inner) });
    } else if (ITEM.test(line)) {
      i = parseList(lines, i, out);
    } else if (isTableStart(line, lines[i + 1])) {
      i = parseTable(lines, i, out);
    } else {
      const para = [line.trim()];
      for (i++; i < lines.length && lines[i].trim() && !startsBlock(lines[i], lines[i + 1]); i++) {
        para.push(lines[i].trim());
      }
      out.push({ type: "para", text: para.join("\n") });
    }
  }
  return out;
}

function indentOf(line) {
  return line.length - line.trimStart().length;
}

function parseList(lines, i, out) {
  const first = ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const items = [];
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && m[1].length === indent && /\d/.test(m[2]) === ordered) {
      items.push([m[3] ?? ""]);
      i++;
    } else if (line.trim() && indentOf(line) > indent) {
      items[items.length - 1].push(line); // continuation or a nested list
      i++;
    } else if (!line.trim() && i + 1 < lines.length && lines[i + 1].trim()
      && (indentOf(lines[i + 1]) > indent || (ITEM.exec(lines[i + 1])?.[1].length === indent))) {
      items[items.length - 1].push("");
      i++;
    } else {
      break;
    }
  }
  out.push({
    type: "list",
    ordered,
    start: ordered ? Number.parseInt(first[2], 10) : 1,
    items: items.map(([head, ...rest]) => parseBlocks([head, ...dedent(rest)])),
  });
  return i;
}

function dedent(lines) {
  const indents = lines.filter((l) => l.trim()).map(indentOf);
  const cut = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(cut));
}

function parseTable(lines, i, out) {
  const head = splitRow(lines[i]);
  const align = splitRow(lines[i + 1]).map((cell) =>
    cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : "");
  const rows = [];
  for (i += 2; i < lines.length && lines[i].trim() && lines[i].includes("|"); i++) {
    rows.push(splitRow(lines[i]));
  }
  out.push({ type: "table", align, head, rows });
  return i;
}

function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll("\\|", "|"));
}

// ---------------------------------------------------------------------------
// Inline

const INLINE = new RegExp([
  /\\([!-/:-@[-`{-~])/.source, // 1: an escaped character
  /(`+)([^`]|[^`][\s\S]*?[^`])\2(?!`)/.source, // 2, 3: code span
  /\*\*(?=\S)([\s\S]*?\S)\*\*/.source, // 4: strong
  /(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)/.source, // 5: strong
  /\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/.source, // 6: em
  /(?<!\w)_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)/.source, // 7: em
  /~~(?=\S)([\s\S]*?\S)~~/.source, // 8: del
  /(!?)\[((?:[^[\]\n]|\[[^\]\n]*\])*)\]\(\s*<?([^\s()<>]*(?:\([^\s()<>]*\)[^\s()<>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/.source, // 9, 10, 11: link
  /<((?:https?:\/\/|mailto:)[^\s<>]+)>/.source, // 12: autolink
  /(?<![\w/])(https?:\/\/[^\s<>()]*[^\s<>().,:;!?'"*_~\]])/.source, // 13: bare URL
].join("|"), "g");

/** @param {string} text @returns {Inline[]} */
export function parseInline(text) {
  const out = [];
  let last = 0;
  const pushText = (s) => {
    if (!s) return;
    const parts = s.split("\n");
    parts.forEach((part, n) => {
      if (n > 0) out.push({ type: "br" });
      if (part) out.push({ type: "text", text: part });
    });
  };
  for (const m of text.matchAll(INLINE)) {
    pushText(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1] !== undefined) out.push({ type: "text", text: m[1] });
    else if (m[3] !== undefined) out.push({ type: "code", text: m[3].replace(/^ (.+) $/, "$1") });
    else if (m[4] !== undefined || m[5] !== undefined) out.push({ type: "strong", children: parseInline(m[4] ?? m[5]) });
    else if (m[6] !== undefined || m[7] !== undefined) out.push({ type: "em", children: parseInline(m[6] ?? m[7]) });
    else if (m[8] !== undefined) out.push({ type: "del", children: parseInline(m[8]) });
    else if (m[10] !== undefined) out.push(link(m[11], parseInline(m[10] || m[11]), m[9] === "!", m[0]));
    else out.push(link(m[12] ?? m[13], [{ type: "text", text: m[12] ?? m[13] }], false, m[0]));
  }
  pushText(text.slice(last));
  return out;
}

function link(url, children, image, source) {
  const href = safeUrl(url);
  if (href === null) return { type: "text", text: source };
  return { type: "link", href, image, children: image && !children.length ? [{ type: "text", text: href }] : children };
}

/** The URL if it is absolute http(s) or mailto, else null. */
export function safeUrl(url) {
  try {
    const parsed = new URL(url);
    return URL_SCHEMES.has(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------
// DOM

function el(doc, tag, children = []) {
  const node = doc.createElement(tag);
  node.append(...children);
  return node;
}

function renderInline(items, doc) {
  return items.map((item) => {
    switch (item.type) {
      case "text":
        return doc.createTextNode(item.text);
      case "br":
        return el(doc, "br");
      case "code": {
        const code = el(doc, "code");
        code.textContent = item.text;
        return code;
      }
      case "link": {
        const a = el(doc, "a", renderInline(item.children, doc));
        a.href = item.href;
        a.target = "_blank";
        a.rel = "noopener noreferrer nofollow";
        if (item.image) a.className = "image-link";
        return a;
      }
      default:
        return el(doc, item.type, renderInline(item.children, doc));
    }
  });
}

function renderBlock(block, doc) {
  switch (block.type) {
    case "para":
      return el(doc, "p", renderInline(parseInline(block.text), doc));
    case "heading":
      return el(doc, `h${Math.min(block.level + 2, 6)}`, renderInline(parseInline(block.text), doc));
    case "hr":
      return el(doc, "hr");
    case "code": {
      const code = el(doc, "code");
      code.textContent = block.text;
      const pre = el(doc, "pre", [code]);
      if (block.lang) pre.dataset.lang = block.lang;
      return pre;
    }
    case "quote":
      return el(doc, "blockquote", block.blocks.map((b) => renderBlock(b, doc)));
    case "list": {
      const list = el(doc, block.ordered ? "ol" : "ul", block.items.map((blocks) => {
        // A one-paragraph item is "tight": its text goes straight into the <li>.
        const [first, ...rest] = blocks;
        const head = first?.type === "para" ? renderInline(parseInline(first.text), doc) : first ? [renderBlock(first, doc)] : [];
        return el(doc, "li", [...head, ...rest.map((b) => renderBlock(b, doc))]);
      }));
      if (block.ordered && block.start !== 1) list.setAttribute("start", String(block.start));
      return list;
    }
    case "table": {
      const cell = (tag, text, i) => {
        const node = el(doc, tag, renderInline(parseInline(text), doc));
        if (block.align[i]) node.style.textAlign = block.align[i];
        return node;
      };
      const head = el(doc, "thead", [el(doc, "tr", block.head.map((t, i) => cell("th", t, i)))]);
      const body = el(doc, "tbody", block.rows.map((row) => el(doc, "tr", block.head.map((_, i) => cell("td", row[i] ?? "", i)))));
      const wrap = el(doc, "div", [el(doc, "table", [head, body])]);
      wrap.className = "table-scroll";
      return wrap;
    }
  }
  return doc.createTextNode("");
}
