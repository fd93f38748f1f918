// Import a module from embed/ in node (see embed-hooks.mjs).
import { register } from "node:module";

register("./embed-hooks.mjs", import.meta.url);

export const loadEmbed = (name) => import(new URL(`../../embed/${name}`, import.meta.url));
