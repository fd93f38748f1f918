// Safe Markdown for model text, used by the widget.
//
// Model text is untrusted. markdown-it (bundled into markdown-it.mjs by the build) parses
// it with raw HTML off into a token stream; this module builds DOM nodes from those
// tokens with createElement and textContent only, from a fixed list of tags. Nothing is
// ever parsed as HTML (no innerHTML), so a "<script>" or "<img onerror>" in the text stays
// visible text. Links are kept only for absolute http:, https: and mailto: URLs, open in
// a new tab without a referrer, and images are shown as links: the page never loads a
// URL the model chose. Every link's title is its real destination, and a link whose text
// names another host ("[https://bank.example/](https://evil.example/)") shows the real
// one beside it: the text of a link is the model's, so it may lie.
//
// Linear: parsing and building take time in proportion to the text, whatever it is
// (markdown-it's own linkify is replaced, see bareUrls in markdown-links.mjs;
// tests/js-unit/markdown.test.mjs holds every rule to it at n and 8n).
//
// Bounded: nesting deeper than MAX_DEPTH becomes plain text (markdown-it's maxNesting
// would drop it), and a MarkdownStream renders a growing text a bounded piece at a time:
// finished blocks are rendered once and kept, only the last (still open) block is
// rendered again, at most once a frame, within a per-frame time budget shared by every
// stream on the page.
//
// Supported: CommonMark plus GitHub tables and ~~strikethrough~~; single newlines are
// line breaks (as in chat); bare http(s) URLs become links. Not supported: raw HTML
// (shown as text), reference-style link definitions (shown as text: a definition at the
// end could change text already rendered), typographic replacements.

import MarkdownIt from "./markdown-it.mjs";
import { bareUrls, linkNote, safeUrl } from "./markdown-links.mjs";
import { visibleName } from "./widget-dom.mjs";

/** Nesting (quotes, lists; emphasis, links) past this depth is rendered as plain text. */
const MAX_DEPTH = 32;
/** Per-frame time budget (ms) for all streams on the page together. */
const FRAME_BUDGET_MS = 8;
/** A still-open block is cut (rendered as it stands, continued after) past this size. */
const MAX_BLOCK = 64 * 1024;
const MIN_WINDOW = 1024;
const MAX_WINDOW = 16 * 1024;
const START_WINDOW = 4 * 1024;
const SLOW_STEP_MS = 32; // a block whose next (doubled) step could take longer is cut
const STEP_TOKENS = 8_000; // about this many tokens (DOM nodes) per step at most
const TABLE_ROWS = 500; // a cut table goes on in the same <table> until it has this many
// rows (a table is laid out whole); its next part then starts a new one, header repeated

let md = null; // the parser, made at first use

function parser() {
  if (md) return md;
  const it = new MarkdownIt("default", { html: false, linkify: false, breaks: true, typographer: false, maxNesting: 2 * MAX_DEPTH });
  it.block.ruler.disable("reference");
  it.block.ruler.before("table", "pyharness_depth", tooDeep);
  it.core.ruler.push("pyharness_urls", bareUrls);
  it.validateLink = (url) => safeUrl(url) !== null;
  // An autolink shows its URL as written: markdown-it would decode "%E2%80%AE" into a
  // live U+202E and "xn--" hosts into look-alike letters.
  it.normalizeLinkText = (url) => url;
  md = it;
  return it;
}

/** Past MAX_DEPTH, the rest of the container is one paragraph of text (not dropped). */
function tooDeep(state, startLine, endLine, silent) {
  if (state.level < MAX_DEPTH) return false;
  if (silent) return true;
  let next = startLine + 1;
  while (next < endLine && (state.isEmpty(next) || state.sCount[next] >= state.blkIndent)) next++;
  state.line = next;
  state.push("paragraph_open", "p", 1).map = [startLine, next];
  const inline = state.push("inline", "", 0);
  inline.content = state.getLines(startLine, next, state.blkIndent, false).trim();
  inline.map = [startLine, next];
  inline.children = [];
  state.push("paragraph_close", "p", -1);
  return true;
}

/** Render a whole Markdown text at once as DOM nodes that cannot contain live HTML. */
export function renderMarkdown(text, doc = document) {
  const fragment = doc.createDocumentFragment();
  fragment.append(...build(parser().parse(normalize(String(text)), {}), 0, Infinity, doc, null));
  return fragment;
}

function normalize(text) {
  return text.replace(/\r\n?/g, "\n");
}

// ---------------------------------------------------------------------------
// Streaming

const active = new Set();
let frame = 0;
/** @type {ReturnType<typeof setTimeout> | 0} */
let timer = 0;
let restUntil = 0;

function schedule() {
  if (frame || timer) return;
  // requestAnimationFrame does not run in a hidden tab: a timer takes over there.
  frame = requestAnimationFrame(runFrame);
  timer = setTimeout(runFrame, 250);
}

function runFrame() {
  cancelAnimationFrame(frame);
  clearTimeout(timer);
  frame = timer = 0;
  const start = performance.now();
  if (start < restUntil) return void (active.size && schedule());
  const deadline = start + FRAME_BUDGET_MS;
  for (const stream of [...active]) {
    active.delete(stream);
    if (!stream.pump(deadline)) active.add(stream); // to the back: streams take turns
    if (performance.now() >= deadline) break;
  }
  // A frame that overran (one slow step) is followed by as long a rest: at most about
  // half of the main thread goes to rendering, whatever the text.
  const spent = performance.now() - start;
  if (spent > 2 * FRAME_BUDGET_MS) restUntil = performance.now() + spent;
  if (active.size) schedule();
}

/**
 * Markdown that grows while it streams in: `append` text as it arrives (cheap, never
 * renders), `finish` when it is complete. Rendering happens in animation frames, within
 * the shared budget; `onDone` is called once everything is rendered after `finish`.
 */
export class MarkdownStream {
  #node;
  #around;
  #onDone;
  #queue = []; // text not yet looked at, in arrival order, from #head on
  #head = 0;
  #queued = 0;
  #cr = false; // the last piece ended in "\r" (a following "\n" is dropped)
  #rest = ""; // text after the last committed block (normalized)
  #window = START_WINDOW;
  // A fence or table that a cut left open goes on where it was: its opening line(s) are
  // parsed again in front of the rest, and what follows goes into the same element.
  #carry = ""; // the fence's opening line, or the table's header and delimiter rows
  /** @type {HTMLElement | null} the fence's <code>, or the table's <tbody> */
  #carryInto = null;
  #carryJoin = ""; // for a fence: what goes between two parts ("\n" after a whole line)
  #tail = []; // nodes of the still-open block(s), replaced at each render
  #finished = false;
  #done = false;
  #rate = 0; // characters per millisecond, measured
  #density = 0; // tokens per character, measured

  /**
   * @param {HTMLElement} node where the rendered blocks go
   * @param {{around?: (update: () => void) => void, onDone?: () => void}} [options]
   *   `around` wraps each DOM update (the widget keeps its log scrolled to the bottom).
   */
  constructor(node, { around = (update) => update(), onDone = () => {} } = {}) {
    this.#node = node;
    this.#around = around;
    this.#onDone = onDone;
  }

  /** True once `finish` was called and everything is rendered. */
  get done() {
    return this.#done;
  }

  append(text) {
    text = String(text ?? "");
    if (this.#finished || !text) return;
    this.#queue.push(text);
    this.#queued += text.length;
    active.add(this);
    schedule();
  }

  /** No more text: render what is left (now if it fits the budget, else over frames). */
  finish() {
    if (this.#finished) return;
    this.#finished = true;
    if (this.pump(performance.now() + FRAME_BUDGET_MS)) active.delete(this);
    else {
      active.add(this);
      schedule();
    }
  }

  /** Render until the deadline; true once there is nothing left to do for now. */
  pump(deadline) {
    if (this.#done) return true;
    let idle = false;
    this.#around(() => {
      do idle = this.#step();
      while (!idle && performance.now() < deadline);
    });
    if (idle && this.#finished && !this.#done) {
      this.#done = true;
      this.#onDone();
    }
    return idle;
  }

  /** Move queued text into #rest until it holds `size` characters (or the queue is empty). */
  #fill(size) {
    let rest = this.#rest;
    while (rest.length < size && this.#head < this.#queue.length) {
      let piece = this.#queue[this.#head];
      const take = size - rest.length;
      if (piece.length > take) {
        const high = piece.charCodeAt(take - 1);
        const cut = high >= 0xd800 && high < 0xdc00 ? take + 1 : take; // keep a pair whole
        this.#queue[this.#head] = piece.slice(cut);
        piece = piece.slice(0, cut);
      } else {
        this.#queue[this.#head++] = "";
      }
      this.#queued -= piece.length;
      if (this.#cr && piece[0] === "\n") piece = piece.slice(1);
      if (piece) this.#cr = piece.at(-1) === "\r";
      rest += piece.replace(/\r\n?/g, "\n");
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#rest = rest;
  }

  /** One bounded piece of work; true when there is nothing more to do for now. */
  #step() {
    const started = performance.now();
    this.#fill(this.#window);
    const more = this.#queued > 0 || this.#rest.length > this.#window;
    const src = more ? cut(this.#rest.slice(0, this.#window)) : this.#rest;
    const final = this.#finished && !more;
    const tokens = parser().parse(this.#carry + src, {});
    const blocks = topLevelBlocks(tokens);
    const shift = countNewlines(this.#carry); // token lines are counted from the carried lines
    // Blocks above block j are finished once block j's first line and the line after it
    // are complete (no partial last line: "2" may still become "2." and continue a list
    // above; a table needs its delimiter row), or the text is complete.
    const complete = final ? Infinity : countNewlines(src);
    let j = final ? blocks.length : blocks.length - 1;
    while (!final && j >= 1 && blocks[j].line - shift + 2 > complete) j--;
    let idle;
    if (j >= 1) {
      const end = j < blocks.length ? blocks[j].index : tokens.length;
      this.#commit(tokens, end, null, "");
      const offset = j < blocks.length ? lineStart(src, blocks[j].line - shift) : src.length;
      this.#rest = this.#rest.slice(offset);
      this.#window = this.#baseWindow();
      if (!more) this.#replaceTail(this.#render(tokens, end, tokens.length).nodes);
      idle = !more;
    } else if (!more) {
      this.#replaceTail(this.#render(tokens, 0, tokens.length).nodes);
      idle = true;
    } else if (this.#window >= MAX_BLOCK || 4 * (performance.now() - started) > SLOW_STEP_MS || 2 * tokens.length > STEP_TOKENS) {
      // One block bigger than is worth parsing again and again: render it as it stands
      // and go on after it. A fence or a table goes on in the same element; other blocks
      // are split in two.
      const last = blocks.length ? tokens[blocks.at(-1).index] : null;
      const open =
        (last?.type === "fence" && last === tokens.at(-1) && !closesFence(this.#carry + src, last))
        || (last?.type === "table_open" && tokens.at(-1).type === "table_close");
      this.#commit(tokens, tokens.length, open ? last : null, this.#carry + src);
      this.#rest = this.#rest.slice(src.length);
      this.#window = this.#baseWindow();
      idle = false;
    } else {
      this.#window = Math.min(MAX_BLOCK, this.#window * 2);
      idle = false;
    }
    if (src.length > 1024) {
      this.#rate = src.length / Math.max(0.1, performance.now() - started);
      this.#density = tokens.length / src.length;
    }
    return idle;
  }

  /** The text for one step: what takes about 3/4 of a frame's budget at the rate seen,
   * and gives no more than STEP_TOKENS tokens. */
  #baseWindow() {
    if (!this.#rate) return START_WINDOW;
    const size = Math.min(this.#rate * FRAME_BUDGET_MS * 0.75, STEP_TOKENS / Math.max(this.#density, 1e-3));
    return Math.max(MIN_WINDOW, Math.min(MAX_WINDOW, Math.floor(size)));
  }

  /** Render tokens[0, end) for good, before the tail. `open`: the last block's first
   * token, a fence or table that the text after `parsed` goes on in. */
  #commit(tokens, end, open, parsed) {
    this.#replaceTail([]);
    const { nodes, into } = this.#render(tokens, 0, end);
    for (const node of nodes) if (!node.parentNode) this.#node.append(node);
    if (open?.type === "fence") {
      if (into) this.#carryInto = into; // a new fence; else the carried one goes on
      this.#carry = `${open.markup}${open.info.replace(/[`\n]/g, "")}\n`;
      // The <code> shows the content without its last "\n": give it back before more.
      this.#carryJoin = open.content.endsWith("\n") ? "\n" : "";
    } else if (open) {
      // a table goes on: into is its <table>
      const table = /** @type {HTMLTableElement | null} */ (into);
      if (table) this.#carryInto = table.tBodies[0] ?? table.appendChild(this.#node.ownerDocument.createElement("tbody"));
      const head = lineStart(parsed, open.map[0]);
      this.#carry = parsed.slice(head, lineStart(parsed, open.map[0] + 2));
    } else {
      this.#carry = "";
      this.#carryInto = null;
      this.#carryJoin = "";
    }
  }

  #replaceTail(nodes) {
    for (const node of this.#tail) node.remove();
    this.#tail = nodes;
    for (const node of nodes) if (!node.parentNode) this.#node.append(node);
  }

  /** DOM nodes for tokens[from, to), and the last top-level fence's <code> or table's
   * <table> among them (where it would go on). What goes on in a carried fence or table
   * (text, rows) goes into its element, and is among the nodes. */
  #render(tokens, from, to) {
    const doc = this.#node.ownerDocument;
    const carried = [];
    if (this.#carry && from === 0 && tokens[0]?.type === "fence") {
      carried.push(...visibleName(this.#carryJoin + tokens[0].content.replace(/\n$/, ""), CODE, doc));
      from = 1;
    } else if (
      this.#carry
      && from === 0
      && tokens[0]?.type === "table_open"
      && /** @type {HTMLTableSectionElement} a carried table's <tbody> */ (this.#carryInto).rows.length < TABLE_ROWS
    ) {
      let close = tokens.findIndex((t) => t.type === "table_close" && t.level === 0);
      if (close === -1) close = tokens.length - 1;
      const [wrap] = build(tokens, 0, Math.min(close + 1, to), doc, null);
      carried.push(...(wrap?.querySelectorAll("tbody > tr") ?? []));
      from = close + 1;
    }
    this.#carryInto?.append(...carried);
    // (cast: TypeScript does not see the callback's assignment, and would narrow to null)
    let into = /** @type {HTMLElement | null} */ (null);
    const nodes = build(tokens, from, to, doc, (element) => {
      into = element;
    });
    return { nodes: [...carried, ...nodes], into };
  }
}

/** A window of text that is followed by more, cut after its last full line, else after
 * its last space, else anywhere (not inside a surrogate pair). Never empty. */
function cut(text) {
  const line = text.lastIndexOf("\n");
  if (line >= text.length / 2) return text.slice(0, line + 1);
  const space = Math.max(text.lastIndexOf(" "), text.lastIndexOf("\t"));
  if (space >= text.length / 2) return text.slice(0, space + 1);
  const code = text.charCodeAt(text.length - 1);
  return code >= 0xd800 && code < 0xdc00 && text.length > 1 ? text.slice(0, -1) : text;
}

function countNewlines(text) {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function lineStart(text, line) {
  let offset = 0;
  for (let n = 0; n < line; n++) offset = text.indexOf("\n", offset) + 1;
  return offset;
}

/** The first token of each top-level block, with the line it starts on. */
function topLevelBlocks(tokens) {
  const blocks = [];
  tokens.forEach((token, index) => {
    if (token.level === 0 && token.nesting !== -1 && token.map) blocks.push({ index, line: token.map[0] });
  });
  return blocks;
}

/** Whether the fence token's last line is its closing fence. */
function closesFence(src, fence) {
  const [start, end] = fence.map;
  if (end - 1 <= start) return false;
  const lineText = src.slice(lineStart(src, end - 1)).split("\n", 1)[0];
  const m = /^ {0,3}(`+|~+)[ \t]*$/.exec(lineText);
  return m !== null && m[1][0] === fence.markup[0] && m[1].length >= fence.markup.length;
}

// ---------------------------------------------------------------------------
// Tokens → DOM

const BLOCK_TAGS = {
  blockquote_open: "blockquote",
  bullet_list_open: "ul",
  ordered_list_open: "ol",
  list_item_open: "li",
  thead_open: "thead",
  tbody_open: "tbody",
  tr_open: "tr",
  th_open: "th",
  td_open: "td",
};
const INLINE_TAGS = { strong_open: "strong", em_open: "em", s_open: "del" };
// Code shows its hidden characters (bidi controls, zero-width ones) as marked escapes:
// code and the file names in it are where they deceive ("Trojan Source"). Prose keeps
// them: right-to-left languages need their marks.
const CODE = { lines: true };
const ALIGN = /^text-align:(left|center|right)$/;

/**
 * Build DOM nodes for tokens[from, to) (block tokens with their inline children), with a
 * stack, not recursion. Returns the top-level nodes. `onOpen(element)` sees the <code> of
 * every top-level fence and every top-level <table> (a stream continues a cut fence or
 * table in it).
 */
function build(tokens, from, to, doc, onOpen) {
  const out = [];
  const stack = []; // open elements; a hidden (tight-list) paragraph pushes null
  const parent = () => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]) return stack[i];
    return null;
  };
  const add = (node) => {
    const p = parent();
    if (p) p.append(node);
    else out.push(node);
    return node;
  };
  const end = Math.min(to, tokens.length);
  for (let i = from; i < end; i++) {
    const token = tokens[i];
    switch (token.type) {
      case "paragraph_open":
        stack.push(token.hidden ? null : add(doc.createElement("p")));
        break;
      case "heading_open": {
        const level = Number(token.tag.slice(1)) || 1;
        stack.push(add(doc.createElement(`h${Math.min(level + 2, 6)}`)));
        break;
      }
      case "table_open": {
        const wrap = add(doc.createElement("div"));
        wrap.className = "table-scroll";
        const table = doc.createElement("table");
        wrap.append(table);
        stack.push(wrap, table);
        break;
      }
      case "table_close": {
        const table = stack.pop();
        stack.pop();
        if (token.level === 0) onOpen?.(table);
        break;
      }
      case "fence":
      case "code_block": {
        const pre = doc.createElement("pre");
        const code = doc.createElement("code");
        code.append(...visibleName(token.content.replace(/\n$/, ""), CODE, doc));
        pre.append(code);
        const lang = token.type === "fence" ? token.info.trim().split(/\s+/, 1)[0] : "";
        if (lang) pre.dataset.lang = lang.slice(0, 40);
        add(pre);
        if (token.type === "fence" && token.level === 0) onOpen?.(code);
        break;
      }
      case "hr":
        add(doc.createElement("hr"));
        break;
      case "inline":
        buildInline(token.children ?? [], doc, add);
        break;
      default:
        if (BLOCK_TAGS[token.type]) {
          const node = add(doc.createElement(BLOCK_TAGS[token.type]));
          if (token.type === "ordered_list_open") {
            const start = Number(token.attrGet("start") ?? 1);
            if (Number.isSafeInteger(start) && start !== 1) node.setAttribute("start", String(start));
          }
          const align = ALIGN.exec(token.attrGet("style") ?? "");
          if (align) node.style.textAlign = align[1];
          stack.push(node);
        } else if (token.nesting === -1) {
          stack.pop();
        } else if (token.content) {
          add(doc.createTextNode(token.content)); // html_block cannot happen (html: false)
        }
    }
  }
  return out;
}

function buildInline(children, doc, addToBlock) {
  // Open elements; past MAX_DEPTH an opener is shown as its markup text and pushes null
  // (emphasis is paired after parsing, so "*" x 20,000 would nest 10,000 deep).
  const stack = [];
  let depth = 0; // the non-null prefix of the stack
  const add = (node) => {
    if (depth) stack[depth - 1].append(node);
    else addToBlock(node);
    return node;
  };
  const open = (token, make) => {
    if (depth < MAX_DEPTH && stack.length === depth) {
      stack.push(add(make()));
      depth++;
    } else {
      if (token.markup && token.markup !== "linkify" && token.markup !== "autolink") add(doc.createTextNode(token.markup));
      stack.push(null);
    }
  };
  const close = (token) => {
    const node = stack.pop();
    if (node === null) {
      if (token.markup && token.markup !== "linkify" && token.markup !== "autolink") add(doc.createTextNode(token.markup));
    } else {
      depth--;
      if (node.tagName === "A") noteDestination(node, doc, add);
    }
  };
  for (const token of children) {
    switch (token.type) {
      case "text":
      case "text_special":
      case "html_inline": // cannot happen (html: false); text if it did
        add(doc.createTextNode(token.content));
        break;
      case "softbreak":
      case "hardbreak":
        add(doc.createElement("br"));
        break;
      case "code_inline":
        add(doc.createElement("code")).append(...visibleName(token.content, CODE, doc));
        break;
      case "link_open": {
        const href = safeUrl(token.attrGet("href") ?? "");
        open(token, () => (href === null ? doc.createElement("span") : link(doc, href)));
        break;
      }
      case "image": {
        const href = safeUrl(token.attrGet("src") ?? "");
        if (href === null || depth >= MAX_DEPTH) {
          add(doc.createTextNode(token.content));
          break;
        }
        const a = add(link(doc, href));
        a.className = "image-link";
        buildInline(token.children ?? [], doc, (node) => a.append(node));
        if (!a.textContent) a.textContent = href;
        noteDestination(a, doc, add);
        break;
      }
      default:
        if (INLINE_TAGS[token.type]) open(token, () => doc.createElement(INLINE_TAGS[token.type]));
        else if (token.nesting === -1) close(token);
        else if (token.content) add(doc.createTextNode(token.content));
    }
  }
}

function link(doc, href) {
  const a = doc.createElement("a");
  a.href = href;
  a.title = href; // the whole destination, whatever the text says
  a.target = "_blank";
  a.rel = "noopener noreferrer nofollow";
  return a;
}

/** After a link whose text names another destination: the real one, as plain text. */
function noteDestination(a, doc, add) {
  const href = a.getAttribute("href");
  const shown = linkNote(a.textContent, href);
  if (shown === null) return;
  const note = doc.createElement("span");
  note.className = "link-dest";
  note.title = `This link goes to ${href}`;
  note.textContent = `(${shown})`;
  add(doc.createTextNode(" "));
  add(note);
}
