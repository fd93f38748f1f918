// What an MCP server sends, checked on the page (embed/page/mcp-checks.mjs): input
// schemas rebuilt into a form the worker accepts or refused with why; secret header
// values scrubbed in every encoding listed. The same checks run against a hostile real
// server in e2e/test_mcp.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_SCHEMA_DEPTH, REDACTED, secretScrubber, usableSchema } from "../../embed/page/mcp-checks.mjs";

const none = (text) => text;

test("a usable schema is kept, known keywords only, as 2020-12", () => {
  const { schema, why } = usableSchema(
    {
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "https://x/s",
      type: "object",
      properties: {
        a: { type: "integer", minimum: 0, exclusiveMaximum: true, description: "A" },
        t: { type: "array", items: [{ type: "string" }, { type: "number" }] },
        r: { $ref: "#/definitions/r" },
        e: { enum: ["x", 1, null], default: "x", "x-vendor": 1 },
      },
      definitions: { r: { type: "string", pattern: "^a+$" } },
      required: ["a", "a"],
      additionalProperties: false,
    },
    none,
  );
  assert.equal(why, undefined);
  assert.deepEqual(schema, {
    type: "object",
    properties: {
      a: { type: "integer", minimum: 0, description: "A" },
      t: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
      r: { $ref: "#/definitions/r" },
      e: { enum: ["x", 1, null], default: "x" },
    },
    definitions: { r: { type: "string", pattern: "^a+$" } },
    required: ["a"],
    additionalProperties: false,
  });
  assert.deepEqual(usableSchema(undefined, none).schema, { type: "object", properties: {} });
});

test("a schema that is not one, too deep, too large or pointing out is refused with why", () => {
  let deep = { type: "string" };
  for (let i = 0; i < MAX_SCHEMA_DEPTH; i++) deep = { type: "object", properties: { x: deep } };
  let hugeDeep = {};
  for (let i = 0; i < 100_000; i++) hugeDeep = { not: hugeDeep };
  const many = Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`p${i}`, { type: "string" }]));
  const cases = [
    ["a string", /not a JSON Schema object/],
    [[1, 2], /not a JSON Schema object/],
    [{ type: "string" }, /not of type "object"/],
    [{ type: "object", properties: { a: 5 } }, /non-schema at \/properties\/a/],
    [{ type: "object", properties: [] }, /properties is not an object/],
    [{ type: "object", properties: { a: { type: "strnig" } } }, /unknown type/],
    [{ type: "object", properties: { a: { type: ["string", "string"] } } }, /unknown type/],
    [{ type: "object", required: "a" }, /required is not a list/],
    [{ type: "object", anyOf: [] }, /anyOf is not a non-empty list/],
    [{ type: "object", properties: { a: { pattern: 5 } } }, /pattern that is not a string/],
    [{ type: "object", properties: { a: { $ref: "http://evil/x.json" } } }, /\$ref outside the schema/],
    [{ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, /points at nothing/],
    [deep, /nests more than 32 levels deep/],
    [{ type: "object", properties: { a: hugeDeep } }, /nests more than 32 levels deep/],
    [{ type: "object", properties: { a: { enum: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]] } } }, /nests more/],
    [{ type: "object", properties: many }, /larger than 5000 parts/],
  ];
  for (const [i, [schema, why]] of cases.entries()) assert.match(usableSchema(schema, none).why ?? "(kept)", why, `case ${i}`);
});

test("a schema's strings are scrubbed; a name or pattern holding a secret refuses it", () => {
  const { scrub } = secretScrubber(["s3cret-value"]);
  const kept = usableSchema({ type: "object", description: "token s3cret-value", properties: { a: { enum: ["s3cret-value"] } } }, scrub);
  assert.equal(JSON.stringify(kept.schema).includes("s3cret"), false);
  assert.match(usableSchema({ type: "object", properties: { "s3cret-value": {} } }, scrub).why, /holds a secret/);
  assert.match(usableSchema({ type: "object", properties: { a: { pattern: "s3cret-value" } } }, scrub).why, /holds a secret/);
});

test("a secret is found as written and in the encodings a server could echo it in", () => {
  const secret = "Bearer s3cr/t+ké=y&<1>";
  const { scrub, holds } = secretScrubber([secret, "ab"]); // "ab" is too short to look for
  const bytes = Buffer.from(secret, "utf8");
  const forms = [
    secret,
    secret.toUpperCase(),
    encodeURIComponent(secret),
    encodeURI(secret),
    encodeURIComponent(secret).replace(/%20/g, "+"),
    [...bytes].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join(""),
    JSON.stringify(secret).slice(1, -1),
    bytes.toString("hex"),
    bytes.toString("hex").toUpperCase(),
    bytes.toString("base64"),
    bytes.toString("base64url"),
    Buffer.concat([Buffer.from("u:"), bytes]).toString("base64"), // Basic u:<secret>
    Buffer.concat([Buffer.from("x"), bytes, Buffer.from("tail")]).toString("base64"),
    Buffer.concat([Buffer.from("\x89PNG"), bytes]).toString("base64url"),
    secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
  ];
  for (const form of forms) {
    const text = `header was: ${form} (end)`;
    assert.equal(holds(text), true, form);
    const out = scrub(text);
    assert.ok(out.includes(REDACTED) && !out.includes(form), form);
  }
  assert.equal(scrub("about ab and abc"), "about ab and abc");
  assert.equal(holds("nothing here"), false);
  assert.equal(secretScrubber([]).scrub("x"), "x");
});
