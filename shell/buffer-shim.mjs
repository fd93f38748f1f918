// Injected by esbuild wherever just-bash uses the Node global `Buffer` (gzip, curl -u).
export { Buffer } from "buffer";
