// Small DOM helpers for the widget. Text always goes in as text nodes (never HTML).

const SVG = "http://www.w3.org/2000/svg";

/** Stroke icons on a 24×24 grid, one path per string. */
const ICONS = {
  mark: ["M5 17l5-5-5-5", "M12 19h7"],
  send: ["M12 19V5", "M5 12l7-7 7 7"],
  stop: ["M7 7h10v10H7z"],
  folder: ["M3 7.5A2.5 2.5 0 0 1 5.5 5H9l2 2h7.5A2.5 2.5 0 0 1 21 9.5v7a2.5 2.5 0 0 1-2.5 2.5h-13A2.5 2.5 0 0 1 3 16.5z"],
  file: ["M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z", "M14 3v5h5"],
  chevron: ["M9 6l6 6-6 6"],
  check: ["M5 12.5l4.5 4.5L19 7.5"],
  alert: ["M12 7v6", "M12 17h.01"],
  spinner: ["M21 12a9 9 0 1 1-6.2-8.56"],
  refresh: ["M20 12a8 8 0 1 1-2.34-5.66", "M20 4v5h-5"],
  upload: ["M12 15V4", "M7 9l5-5 5 5", "M5 20h14"],
  download: ["M12 4v11", "M7 10l5 5 5-5", "M5 20h14"],
  close: ["M6 6l12 12", "M18 6L6 18"],
  panel: ["M4 5h16v14H4z", "M15 5v14"],
  eye: ["M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z", "M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6z"],
  plus: ["M12 5v14", "M5 12h14"],
  pencil: ["M4 20h4L19 9l-4-4L4 16z", "M13.5 6.5l4 4"],
  threads: ["M20 12a8 8 0 0 1-11.5 7.2L4 20l1-4.3A8 8 0 1 1 20 12z"],
  trash: ["M4 7h16", "M10 11v6", "M14 11v6", "M6 7l1 12a2 2 0 0 0 2 2h6a2 2 0 0 0 2-2l1-12", "M9 7V4h6v3"],
};

/** An <svg> icon, hidden from assistive technology (its button carries the label). */
export function icon(name) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  for (const d of ICONS[name]) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

/**
 * h("button", {class: "x", type: "button", "aria-label": "Close"}, icon("close"), "text")
 * Attributes that are false, null or undefined are left out; true sets an empty one.
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** Save `bytes` as the browser saves a download named `name`. */
export function saveAs(bytes, name, type = "application/octet-stream") {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  h("a", { href: url, download: name }).click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

const following = new WeakMap(); // scrolling box → whether it follows new content

/** Keep a scrolling box at its bottom while content grows or the box shrinks, unless the
 * user scrolled up.
 * What the user did decides (wheel, touch, keys, the scrollbar), not where the box is:
 * a smooth scroll still on its way, or blocks whose height is only known once shown
 * (content-visibility), must not make it stop following. */
export function stickToBottom(box, update) {
  if (!following.has(box)) watch(box);
  update();
  if (following.get(box)) toBottom(box, 3);
}

const settling = new WeakSet();

/** Scroll to the bottom, and again after the next frames' layout while the height still
 * changes (blocks brought into view get their real height only then). */
function toBottom(box, frames) {
  box.scrollTo({ top: box.scrollHeight, behavior: "instant" });
  if (settling.has(box)) return;
  settling.add(box);
  let height = box.scrollHeight;
  const again = (left) =>
    requestAnimationFrame(() => {
      if (!following.get(box)) return void settling.delete(box);
      box.scrollTo({ top: box.scrollHeight, behavior: "instant" });
      if (box.scrollHeight !== height && left > 1) {
        height = box.scrollHeight;
        again(left - 1);
      } else {
        settling.delete(box);
      }
    });
  again(frames);
}

function watch(box) {
  following.set(box, box.scrollHeight - box.scrollTop - box.clientHeight < 48);
  const release = () => following.set(box, false);
  box.addEventListener("wheel", (e) => e.deltaY < 0 && release(), { passive: true });
  box.addEventListener("touchmove", release, { passive: true });
  box.addEventListener("pointerdown", (e) => e.target === box && release()); // the scrollbar
  box.addEventListener("keydown", (e) => ["ArrowUp", "PageUp", "Home"].includes(e.key) && release());
  // Back at the bottom (by any means): follow again.
  box.addEventListener(
    "scroll",
    () => {
      if (box.scrollHeight - box.scrollTop - box.clientHeight < 48) following.set(box, true);
    },
    { passive: true },
  );
  // The box itself shrinks (a screen keyboard opens, the page resizes the widget): the
  // newest content stays in view while it follows.
  new ResizeObserver(() => {
    if (following.get(box)) toBottom(box, 3);
  }).observe(box);
}

// ---------------------------------------------------------------------------
// Names that cannot hide characters

// Characters that change how a name reads without showing themselves: bidi controls
// (U+202E makes "invoice\u202Efdp.exe" read "invoiceexe.pdf"), zero-width and other
// format characters (Cf, which covers U+200B-U+200F, U+202A-U+202E, U+2060-U+2069,
// U+061C, U+FEFF), C0/C1 controls (Cc), line and paragraph separators, spaces other than
// U+0020, the blank Hangul fillers, and lone surrogates.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0]|\p{Cs}/gu;
const NAMES = {
  0x061c: "arabic letter mark",
  0x200b: "zero width space",
  0x200c: "zero width non-joiner",
  0x200d: "zero width joiner",
  0x200e: "left-to-right mark",
  0x200f: "right-to-left mark",
  0x202a: "left-to-right embedding",
  0x202b: "right-to-left embedding",
  0x202c: "pop directional formatting",
  0x202d: "left-to-right override",
  0x202e: "right-to-left override",
  0x2060: "word joiner",
  0x2066: "left-to-right isolate",
  0x2067: "right-to-left isolate",
  0x2068: "first strong isolate",
  0x2069: "pop directional isolate",
  0xfeff: "zero width no-break space",
};
const MARKED = 2000; // marked <span>s per text at most; past that, the escape as plain text

/** The pieces of `text`: strings, and a number (the code point) for each invisible
 * character. `lines: true` keeps "\n", "\r" and "\t" as they are (multi-line arguments
 * and output); in names and paths they are shown too. */
export function invisibleParts(text, { lines = false } = {}) {
  text = String(text ?? "");
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    const ch = match[0];
    if (lines && (ch === "\n" || ch === "\t" || ch === "\r")) continue;
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(ch.codePointAt(0));
    last = match.index + ch.length;
  }
  if (last < text.length || !parts.length) parts.push(text.slice(last));
  return parts;
}

/** How an invisible character is written: ⟨U+202E⟩. */
function escapeOf(code) {
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/** `text` with every invisible character written as its escape: for attributes and
 * messages (title, aria-label, the files panel's status line). */
export function visibleText(text, options) {
  return invisibleParts(text, options)
    .map((p) => (typeof p === "number" ? escapeOf(p) : p))
    .join("");
}

/** `text` as nodes to append: text nodes, and a marked `<span class="hidden-char">` (with a
 * title naming it) for each invisible character. Never parsed as HTML. At most about
 * 2 × MARKED nodes: past MARKED spans, the rest is one text node with its escapes. */
export function visibleName(text, options, doc = document) {
  const parts = invisibleParts(text, options);
  const nodes = [];
  let marked = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (typeof part === "string") {
      nodes.push(doc.createTextNode(part));
    } else if (marked++ === MARKED) {
      nodes.push(
        doc.createTextNode(
          parts
            .slice(i)
            .map((p) => (typeof p === "number" ? escapeOf(p) : p))
            .join(""),
        ),
      );
      break;
    } else {
      const span = doc.createElement("span");
      span.className = "hidden-char";
      span.title = `Hidden character ${escapeOf(part).slice(1, -1)}${NAMES[part] ? ` (${NAMES[part]})` : ""}`;
      span.textContent = escapeOf(part);
      nodes.push(span);
    }
  }
  return nodes;
}
