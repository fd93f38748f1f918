// MCP servers as tools (embed/page/mcp.mjs): the option's checks, the names the model
// sees, and how a result becomes the model's text. The connection itself is the SDK's,
// run against a real MCP server in e2e/test_mcp.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkMcpOption, exposedName, MAX_OUTPUT_CHARS, resultText } from "../../embed/page/mcp.mjs";

test("the mcp option is checked before anything connects", () => {
  assert.equal(checkMcpOption(undefined), null);
  assert.equal(
    checkMcpOption([{ name: "docs", url: "https://mcp.example/mcp", secretHeaders: { authorization: "Bearer x" }, tools: ["search"] }]),
    null,
  );
  const bad = [
    [{}, /must be an array/],
    [[{ name: "a__b", url: "https://x/" }], /no "__"/],
    [[{ name: "a", url: "ftp://x/" }], /http\(s\)/],
    [[{ name: "a", url: "x" }], /absolute URL/],
    [
      [
        { name: "a", url: "https://x/" },
        { name: "a", url: "https://y/" },
      ],
      /two servers/,
    ],
    [[{ name: "a", url: "https://x/", headers: { "bad header": "v" } }], /headers must map/],
    [[{ name: "a", url: "https://x/", tools: "all" }], /tools must be an array/],
    [[{ name: "a", url: "https://x/", timeoutMs: -1 }], /timeoutMs/],
    [[{ name: "a", url: "https://x/", extra: 1 }], /unknown option extra/],
  ];
  for (const [value, expected] of bad) assert.match(checkMcpOption(value), expected, JSON.stringify(value));
});

test("exposed names fit a tool name", () => {
  assert.equal(exposedName("docs", "search"), "docs__search");
  assert.equal(exposedName("docs", "get.page/v2"), "docs__get_page_v2");
  assert.equal(exposedName("docs", "x".repeat(100)).length, 64);
});

test("results become text: images and resources described, bounded", () => {
  const png = "iVBORw0KGgo="; // 8 bytes
  assert.equal(
    resultText({
      content: [
        { type: "text", text: "hi" },
        { type: "image", data: png, mimeType: "image/png" },
        { type: "resource_link", uri: "file:///a", name: "a" },
        { type: "resource", resource: { uri: "file:///b", text: "body" } },
        { type: "resource", resource: { uri: "file:///c", mimeType: "application/pdf", blob: png } },
      ],
    }),
    "hi\n[image: image/png, 8 bytes]\n[resource link: a file:///a]\n[resource file:///b]\nbody\n[resource file:///c: application/pdf, 8 bytes]",
  );
  assert.equal(resultText({ content: [], structuredContent: { n: 1 } }), '{"n":1}');
  const long = resultText({ content: [{ type: "text", text: "x".repeat(MAX_OUTPUT_CHARS + 5) }] });
  assert.ok(long.endsWith("[cut: 5 more characters]"));
  assert.equal(resultText(null), "");
});
