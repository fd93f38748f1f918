// For `tsc -p tests/types/tsconfig.checkjs.json`: the modules that `pyharness build` writes
// next to the embed/ and shell/ sources (they exist only in dist/), and the Python files
// that esbuild inlines as text.
declare module "*.py" {
  const source: string;
  export default source;
}
declare module "*/sandbox-frame.mjs" {
  /** The CSP hash ("sha256-...") of FRAME_SCRIPT. */
  export const FRAME_HASH: string;
  /** embed/sandbox/sandbox-frame.js, the frame's only script. */
  export const FRAME_SCRIPT: string;
}
declare module "*/json-schema.mjs" {
  export { Validator } from "@cfworker/json-schema";
}
declare module "*/markdown-it.mjs" {
  // markdown-it ships no types (and @types/markdown-it is not installed).
  const MarkdownIt: new (presetName?: string, options?: Record<string, unknown>) => any;
  export default MarkdownIt;
}
declare module "*/mcp-sdk.mjs" {
  // tooling/build/mcp-sdk.entry.mjs, bundled.
  export { Client } from "@modelcontextprotocol/sdk/client/index.js";
  export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
  export { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
}
