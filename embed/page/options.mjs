// The page-only options of createHarness: the model's secrets split from what the worker
// may see, the page tools' JSON-safe specs, and the plain data sent as the worker's `init`.
import { keyHeaders, MODEL_APIS, modelEndpoint } from "./model-apis.mjs";
import { HarnessError } from "./errors.mjs";

/**
 * The options without the model's secrets (apiKey, secretHeaders), which stay on the
 * page, and what the page needs to add them to the model's requests, and only to those.
 * Where those go and how the key is sent: model-apis.mjs, generated from the Python
 * that builds the requests (harness/models/configs.py).
 */
export function splitSecrets(options) {
  const model = options.model;
  if (!model || typeof model !== "object" || !Object.hasOwn(MODEL_APIS, model.api)) return { config: { ...options }, credentials: null };
  const { apiKey, secretHeaders, ...visible } = model;
  if (apiKey !== undefined && typeof apiKey !== "string") throw new HarnessError("EINVAL", "EINVAL: model.apiKey must be a string");
  if (secretHeaders !== undefined && !isStringRecord(secretHeaders)) {
    throw new HarnessError("EINVAL", "EINVAL: model.secretHeaders must be an object of string header values");
  }
  visible.baseUrl = visible.baseUrl ?? MODEL_APIS[model.api].baseUrl;
  if (typeof visible.baseUrl !== "string") throw new HarnessError("EINVAL", "EINVAL: model.baseUrl must be a string");
  const headers = keyHeaders(model.api, apiKey);
  for (const [name, value] of Object.entries(secretHeaders ?? {})) headers[name.toLowerCase()] = value;
  return { config: { ...options, model: visible }, credentials: { endpoint: modelEndpoint(model.api, visible.baseUrl), headers } };
}

export const isStringRecord = (value) =>
  value !== null && typeof value === "object" && Object.values(value).every((v) => typeof v === "string");

/** The JSON-safe part of the page tools; `run` stays here. */
export function pageToolSpecs(tools) {
  if (!Array.isArray(tools)) throw new HarnessError("EINVAL", "EINVAL: tools must be an array");
  return tools.map((tool, i) => {
    if (!tool || typeof tool.name !== "string" || typeof tool.run !== "function") {
      throw new HarnessError("EINVAL", `EINVAL: tools[${i}] needs a string name and a run(input, {signal, fs}) function`);
    }
    const { name, description = "", parameters = { type: "object", properties: {} }, timeoutMs, readOnly } = tool;
    return {
      name,
      description,
      parameters,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(readOnly !== undefined ? { readOnly } : {}),
    };
  });
}

/** Options that cross to the worker: plain data only (functions stay on the page). */
export function serializableConfig(config) {
  const out = {};
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== "function" && value !== undefined) out[key] = value;
  }
  try {
    return JSON.parse(JSON.stringify(out));
  } catch (err) {
    // a cycle, a BigInt: say so before any worker starts
    throw new HarnessError("EINVAL", `EINVAL: the options must be plain JSON data (${err.message})`);
  }
}
