// The model request is built in Python (harness/models); the JavaScript only sends it.
// The one thing the page adds is the key, with the table generated from Python
// (embed/page/model-apis.mjs): no other module knows an endpoint path or a key header, and
// the worker's http.mjs posts the request to the page exactly as Python built it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { EMBED_FILES, embedSource, loadEmbed } from "./load-embed.mjs";

// (network.mjs's example `{"x-api-key": "..."}` is about the page's network.headers.)
const MODEL_SPECIFIC = [/\/chat\/completions/, /["'`]\/messages/, /Bearer /, /anthropic-/, /api\.openai\.com/, /api\.anthropic\.com/];

test("no embed module but model-apis.mjs knows an endpoint or a key header", async () => {
  const names = [...EMBED_FILES.keys()].filter((n) => /\.(mjs|js)$/.test(n) && n !== "model-apis.mjs");
  assert.ok(names.includes("pyharness.mjs") && names.includes("http.mjs") && names.includes("worker.mjs"));
  for (const name of names) {
    const text = embedSource(name);
    for (const pattern of MODEL_SPECIFIC)
      assert.doesNotMatch(text, pattern, `${name} knows ${pattern}: it belongs in harness/models/configs.py`);
  }
});

test("the page adds the key to the model's endpoint from the generated table", async () => {
  const { MODEL_APIS, modelEndpoint, keyHeaders } = await loadEmbed("model-apis.mjs");
  assert.deepEqual(Object.keys(MODEL_APIS).sort(), ["anthropic-messages", "openai-chat"]);
  assert.equal(modelEndpoint("openai-chat", "https://m.example/v1//"), "https://m.example/v1/chat/completions");
  assert.deepEqual(keyHeaders("openai-chat", "k"), { authorization: "Bearer k" });
  assert.deepEqual(keyHeaders("anthropic-messages", "k"), { "x-api-key": "k" });
  assert.deepEqual(keyHeaders("anthropic-messages", ""), {});
});

test("http.mjs sends the request as it was given, adding nothing", async () => {
  const { createHttp } = await loadEmbed("http.mjs");
  const posted = [];
  const http = createHttp((message) => posted.push(message));
  const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
  const opened = http.open("https://m.example/v1/messages", "POST", JSON.stringify(headers), '{"model":"m"}');
  assert.deepEqual(posted, [
    { type: "fetch", id: 1, url: "https://m.example/v1/messages", method: "POST", headers, body: '{"model":"m"}' },
  ]);
  http.onPageMessage({ type: "fetch_head", id: 1, status: 200, headers: {} });
  assert.deepEqual(await opened, { id: 1, status: 200, headers: "{}" });
});
