// Links in model text, for markdown.mjs: which URLs may be links (safeUrl), the bare
// URLs in text that become links (bareUrls, a markdown-it core rule), and where a link
// really goes when its text names another host (linkNote). The text of a link is the
// model's, so it may lie; these rules say what the reader is shown beside it.
//
// Pure: strings and markdown-it tokens in, strings and tokens out; no DOM. Linear: each
// character is looked at a bounded number of times (tests/js-unit/markdown.test.mjs holds
// every rule to it at n and 8n).

const URL_SCHEMES = new Set(["http:", "https:", "mailto:"]);

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
// Bare URLs

/**
 * Bare http(s) and mailto URLs in text become links, by GitHub's rules: a URL runs to the
 * next space or "<", less its trailing punctuation and an unbalanced ")" or "]". This
 * runs after inline parsing (so [text](url) wins and nothing in a link is linked again)
 * and looks at each character a bounded number of times. markdown-it's linkify
 * (linkify-it) ran regexes from each candidate to the end of the text: "http://a.b/("
 * × 20,000 took minutes.
 */
export function bareUrls(state) {
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children?.length) continue;
    const out = [];
    let inLink = 0;
    for (const token of block.children) {
      if (token.type === "link_open") inLink++;
      else if (token.type === "link_close") inLink--;
      if (token.type === "text" && !inLink) splitUrls(state, token, out);
      else out.push(token);
    }
    block.children = out;
  }
}

/** Push `token`'s text to `out` as text and link tokens. */
function splitUrls(state, token, out) {
  const text = token.content;
  const piece = (type, nesting, content = "") => {
    const t = new state.Token(type, type === "text" ? "" : "a", nesting);
    t.content = content;
    t.level = token.level;
    out.push(t);
    return t;
  };
  let last = 0;
  for (let colon = text.indexOf(":"); colon !== -1; colon = text.indexOf(":", colon + 1)) {
    const start = schemeStart(text, colon);
    if (start < last) continue;
    const end = urlEnd(text, colon, text[start].toLowerCase() === "m");
    const href = end === -1 ? null : safeUrl(text.slice(start, end));
    if (href === null) continue;
    if (start > last) piece("text", 0, text.slice(last, start));
    const open = piece("link_open", 1);
    open.attrs = [["href", href]];
    open.markup = "linkify";
    open.info = "auto";
    piece("text", 0, text.slice(start, end));
    piece("link_close", -1).markup = "linkify";
    last = end;
    colon = end - 1;
  }
  if (last === 0) out.push(token);
  else if (last < text.length) piece("text", 0, text.slice(last));
}

const SCHEMES = ["https", "http", "mailto"];

/** Where the scheme ending at text[colon] starts, or -1 (not ours, or inside a word). */
function schemeStart(text, colon) {
  for (const scheme of SCHEMES) {
    const start = colon - scheme.length;
    if (start < 0 || text.slice(start, colon).toLowerCase() !== scheme) continue;
    return start > 0 && /[A-Za-z0-9+.-]/.test(text[start - 1]) ? -1 : start;
  }
  return -1;
}

const TRAILING = new Set("?!.,:;*_~'\"");

/** Where a URL whose scheme ends at text[colon] ends, or -1 if there is none. */
function urlEnd(text, colon, mailto) {
  let end = colon + 1;
  if (!mailto && text.slice(end, end + 2) !== "//") return -1;
  const body = mailto ? end : end + 2;
  end = body;
  let parens = 0; // ")" less "(": a trailing ")" is the URL's only while this is not > 0
  let brackets = 0;
  let at = false;
  for (; end < text.length && !stopsUrl(text.charCodeAt(end)); end++) {
    const c = text[end];
    if (c === "(") parens--;
    else if (c === ")") parens++;
    else if (c === "[") brackets--;
    else if (c === "]") brackets++;
    else if (c === "@") at = true;
  }
  for (;;) {
    const c = text[end - 1];
    if (end > body && TRAILING.has(c)) end--;
    else if (c === ")" && parens > 0) {
      end--;
      parens--;
    } else if (c === "]" && brackets > 0) {
      end--;
      brackets--;
    } else break;
  }
  return end > body && (at || !mailto) ? end : -1;
}

/** Spaces, controls, "<" and ">", and the invisible characters that could hide a part of
 * the URL (bidi controls, zero-width characters) end a bare URL. */
function stopsUrl(code) {
  return (
    code <= 0x20
    || code === 0x3c
    || code === 0x3e
    || (code >= 0x7f && code <= 0xa0)
    || code === 0x061c
    || code === 0x1680
    || (code >= 0x2000 && code <= 0x200f)
    || (code >= 0x2028 && code <= 0x202f)
    || (code >= 0x205f && code <= 0x2069)
    || code === 0x3000
    || code === 0xfeff
  );
}

// ---------------------------------------------------------------------------
// Where a link really goes

/**
 * What to show beside a link whose text names another destination than its href (the
 * real host, or mailto address), or null. Text of plain words names none; text with a
 * URL, domain or e-mail address in it names its host, and any difference is shown. So
 * is an href with a user name ("https://bank.example@evil.example/") or an
 * internationalized ("xn--") host, whose text could look like another.
 */
export function linkNote(text, href) {
  const target = destinationOf(href);
  const claimed = claimedHosts(text);
  if (!target || !claimed.length) return null;
  return target.tricky || claimed.some((host) => host !== target.host) ? target.shown : null;
}

function destinationOf(href) {
  let url;
  try {
    url = new URL(href);
  } catch {
    return null;
  }
  if (url.protocol === "mailto:") {
    const address = url.pathname;
    const host = hostOf(address.slice(address.lastIndexOf("@") + 1));
    return { host, shown: shorten(address), tricky: false };
  }
  const tricky = Boolean(url.username || url.password) || /(^|\.)xn--/.test(url.hostname);
  return { host: url.host, shown: shorten(url.host), tricky };
}

function shorten(text) {
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** The hosts named in a link's text: of each URL ("https://bank.example/x"), domain
 * ("bank.example/login") or address ("me@bank.example") in it, one per word. */
export function claimedHosts(text) {
  const hosts = [];
  for (const word of String(text).split(/\s+/)) {
    const host = hostOfWord(trimPunctuation(word));
    if (host) hosts.push(host);
  }
  return hosts;
}

const PUNCTUATION = new Set("()[]{}<>\"'`“”‘’«».,;:!?*_~");

function trimPunctuation(word) {
  let start = 0;
  let end = word.length;
  while (start < end && PUNCTUATION.has(word[start])) start++;
  while (end > start && PUNCTUATION.has(word[end - 1])) end--;
  return word.slice(start, end);
}

function hostOfWord(word) {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(word)?.[0].toLowerCase();
  if (scheme && word.startsWith("//", scheme.length)) {
    try {
      return new URL(word).host || null;
    } catch {
      return null;
    }
  }
  let rest = scheme === "mailto:" ? word.slice(scheme.length) : word;
  const cut = rest.search(/[/?#]/);
  if (cut !== -1) rest = rest.slice(0, cut);
  rest = rest.slice(rest.lastIndexOf("@") + 1);
  const port = rest.lastIndexOf(":");
  const name = port !== -1 && /^\d*$/.test(rest.slice(port + 1)) ? rest.slice(0, port) : rest;
  return looksLikeDomain(name, !scheme && name === word) ? hostOf(rest) : null;
}

// "main.py" or "README.md" is a file's name to a reader, not a site (though .py and .md
// are top-level domains): alone, without a scheme or a path, it names no host.
const FILE_TYPES = new Set([
  "py",
  "md",
  "sh",
  "rs",
  "pl",
  "js",
  "mjs",
  "ts",
  "json",
  "txt",
  "csv",
  "html",
  "css",
  "toml",
  "yaml",
  "yml",
  "ipynb",
  "lock",
  "log",
  "cfg",
  "ini",
  "xml",
  "sql",
  "go",
  "rb",
  "java",
  "kt",
  "cpp",
]);

/** Two or more labels, the last of letters (or an "xn--" one), as a domain has. */
function looksLikeDomain(name, bare) {
  const labels = name.split(/[.\u3002\uff0e\uff61]/);
  if (labels.at(-1) === "") labels.pop(); // "bank.example." is the same host
  if (labels.length < 2) return false;
  const top = labels.at(-1);
  if (bare && labels.length === 2 && FILE_TYPES.has(top)) return false;
  return labels.every((label) => /^[\p{L}\p{N}\p{M}-]+$/u.test(label)) && (/^[\p{L}\p{M}]{2,}$/u.test(top) || /^xn--/i.test(top));
}

/** The host a browser would go to for `name` (lowercase, IDN as "xn--"), or null. */
function hostOf(name) {
  try {
    return new URL(`http://${name}`).host || null;
  } catch {
    return null;
  }
}
