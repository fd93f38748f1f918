// MCP servers as tools (`createHarness({mcp: [...]})`), on the page.
//
// Each server is reached with the official MCP TypeScript SDK (its Client over the
// Streamable HTTP transport, bundled as mcp-sdk.mjs and loaded only when a page sets
// `mcp`), through the page's `fetch` option (so a CORS proxy or an SSO fetch works), with
// the server's `headers` and `secretHeaders` added here: none of it reaches the worker,
// which sees each tool only as a page tool `<server>__<tool>` with its input schema.
// Servers connect in parallel at boot, each within CONNECT_TIMEOUT_MS: a server that is
// down, slow or speaks garbage costs the boot at most that, is named in `h.mcp` and a
// diagnostic, and the harness boots without its tools. A call that fails for the
// transport drops the connection, and the next call connects again.
//
// A server is not trusted to be well-behaved (mcp-checks.mjs): a tool whose name is
// taken or collides with another's once made a tool name, or whose input schema is too
// deep, too large or not a schema, is left out (`h.mcp[i].leftOut`, a diagnostic); every
// string it sends is scrubbed of its secret header values before the worker gets it; its
// output schema is not run on the page (a backtracking pattern there would hang the
// page); and a call's HTTP stream is closed when the run is cancelled or times out.
import { HarnessError } from "./errors.mjs";
import { secretScrubber, usableSchema } from "./mcp-checks.mjs";

const CONNECT_TIMEOUT_MS = 5_000; // a server's connect + tools/list at boot
const CALL_TIMEOUT_MS = 60_000; // one tools/call (per server: `timeoutMs`)
const MAX_SERVERS = 20;
const MAX_TOOLS = 100; // exposed per server
export const MAX_OUTPUT_CHARS = 100_000; // a call's result as the model gets it
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,30}$/;
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const CLIENT_INFO = { name: "pyharness", version: "0.1.0" };
const MAX_LIST_PAGES = 50;
/** The `_meta` key a tools/call carries so its HTTP request can be told from others on
 * the same connection (and aborted alone). */
const CALL_TAG = "pyharness/call";
/** The server's structured output is not checked against its output schema on the page:
 * it protects nothing (the text goes to the model as untrusted input either way) and a
 * backtracking pattern there would hang the page. */
const NO_OUTPUT_CHECK = { getValidator: () => (data) => ({ valid: true, data, errorMessage: undefined }) };
/** A stream that breaks mid-call is not resumed: the call fails, the next one connects. */
const NO_RESUME = { initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1, maxRetries: 0 };

/** `mcp` as given, checked: why it is wrong, or null. */
export function checkMcpOption(mcp) {
  if (mcp === undefined) return null;
  if (!Array.isArray(mcp)) return "mcp must be an array of {name, url, headers?, secretHeaders?, tools?, timeoutMs?}";
  if (mcp.length > MAX_SERVERS) return `mcp: at most ${MAX_SERVERS} servers`;
  const names = new Set();
  for (const [i, server] of mcp.entries()) {
    if (!server || typeof server !== "object") return `mcp[${i}] must be an object`;
    const unknown = Object.keys(server).find((k) => !["name", "url", "headers", "secretHeaders", "tools", "timeoutMs"].includes(k));
    if (unknown !== undefined) return `mcp[${i}]: unknown option ${unknown.slice(0, 100)}`;
    if (typeof server.name !== "string" || !NAME.test(server.name) || server.name.includes("__")) {
      return `mcp[${i}].name must be a word of letters, digits, - and _ (at most 31, no "__")`;
    }
    if (names.has(server.name)) return `mcp: two servers are named ${server.name}`;
    names.add(server.name);
    let url;
    try {
      url = new URL(server.url);
    } catch {
      return `mcp[${i}].url is not an absolute URL`;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return `mcp[${i}].url is not an http(s) URL`;
    for (const key of ["headers", "secretHeaders"]) {
      const value = server[key];
      if (value === undefined) continue;
      const ok =
        value
        && typeof value === "object"
        && !Array.isArray(value)
        && Object.entries(value).every(([k, v]) => HEADER.test(k) && typeof v === "string" && v.length < 8192);
      if (!ok) return `mcp[${i}].${key} must map header names to string values`;
    }
    if (server.tools !== undefined && !(Array.isArray(server.tools) && server.tools.every((t) => typeof t === "string"))) {
      return `mcp[${i}].tools must be an array of tool names`;
    }
    if (server.timeoutMs !== undefined && !(Number.isInteger(server.timeoutMs) && server.timeoutMs > 0 && server.timeoutMs <= 3_600_000)) {
      return `mcp[${i}].timeoutMs must be a whole number of milliseconds up to 3,600,000`;
    }
  }
  return null;
}

/** The name the model sees: `<server>__<tool>`, with what a tool name may not hold
 * replaced (at most 64 characters). */
export function exposedName(server, tool) {
  return `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}

/** An MCP tools/call result as text for the model: text, images (described: the model
 * does not see them), resource links and embedded resources, bounded. */
export function resultText(result, scrub = (text) => text) {
  const parts = [];
  for (const item of Array.isArray(result?.content) ? result.content : []) {
    if (item?.type === "text") parts.push(String(item.text ?? ""));
    else if (item?.type === "image" || item?.type === "audio") {
      parts.push(`[${item.type}: ${String(item.mimeType ?? "?")}, ${base64Bytes(item.data)} bytes]`);
    } else if (item?.type === "resource_link") {
      parts.push(`[resource link: ${String(item.name ?? "")} ${String(item.uri ?? "")}]`.replace(/ +\]$/, "]"));
    } else if (item?.type === "resource") {
      const r = item.resource ?? {};
      if (typeof r.text === "string") parts.push(`[resource ${String(r.uri ?? "")}]\n${r.text}`);
      else parts.push(`[resource ${String(r.uri ?? "")}: ${String(r.mimeType ?? "binary")}, ${base64Bytes(r.blob)} bytes]`);
    } else parts.push(`[${String(item?.type ?? "unknown")} content]`);
  }
  if (parts.length === 0 && result?.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = scrub(parts.join("\n")); // before it is cut: a cut value is not found
  return text.length > MAX_OUTPUT_CHARS
    ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n[cut: ${text.length - MAX_OUTPUT_CHARS} more characters]`
    : text;
}

/** What an MCP tool's run gives the page host: the text, and the images to show a model
 * that takes them ({mediaType, data: base64}). */
export class ToolOutput {
  /** @param {string} text @param {{mediaType: string, data: string}[]} images */
  constructor(text, images) {
    this.text = text;
    this.images = images;
  }
}

const MAX_IMAGES = 10; // shown per call
const MAX_IMAGE_CHARS = Math.ceil((5 * 1024 * 1024 * 4) / 3) + 4; // base64 of 5 MiB

/** The images of a result, bounded (the text names every one anyway). */
function imagesOf(result) {
  const out = [];
  for (const item of Array.isArray(result?.content) ? result.content : []) {
    if (item?.type !== "image" || typeof item.data !== "string" || typeof item.mimeType !== "string") continue;
    if (!/^image\/(png|jpeg|gif|webp)$/.test(item.mimeType) || item.data.length > MAX_IMAGE_CHARS) continue;
    if (out.length < MAX_IMAGES) out.push({ mediaType: item.mimeType, data: item.data });
  }
  return out;
}

/** The size of what base64 text `data` decodes to. */
function base64Bytes(data) {
  const text = String(data ?? "");
  return Math.floor((text.length * 3) / 4) - (text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0);
}

/** One server: its connection (made again after a failure) and its calls. */
class Server {
  constructor(options, sdk, pageFetch) {
    this.options = options;
    this._sdk = sdk;
    this._fetch = pageFetch;
    this._client = null; // Promise<Client> while connected or connecting
    this._calls = new Map(); // CALL_TAG value -> the call's AbortSignal
    this._callCount = 0;
    this.malformed = []; // tools a listing left out: {tool, why}
    /** Removes the server's secret header values from a text it sent. */
    this.scrub = secretScrubber(Object.values(options.secretHeaders ?? {}));
  }

  /** The request's init, with the signal of the call it carries (if it is one). */
  _withCallSignal(init) {
    const body = init?.body;
    if (typeof body !== "string" || !body.includes(CALL_TAG)) return init;
    let tag;
    try {
      tag = JSON.parse(body)?.params?._meta?.[CALL_TAG];
    } catch {
      return init;
    }
    const stop = this._calls.get(tag);
    if (!stop) return init;
    return { ...init, signal: init.signal ? AbortSignal.any([init.signal, stop]) : stop };
  }

  _connect() {
    this._client ??= (async () => {
      const { Client, StreamableHTTPClientTransport } = this._sdk;
      const headers = { ...(this.options.headers ?? {}), ...(this.options.secretHeaders ?? {}) };
      const transport = new StreamableHTTPClientTransport(new URL(this.options.url), {
        requestInit: { headers, credentials: "omit", referrerPolicy: "no-referrer" },
        fetch: (url, init) => this._fetch(url, this._withCallSignal(init)),
        reconnectionOptions: NO_RESUME,
      });
      const client = new Client(CLIENT_INFO, { jsonSchemaValidator: NO_OUTPUT_CHECK });
      client.onerror = () => {}; // a stream's error: the next request finds out
      await client.connect(transport);
      this._screenListings(transport);
      return client;
    })();
    this._client.catch(() => (this._client = null));
    return this._client;
  }

  /** The SDK refuses a whole tools/list answer when one tool does not fit its types:
   * each answer is screened first, each tool cut to what is used (name, description,
   * input schema), one that does not fit left out (`this.malformed`, with why). */
  _screenListings(transport) {
    const listings = new Set();
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message?.method === "tools/list" && "id" in message) listings.add(message.id);
      return send(message, options);
    };
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (listings.delete(message?.id) && Array.isArray(message?.result?.tools)) {
        message = { ...message, result: { ...message.result, tools: message.result.tools.flatMap((t) => this._screened(t)) } };
      }
      deliver?.(message, extra);
    };
  }

  _screened(tool) {
    const name = tool?.name;
    const schema = tool?.inputSchema;
    const fits =
      schema
      && typeof schema === "object"
      && !Array.isArray(schema)
      && schema.type === "object"
      && (schema.properties === undefined || isRecordOfObjects(schema.properties))
      && (schema.required === undefined || (Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string")));
    if (typeof name === "string" && fits) {
      return [{ name, inputSchema: schema, ...(typeof tool.description === "string" ? { description: tool.description } : {}) }];
    }
    const shown = this.scrub.scrub(String(name ?? "")).slice(0, 200);
    const why =
      typeof name !== "string"
        ? "its name is not a string"
        : (usableSchema(schema, this.scrub.scrub).why ?? "its input schema is not a JSON Schema object");
    if (this.malformed.length < MAX_TOOLS) this.malformed.push({ tool: shown, why });
    return [];
  }

  _drop() {
    const client = this._client;
    this._client = null;
    client?.then((c) => c.close()).catch(() => {});
  }

  /** tools/list (all pages), within `ms`. */
  async list(ms) {
    const signal = AbortSignal.timeout(ms);
    const listing = (async () => {
      const client = await this._connect();
      const tools = [];
      let cursor;
      let pages = 0;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: ms });
        tools.push(...(page.tools ?? []));
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000 && ++pages < MAX_LIST_PAGES);
      return tools;
    })();
    try {
      return await Promise.race([listing, abortable(signal, `no answer within ${ms} ms`)]);
    } catch (err) {
      this._drop();
      throw err;
    }
  }

  /** tools/call: the result's text (scrubbed of the secret header values), or a
   * HarnessError the model reads as an error. Cancel (`signal`) or the deadline aborts
   * the call's own HTTP request, which closes a stream the server holds open. */
  async call(tool, input, signal) {
    const ms = this.options.timeoutMs ?? CALL_TIMEOUT_MS;
    const stop = AbortSignal.any([signal, AbortSignal.timeout(ms)]);
    const tag = String(++this._callCount);
    this._calls.set(tag, stop);
    let result;
    try {
      const client = await Promise.race([this._connect(), abortable(stop, `no answer within ${ms} ms`)]);
      const params = { name: tool, arguments: input, _meta: { [CALL_TAG]: tag } };
      result = await client.callTool(params, undefined, { signal: stop, timeout: ms });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this._drop(); // the next call connects again
      const why = stop.aborted ? `no answer within ${ms} ms` : err instanceof Error ? err.message : String(err);
      const shown = this.scrub.scrub(why).slice(0, 2000);
      throw new HarnessError("EIO", `MCP server ${this.options.name} (${this.options.url}): ${shown}`);
    } finally {
      this._calls.delete(tag);
    }
    const text = resultText(result, this.scrub.scrub);
    if (result?.isError) throw new HarnessError("EREMOTE", text || `${tool} failed`);
    const images = imagesOf(result).filter((image) => !this.scrub.holds(image.data));
    return images.length ? new ToolOutput(text, images) : text;
  }
}

function abortable(signal, message) {
  return new Promise((_, reject) => {
    const fail = () => reject(new HarnessError("ETIMEDOUT", message));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

/**
 * Connect every server (in parallel, each within CONNECT_TIMEOUT_MS) and give their
 * tools as page tools (`{name, description, parameters, run}`), with each server's
 * status: {name, url, status: "connected" | "failed", tools: [exposed names], error?,
 * leftOut?: [{tool, why}]}. A tool is left out when its name is not a string, is
 * listed twice, becomes a name another tool has (`taken`: the page's own tools; an
 * earlier server's; another of its own tools once made a tool name), holds a secret
 * header's value, or when its input schema cannot be used (mcp-checks.mjs).
 * @param {any[] | undefined} servers the checked `mcp` option
 * @param {(url: any, init?: any) => Promise<Response>} pageFetch the page's fetch option (or the platform's)
 * @param {Iterable<string>} [taken] tool names already in use (the page's own tools)
 * @returns {Promise<{tools: any[], status: McpStatus[]}>}
 * @typedef {{name: string, url: string, status: string, tools: string[], error?: string, leftOut?: {tool: string, why: string}[]}} McpStatus
 */
export async function connectMcp(servers, pageFetch, taken = []) {
  if (!servers?.length) return { tools: [], status: [] };
  const sdk = await import("./mcp-sdk.mjs");
  const connected = await Promise.all(
    servers.map(async (options) => {
      const server = new Server(options, sdk, pageFetch);
      try {
        return { options, server, listed: await server.list(CONNECT_TIMEOUT_MS) };
      } catch (err) {
        return { options, server, error: server.scrub.scrub(err instanceof Error ? err.message : String(err)).slice(0, 500) };
      }
    }),
  );
  // Names are given out in the servers' order, after the page's own tools.
  const used = new Set(taken);
  const tools = [];
  const status = connected.map(({ options, server, listed, error }) => {
    const shown = { name: options.name, url: options.url };
    const timeoutMs = (options.timeoutMs ?? CALL_TIMEOUT_MS) + 1000;
    const { chosen, leftOut } = listed ? chooseTools(options, listed, server.scrub, server.malformed) : offeredUnlisted(options);
    const names = [];
    for (const tool of chosen) {
      const name = exposedName(options.name, tool.name);
      if (used.has(name)) {
        leftOut.push({ tool: tool.name, why: `its name ${name} is another tool's` });
        continue;
      }
      used.add(name);
      names.push(name);
      const description = listed
        ? `${server.scrub.scrub(String(tool.description ?? "")).slice(0, 4000)} (MCP server ${options.name})`.trim()
        : // not listed: the connect failed, and its catch gave the error
          `${tool.name} of MCP server ${options.name} (not connected at boot: ${/** @type {string} */ (error).slice(0, 200)})`;
      tools.push({
        name,
        description,
        parameters: tool.parameters,
        timeoutMs,
        run: (input, { signal }) => server.call(tool.name, input, signal),
      });
    }
    const more = leftOut.length ? { leftOut: leftOut.slice(0, MAX_TOOLS) } : {};
    return error === undefined
      ? { ...shown, status: "connected", tools: names, ...more }
      : { ...shown, status: "failed", tools: names, error, ...more };
  });
  return { tools, status };
}

const isRecordOfObjects = (value) =>
  value !== null
  && typeof value === "object"
  && !Array.isArray(value)
  && Object.values(value).every((v) => v !== null && typeof v === "object");

/** The listed tools the page asked for, each with its usable schema, and those left
 * out with why. */
function chooseTools(options, listed, scrub, malformed) {
  const wanted = options.tools ? new Set(options.tools) : null;
  const leftOut = malformed.filter((m) => wanted === null || wanted.has(m.tool));
  const candidates = [];
  for (const tool of listed) {
    if (typeof tool?.name !== "string" || tool.name.length === 0 || tool.name.length > 200) {
      leftOut.push({ tool: scrub.scrub(String(tool?.name ?? "")).slice(0, 200), why: "its name is not a string of 1 to 200 characters" });
    } else if (wanted === null || wanted.has(tool.name)) candidates.push(tool);
  }
  // Names that collide (the same name twice, or two names made the same tool name):
  // neither is taken, there is no telling which one the model would get.
  const counts = new Map();
  for (const tool of candidates)
    counts.set(exposedName(options.name, tool.name), (counts.get(exposedName(options.name, tool.name)) ?? 0) + 1);
  const chosen = [];
  for (const tool of candidates) {
    const name = exposedName(options.name, tool.name);
    const schema = usableSchema(tool.inputSchema, scrub.scrub);
    /** @type {string | null} */
    let why = null;
    if (scrub.holds(tool.name)) why = "its name holds a secret header's value";
    else if (counts.get(name) > 1) why = `another of its tools is also ${name}`;
    else if (schema.why !== undefined) why = schema.why;
    if (why !== null) leftOut.push({ tool: scrub.scrub(tool.name), why });
    else if (chosen.length < MAX_TOOLS) chosen.push({ name: tool.name, description: tool.description, parameters: schema.schema });
  }
  return { chosen, leftOut };
}

/** A server down at boot: its tools named in `tools` are offered all the same, each
 * call connects (an error result until it is back), with the input unchecked here (the
 * server checks it). */
function offeredUnlisted(options) {
  const seen = new Set();
  const chosen = [];
  const leftOut = [];
  for (const tool of (options.tools ?? []).slice(0, MAX_TOOLS)) {
    const name = exposedName(options.name, tool);
    if (seen.has(name)) leftOut.push({ tool, why: `another name in tools is also ${name}` });
    else chosen.push({ name: tool, parameters: { type: "object" } });
    seen.add(name);
  }
  return { chosen, leftOut };
}
