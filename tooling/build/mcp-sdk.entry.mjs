// The parts of the official MCP TypeScript SDK the page uses (embed/page/mcp.mjs), bundled
// by `pyharness build` into dist/mcp-sdk.mjs: loaded only when a page sets `mcp`.
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
