// What an MCP server sends is checked on the page before any of it reaches the worker
// (embed/page/mcp.mjs): its tools' input schemas are rebuilt into a form the worker's
// jsonschema always accepts (or the tool is left out, saying why), and every string is
// scrubbed of the server's secret header values, in the encodings a server could echo
// them in. Pure functions: tests/js-unit/mcp-checks.test.mjs.

/** Nesting of a tool's schema (harness/limits.py MAX_SCHEMA_DEPTH: the worker's limit). */
export const MAX_SCHEMA_DEPTH = 32;
/** Objects, arrays and values in one tool's schema. */
const MAX_SCHEMA_NODES = 5_000;
/** What a secret value is replaced with. */
export const REDACTED = "[secret header value removed]";
/** Secrets shorter than this are not looked for (they would match ordinary text). */
const MIN_SECRET_CHARS = 4;

const TYPES = new Set(["null", "boolean", "object", "array", "number", "string", "integer"]);
const TEXT = ["title", "description", "format"];
const NUMBER = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
const COUNT = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];
const VALUE = ["default", "const"];
const ONE_SCHEMA = ["additionalProperties", "not", "propertyNames", "contains", "if", "then", "else"];
const SCHEMA_MAP = ["properties", "patternProperties", "$defs", "definitions"];
const SCHEMA_LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];

class Unusable extends Error {}

/**
 * A tool's input schema as the worker gets it: only keywords it knows, each with a
 * value of the right type (a draft-07 `items` list becomes `prefixItems`; an unknown
 * keyword, `$schema`, `$id` and a draft-04 boolean `exclusiveMinimum` are dropped),
 * every string scrubbed, local `$ref`s only, and resolving.
 * @param {any} schema the server's `inputSchema`
 * @param {(text: string) => string} scrub
 * @returns {{schema?: Record<string, any>, why?: string}}
 */
export function usableSchema(schema, scrub) {
  if (schema === undefined || schema === null) return { schema: { type: "object", properties: {} } };
  if (typeof schema !== "object" || Array.isArray(schema)) return { why: "its input schema is not a JSON Schema object" };
  if (schema.type !== undefined && schema.type !== "object") return { why: 'its input schema is not of type "object"' };
  const budget = { nodes: MAX_SCHEMA_NODES };
  try {
    const out = /** @type {Record<string, any>} */ (rebuild(schema, 1, budget, scrub, ""));
    out.type = "object";
    for (const ref of refsOf(out)) {
      if (resolve(out, ref) === undefined)
        throw new Unusable(`its input schema's $ref ${JSON.stringify(ref.slice(0, 100))} points at nothing`);
    }
    return { schema: out };
  } catch (err) {
    if (err instanceof Unusable) return { why: err.message };
    if (err instanceof RangeError) return { why: "its input schema is too deep" };
    throw err;
  }
}

/** @returns {boolean | Record<string, any>} */
function rebuild(node, depth, budget, scrub, where) {
  if (typeof node === "boolean") return node;
  if (!node || typeof node !== "object" || Array.isArray(node))
    throw new Unusable(`its input schema has a non-schema at ${where || "the root"}`);
  enter(depth, budget);
  /** @type {Record<string, any>} */
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    const at = `${where}/${key}`.slice(0, 200);
    if (TEXT.includes(key)) {
      if (typeof value === "string") out[key] = scrub(value).slice(0, 4000);
    } else if (NUMBER.includes(key)) {
      if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
    } else if (key === "multipleOf") {
      if (typeof value === "number" && Number.isFinite(value) && value > 0) out[key] = value;
    } else if (COUNT.includes(key)) {
      if (Number.isSafeInteger(value) && value >= 0) out[key] = value;
    } else if (key === "uniqueItems") {
      if (typeof value === "boolean") out[key] = value;
    } else if (key === "pattern") {
      if (typeof value !== "string" || value.length > 1000)
        throw new Unusable(`its input schema has a pattern that is not a string of at most 1000 characters at ${at}`);
      out[key] = checkedText(value, scrub, at);
    } else if (key === "type") {
      out[key] = checkedType(value, at);
    } else if (key === "required") {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
        throw new Unusable(`its input schema's required is not a list of names at ${at}`);
      enter(depth + 1, budget, value.length);
      out[key] = [...new Set(value.map((v) => checkedText(v, scrub, at)))];
    } else if (key === "enum") {
      if (!Array.isArray(value)) throw new Unusable(`its input schema's enum is not a list at ${at}`);
      out[key] = plain(value, depth + 1, budget, scrub, at);
    } else if (VALUE.includes(key)) {
      out[key] = plain(value, depth + 1, budget, scrub, at);
    } else if (ONE_SCHEMA.includes(key)) {
      out[key] = rebuild(value, depth + 1, budget, scrub, at);
    } else if (key === "items") {
      if (Array.isArray(value)) {
        if (value.length) out.prefixItems = schemaList(value, depth, budget, scrub, at); // draft-07's tuple form
      } else out[key] = rebuild(value, depth + 1, budget, scrub, at);
    } else if (SCHEMA_MAP.includes(key)) {
      if (!value || typeof value !== "object" || Array.isArray(value))
        throw new Unusable(`its input schema's ${key} is not an object at ${at}`);
      enter(depth + 1, budget);
      const map = {};
      for (const [name, sub] of Object.entries(value)) {
        if (key === "patternProperties" && name.length > 1000)
          throw new Unusable(`its input schema has a pattern of more than 1000 characters at ${at}`);
        map[checkedText(name, scrub, at)] = rebuild(sub, depth + 2, budget, scrub, `${at}/${name}`.slice(0, 200));
      }
      out[key] = map;
    } else if (SCHEMA_LIST.includes(key)) {
      if (!Array.isArray(value) || value.length === 0) throw new Unusable(`its input schema's ${key} is not a non-empty list at ${at}`);
      out[key] = schemaList(value, depth, budget, scrub, at);
    } else if (key === "$ref") {
      if (typeof value !== "string" || !(value === "#" || value.startsWith("#/"))) {
        throw new Unusable(`its input schema has a $ref outside the schema at ${at}`);
      }
      out[key] = checkedText(value, scrub, at);
    } // anything else ($schema, $id, $comment, examples, vendor keywords): dropped
  }
  return out;
}

function schemaList(list, depth, budget, scrub, at) {
  enter(depth + 1, budget);
  return list.map((sub, i) => rebuild(sub, depth + 2, budget, scrub, `${at}/${i}`));
}

/** A name or pattern that must arrive as the server wrote it: one holding a secret
 * leaves the tool out (changed, it would no longer mean what the server meant). */
function checkedText(text, scrub, at) {
  if (scrub(text) !== text) throw new Unusable(`its input schema holds a secret header's value at ${at}`);
  return text;
}

function checkedType(value, at) {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((t) => TYPES.has(t)) || new Set(list).size !== list.length) {
    throw new Unusable(`its input schema has an unknown type at ${at}`);
  }
  return Array.isArray(value) ? [...list] : value;
}

/** A JSON value (enum, const, default) copied with its strings scrubbed, bounded. */
function plain(value, depth, budget, scrub, at) {
  budget.nodes -= 1;
  if (budget.nodes < 0) throw new Unusable(`its input schema is larger than ${MAX_SCHEMA_NODES} parts`);
  if (typeof value === "string") return scrub(value);
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value === null || typeof value === "boolean") return value;
  if (typeof value !== "object") throw new Unusable(`its input schema has a non-JSON value at ${at}`);
  enter(depth, budget, 0);
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1, budget, scrub, at));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k), plain(v, depth + 1, budget, scrub, at)]));
}

function enter(depth, budget, nodes = 1) {
  if (depth > MAX_SCHEMA_DEPTH) throw new Unusable(`its input schema nests more than ${MAX_SCHEMA_DEPTH} levels deep`);
  budget.nodes -= nodes;
  if (budget.nodes < 0) throw new Unusable(`its input schema is larger than ${MAX_SCHEMA_NODES} parts`);
}

function* refsOf(node) {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const v of node) yield* refsOf(v);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") yield value;
    else if (!["enum", "const", "default"].includes(key)) yield* refsOf(value);
  }
}

/** What a local `$ref` (a JSON pointer in the fragment) points at, or undefined. */
function resolve(root, ref) {
  let node = root;
  if (ref === "#") return node;
  for (const raw of ref.slice(2).split("/")) {
    let part;
    try {
      part = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    } catch {
      return undefined;
    }
    if (!node || typeof node !== "object" || !Object.hasOwn(node, part)) return undefined;
    node = node[part];
  }
  return typeof node === "boolean" || (node && typeof node === "object" && !Array.isArray(node)) ? node : undefined;
}

/**
 * A scrubber for these secret values: `scrub(text)` replaces each, as written or in any
 * encoding below, with REDACTED; `holds(text)` says whether any is there. Encodings:
 * as is (any case), URL-encoded (encodeURIComponent, encodeURI, a form's +, every byte
 * %XX), JSON-escaped (and every character \uXXXX), HTML-escaped, hex of the UTF-8
 * bytes, and base64 / base64url of them at each of the three byte alignments (so the
 * value inside a larger base64 text, such as a Basic credential or an image, is found).
 * @param {string[]} secrets
 */
export function secretScrubber(secrets) {
  const needles = new Set();
  for (const secret of secrets) {
    if (typeof secret !== "string" || secret.length < MIN_SECRET_CHARS) continue;
    for (const form of encodings(secret)) if (form.length >= MIN_SECRET_CHARS) needles.add(form);
  }
  if (needles.size === 0) return { scrub: (text) => String(text), holds: () => false };
  const sorted = [...needles].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(sorted.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "gi");
  return {
    scrub: (text) => String(text).replace(pattern, REDACTED),
    holds: (text) => {
      pattern.lastIndex = 0;
      const found = pattern.test(String(text));
      pattern.lastIndex = 0;
      return found;
    },
  };
}

function encodings(secret) {
  const bytes = new TextEncoder().encode(secret);
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  const forms = [
    secret,
    encodeURIComponent(secret),
    encodeURI(secret),
    encodeURIComponent(secret).replace(/%20/g, "+"),
    hex.replace(/../g, "%$&"),
    JSON.stringify(secret).slice(1, -1),
    [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
    secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;"),
    hex,
  ];
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const b64 = btoa(String.fromCharCode(...padded)).replace(/=+$/, "");
    // Only the characters every bit of which comes from the secret's bytes.
    const core = b64.slice(Math.ceil((shift * 8) / 6), Math.floor((padded.length * 8) / 6));
    forms.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return forms;
}
