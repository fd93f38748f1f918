// Import a module from embed/ in node (see embed-hooks.mjs). embed/ is grouped by realm
// (embed/page/, embed/worker/, ...) and the bundle is flat, so a module is named here by
// its bundle name ("protocol.mjs"), as a user of dist/ sees it. A test that uses a
// module's exports imports it by its path instead (after importing this file, if the
// module needs the hooks): knip.jsonc's unused-export check follows literal paths only.
import { readdirSync, readFileSync } from "node:fs";
import { register } from "node:module";

register("./embed-hooks.mjs", import.meta.url);

const EMBED = new URL("../../embed/", import.meta.url);

/** Every file of embed/: bundle name → its URL in the checkout. */
export const EMBED_FILES = new Map(
  readdirSync(EMBED, { withFileTypes: true })
    .filter((realm) => realm.isDirectory())
    .flatMap((realm) => readdirSync(new URL(`${realm.name}/`, EMBED)).map((name) => [name, new URL(`${realm.name}/${name}`, EMBED)])),
);

/** The checkout's URL of the embed/ file the bundle calls `name`. */
function embedUrl(name) {
  const url = EMBED_FILES.get(name);
  if (!url) throw new Error(`no ${name} in embed/`);
  return url;
}

export const embedSource = (name) => readFileSync(embedUrl(name), "utf8");

export const loadEmbed = (name) => import(embedUrl(name).href);
