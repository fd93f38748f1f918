// Files attached to a prompt (`h.prompt(text, {attachments})`), on the page.
//
// Each attachment is checked here before anything is sent (its type, its size, and for
// an image that its bytes are one), then written to /work/attachments/<name> through
// h.fs (the jail; a name already taken gets " (2)", " (3)", …) and named in the prompt
// message. The worker reads the images back from there for the model (harness/images.py):
// the bytes cross to the worker once, as the file.
import { HarnessError } from "./errors.mjs";

const MIB = 1024 * 1024;
const MAX_ATTACHMENTS = 10; // per prompt
const MAX_IMAGE_BYTES = 5 * MIB; // per image (the Anthropic API's own limit)
const MAX_FILE_BYTES = 20 * MIB; // per other file
const MAX_PROMPT_BYTES = 25 * MIB; // all of a prompt's attachments
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/** What else may be attached: text of any kind, and these. */
const FILE_TYPES = ["application/pdf", "application/json", "application/zip", "application/xml", "application/octet-stream"];
const DIR = "attachments";

/** The signature each image type starts with (checked: a "PNG" must be one). */
const SIGNATURES = {
  "image/png": [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  "image/jpeg": [[0xff, 0xd8, 0xff]],
  "image/gif": [
    [0x47, 0x49, 0x46, 0x38, 0x37, 0x61],
    [0x47, 0x49, 0x46, 0x38, 0x39, 0x61],
  ],
  "image/webp": [[0x52, 0x49, 0x46, 0x46]],
};

const fail = (code, message) => new HarnessError(code, `${code}: ${message}`);

function sizeOf(data) {
  if (data instanceof Blob) return data.size;
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  if (typeof data === "string") return new TextEncoder().encode(data).byteLength;
  return -1;
}

/** The attachments as given, checked without reading them: why not, or null. */
export function checkAttachments(attachments) {
  if (!Array.isArray(attachments)) return fail("EINVAL", "attachments must be an array of {name, type, data}");
  if (attachments.length > MAX_ATTACHMENTS) return fail("EINVAL", `at most ${MAX_ATTACHMENTS} attachments a prompt`);
  let total = 0;
  for (const [i, a] of attachments.entries()) {
    if (!a || typeof a !== "object") return fail("EINVAL", `attachments[${i}] must be {name, type, data}`);
    if (typeof a.name !== "string" || safeName(a.name) === "") return fail("EINVAL", `attachments[${i}].name must be a file name`);
    const type = typeOf(a);
    const image = IMAGE_TYPES.includes(type);
    if (!image && !type.startsWith("text/") && !FILE_TYPES.includes(type)) {
      return fail(
        "EINVAL",
        `${a.name}: the type "${type.slice(0, 100)}" cannot be attached (images: ${IMAGE_TYPES.join(", ")}; text/*; ${FILE_TYPES.join(", ")})`,
      );
    }
    const size = sizeOf(a.data);
    if (size < 0) return fail("EINVAL", `${a.name}: data must be a Blob, an ArrayBuffer, a typed array or a string`);
    const limit = image ? MAX_IMAGE_BYTES : MAX_FILE_BYTES;
    if (size > limit)
      return fail(
        "EFBIG",
        `${a.name} is ${size.toLocaleString("en")} bytes; an ${image ? "image" : "attached file"} may have ${limit / MIB} MiB`,
      );
    total += size;
  }
  if (total > MAX_PROMPT_BYTES)
    return fail(
      "EFBIG",
      `the attachments are ${total.toLocaleString("en")} bytes together; a prompt may carry ${MAX_PROMPT_BYTES / MIB} MiB`,
    );
  return null;
}

/** The attachment's type: its `type`, or its Blob's; lower case, without parameters. */
function typeOf(a) {
  const type = typeof a.type === "string" ? a.type : a.data instanceof Blob ? a.data.type : "";
  return type.toLowerCase().split(";")[0].trim();
}

/** A name as a file name of /work/attachments: no folders, no control characters. */
function safeName(name) {
  const base = String(name).split(/[/\\]/).pop() ?? "";
  const plain = [...base].filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f).join(""); // no control characters
  return plain.replace(/^\.+/, "").trim().slice(0, 120);
}

async function bytesOf(data) {
  if (data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  return new TextEncoder().encode(data);
}

/**
 * Read, check and write each attachment to /work/attachments/ (checkAttachments first).
 * @param {any[]} attachments @param {{stat: Function, mkdir: Function, writeFile: Function}} fs h.fs
 * @returns {Promise<{path: string, type: string, size: number}[]>} what to name in the prompt
 */
export async function writeAttachments(attachments, fs) {
  const read = [];
  for (const a of attachments) {
    const type = typeOf(a);
    const bytes = await bytesOf(a.data);
    if (IMAGE_TYPES.includes(type) && !SIGNATURES[type].some((sig) => sig.every((b, i) => bytes[i] === b))) {
      throw fail("EINVAL", `${a.name} is not a ${type.slice(6).toUpperCase()} image (its bytes do not start like one)`);
    }
    read.push({ name: safeName(a.name), type, bytes });
  }
  await fs.mkdir(DIR, { recursive: true });
  const out = [];
  const taken = new Set();
  for (const { name, type, bytes } of read) {
    const path = await freePath(name, fs, taken);
    taken.add(path);
    await fs.writeFile(path, bytes);
    out.push({ path, type, size: bytes.byteLength });
  }
  return out;
}

async function freePath(name, fs, taken) {
  const dot = name.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let n = 1; n < 1000; n++) {
    const path = `${DIR}/${n === 1 ? name : `${stem} (${n})${ext}`}`;
    if (taken.has(path)) continue;
    const exists = await fs.stat(path).then(
      () => true,
      (err) => (err?.code === "ENOENT" ? false : Promise.reject(err)),
    );
    if (!exists) return path;
  }
  throw fail("EEXIST", `no free name for ${name} in /work/${DIR}`);
}
