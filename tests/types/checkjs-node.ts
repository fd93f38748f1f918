// Compiled by `tsc -p tests/types/tsconfig.checkjs.node.json` (make lint), never run: the
// Vite plugin (embed/node/vite.mjs) has the type that vite.d.ts publishes, both ways.
import type pyharnessApi from "../../embed/node/vite.d.ts";
import pyharness from "../../embed/node/vite.mjs";

declare const published: typeof pyharnessApi;

export const asPublished: typeof pyharnessApi = pyharness;
export const asImplemented: typeof pyharness = published;
