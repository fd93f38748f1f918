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
import { HarnessError } from "./errors.mjs";

export const CONNECT_TIMEOUT_MS = 5_000; // a server's connect + tools/list at boot
export const CALL_TIMEOUT_MS = 60_000; // one tools/call (per server: `timeoutMs`)
export const MAX_SERVERS = 20;
export const MAX_TOOLS = 100; // exposed per server
export const MAX_OUTPUT_CHARS = 100_000; // a call's result as the model gets it
const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,30}$/;
const HEADER = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const CLIENT_INFO = { name: "pyharness", version: "0.1.0" };

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
export function resultText(result) {
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
  const text = parts.join("\n");
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
  }

  _connect() {
    this._client ??= (async () => {
      const { Client, StreamableHTTPClientTransport, CfWorkerJsonSchemaValidator } = this._sdk;
      const headers = { ...(this.options.headers ?? {}), ...(this.options.secretHeaders ?? {}) };
      const transport = new StreamableHTTPClientTransport(new URL(this.options.url), {
        requestInit: { headers, credentials: "omit", referrerPolicy: "no-referrer" },
        fetch: (url, init) => this._fetch(url, init),
      });
      // No eval under a strict page CSP: the SDK's cfworker validator, not Ajv.
      const client = new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
      client.onerror = () => {}; // a stream's error: the next request finds out
      await client.connect(transport);
      return client;
    })();
    this._client.catch(() => (this._client = null));
    return this._client;
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
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: ms });
        tools.push(...(page.tools ?? []));
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000);
      return tools;
    })();
    try {
      return await Promise.race([listing, abortable(signal, `no answer within ${ms} ms`)]);
    } catch (err) {
      this._drop();
      throw err;
    }
  }

  /** tools/call: the result's text, or a HarnessError the model reads as an error. */
  async call(tool, input, signal) {
    const ms = this.options.timeoutMs ?? CALL_TIMEOUT_MS;
    const stop = AbortSignal.any([signal, AbortSignal.timeout(ms)]);
    let result;
    try {
      const client = await Promise.race([this._connect(), abortable(stop, `no answer within ${ms} ms`)]);
      result = await client.callTool({ name: tool, arguments: input }, undefined, { signal: stop, timeout: ms });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this._drop(); // the next call connects again
      const why = stop.aborted ? `no answer within ${ms} ms` : err instanceof Error ? err.message : String(err);
      throw new HarnessError("EIO", `MCP server ${this.options.name} (${this.options.url}): ${why.slice(0, 2000)}`);
    }
    const text = resultText(result);
    if (result?.isError) throw new HarnessError("EREMOTE", text || `${tool} failed`);
    const images = imagesOf(result);
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
 * status: {name, url, status: "connected" | "failed", tools: [exposed names], error?}.
 * @param {any[]} servers the checked `mcp` option
 * @param {(url: any, init?: any) => Promise<Response>} pageFetch the page's fetch option (or the platform's)
 * @returns {Promise<{tools: any[], status: {name: string, url: string, status: string, tools: string[], error?: string}[]}>}
 */
export async function connectMcp(servers, pageFetch) {
  if (!servers?.length) return { tools: [], status: [] };
  const sdk = await import("./mcp-sdk.mjs");
  const tools = [];
  const status = await Promise.all(
    servers.map(async (options) => {
      const server = new Server(options, sdk, pageFetch);
      const shown = { name: options.name, url: options.url };
      try {
        const listed = await server.list(CONNECT_TIMEOUT_MS);
        const wanted = options.tools ? new Set(options.tools) : null;
        const chosen = listed.filter((t) => typeof t?.name === "string" && (wanted === null || wanted.has(t.name))).slice(0, MAX_TOOLS);
        const names = [];
        for (const tool of chosen) {
          const name = exposedName(options.name, tool.name);
          names.push(name);
          tools.push({
            name,
            description: `${String(tool.description ?? "").slice(0, 4000)} (MCP server ${options.name})`.trim(),
            parameters: tool.inputSchema && typeof tool.inputSchema === "object" ? tool.inputSchema : { type: "object", properties: {} },
            timeoutMs: (options.timeoutMs ?? CALL_TIMEOUT_MS) + 1000,
            run: (input, { signal }) => server.call(tool.name, input, signal),
          });
        }
        return { ...shown, status: "connected", tools: names };
      } catch (err) {
        const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
        // Its tools named in `tools` are known without it: offered all the same, each call
        // connects (an error result until the server is back), with the input unchecked
        // here (the server checks it).
        const names = [];
        for (const tool of (options.tools ?? []).slice(0, MAX_TOOLS)) {
          const name = exposedName(options.name, tool);
          names.push(name);
          tools.push({
            name,
            description: `${tool} of MCP server ${options.name} (not connected at boot: ${error.slice(0, 200)})`,
            parameters: { type: "object" },
            timeoutMs: (options.timeoutMs ?? CALL_TIMEOUT_MS) + 1000,
            run: (input, { signal }) => server.call(tool, input, signal),
          });
        }
        return { ...shown, status: "failed", tools: names, error };
      }
    }),
  );
  return { tools, status };
}
