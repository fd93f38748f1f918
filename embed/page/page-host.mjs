// The page's side of the worker's requests: page tool calls, the model's fetches (the
// key added here) and the model's code's network requests (network.mjs).
import { ToolOutput } from "./mcp.mjs";
import { CommandSlots } from "./network.mjs";
import { CODE } from "../shared/protocol.mjs";
import { HarnessError } from "./errors.mjs";
import { FileSystem } from "./fs-client.mjs";
import { isStringRecord } from "./options.mjs";

/** What the page does for the worker: run its tools, make requests with its fetch. */
export class PageHost {
  /** @param {{endpoint: string, headers: Record<string, string>} | null} credentials */
  constructor(harness, tools, pageFetch, credentials, network) {
    this._h = harness;
    this._tools = new Map(tools.map((t) => [t.name, t]));
    this._fetch = pageFetch;
    this._credentials = credentials;
    this._network = network; // createNetwork(): the model's code's way out, or null
    this._aborts = new Map(); // "tool:id" / "fetch:id" → AbortController
    this._slots = new CommandSlots(); // the turns of each command's requests
    /** @type {Map<string, any> | null} page tool name → its input's JSON Schema validator, made at first use */
    this._validators = null;
  }

  cancelTool(id) {
    this._aborts.get(`tool:${id}`)?.abort(new HarnessError("ECANCELED", "the tool call was cancelled"));
  }

  abortFetch(id) {
    this._aborts.get(`fetch:${id}`)?.abort();
  }

  refuseFetch({ id }) {
    this._post({ type: "fetch_error", id, message: "the page refused this request: only the model's endpoint may be fetched" });
  }

  _post(message, transfer) {
    if (!this._h._closed) this._h._worker.postMessage(message, transfer);
  }

  refuseTool(message, why) {
    this._post({ type: "toolres", id: message.id, ok: false, output: `the page refused the call: ${why}` });
  }

  /** Only POSTs to the configured model endpoint are made, with the key added here. */
  isModelRequest({ url, method, headers, body }) {
    return (
      this._credentials !== null
      && url === this._credentials.endpoint
      && method === "POST"
      && isStringRecord(headers ?? {})
      && (body === undefined || body === null || typeof body === "string")
    );
  }

  /** The harness closed: abort every page tool and request still running (the model's
   * code's too: none of them reaches a server after close()). */
  abortAll() {
    for (const controller of this._aborts.values()) controller.abort(new HarnessError("ECANCELED", "the harness was closed"));
    this._aborts.clear();
    this._slots.endAll(new HarnessError("ECANCELED", "the harness was closed"));
  }

  async runTool({ id, name, input }) {
    const tool = this._tools.get(name);
    const controller = new AbortController();
    this._aborts.set(`tool:${id}`, controller);
    let reply;
    try {
      const value = JSON.parse(input);
      const problems = await this._check(tool, value);
      if (problems !== null) {
        this._h._diagnose(CODE.INVALID_TOOL_INPUT, `input for '${name}' breaks its schema: ${problems}`);
        throw new Error(`the input does not match the tool's schema: ${problems}`);
      }
      // Its fs is the harness's, with each change recorded as this call's (its
      // file_change events carry the run, the call and the tool).
      const output = await tool.run(value, { signal: controller.signal, fs: new FileSystem(this._h, id) });
      if (output instanceof ToolOutput) reply = { ok: true, output: output.text, images: output.images };
      else reply = { ok: true, output: typeof output === "string" ? output : JSON.stringify(output ?? null) };
    } catch (err) {
      reply = { ok: false, output: err instanceof Error ? err.message : String(err) };
    } finally {
      this._aborts.delete(`tool:${id}`);
    }
    this._post({ type: "toolres", id, ...reply });
  }

  /** The worker checked the input already; the page checks again (it trusts no message):
   * the problems found, or null. */
  async _check(tool, value) {
    this._validators ??= new Map();
    if (!this._validators.has(tool.name)) {
      const { Validator } = await import("./json-schema.mjs");
      const schema = tool.parameters ?? { type: "object", properties: {} };
      this._validators.set(tool.name, new Validator(schema, "2020-12", false));
    }
    const result = this._validators.get(tool.name).validate(value);
    if (result.valid) return null;
    return result.errors
      .slice(0, 3)
      .map((e) => `${e.instanceLocation} ${e.error}`)
      .join("; ");
  }

  /**
   * One request of the model's code, for the command `command` (the sandbox's nonce):
   * at most MAX_IN_FLIGHT of a command run at once (the rest wait their turn), all of
   * them are aborted when the command ends (commandEnded) or the harness closes, and
   * every one is answered, with the response or an error; nothing here rejects.
   */
  async netFetch({ id, command, url, method, headers, body }) {
    const answer = (reply) => this.answerNet(id, reply);
    if (this._network === null)
      return answer({ error: "network: this page allows the model's code no network (the network and packages options)" });
    const slot = await this._slots.take(command);
    if (slot === null) return answer({ error: "network: the command ended before this request could start" });
    try {
      const request = { url, method, headers: isStringRecord(headers) ? headers : {}, body };
      answer(await this._network.fetch(request, slot.signal));
    } catch (err) {
      // createNetwork never rejects; this is a last guard for the page
      answer({ error: `network: ${err instanceof Error ? err.message : String(err)}` });
    } finally {
      slot.release();
    }
  }

  answerNet(id, reply) {
    this._post({ type: "netres", id, ...reply }, reply.body instanceof ArrayBuffer ? [reply.body] : []);
  }

  /** A command ended: its requests are aborted, and later ones refused. */
  commandEnded(command) {
    this._slots.end(command, new HarnessError("ECANCELED", "the command ended"));
  }

  /** A model request (the receiver took it only if isModelRequest: there are credentials). */
  async proxyFetch({ id, url, method, headers, body }) {
    const credentials = this._credentials;
    if (credentials === null) return this.refuseFetch({ id });
    const controller = new AbortController();
    this._aborts.set(`fetch:${id}`, controller);
    try {
      const withKey = { ...(headers ?? {}), ...credentials.headers };
      const response = await this._fetch(url, { method, headers: withKey, body: body ?? undefined, signal: controller.signal });
      this._post({ type: "fetch_head", id, status: response.status, headers: Object.fromEntries(response.headers) });
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          const chunk = value.slice().buffer; // our own copy, transferred
          this._post({ type: "fetch_chunk", id, data: chunk }, [chunk]);
        }
      }
      this._post({ type: "fetch_end", id });
    } catch (err) {
      this._post({ type: "fetch_error", id, message: err instanceof Error ? err.message : String(err) });
    } finally {
      this._aborts.delete(`fetch:${id}`);
    }
  }
}
