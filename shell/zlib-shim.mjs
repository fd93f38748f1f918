// node:zlib for just-bash's browser build (gzip, gunzip, zcat), over fflate.
// just-bash uses exactly gzipSync, gunzipSync and three constants.
import { gunzipSync as fflateGunzip, gzipSync as fflateGzip } from "fflate";

export const constants = { Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1 };

const bytes = (data) =>
  data instanceof Uint8Array ? data : typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data);

export function gzipSync(data, options = {}) {
  const level = options.level === undefined || options.level < 0 ? 6 : options.level;
  return checked(Buffer.from(fflateGzip(bytes(data), { level })), options);
}

export function gunzipSync(data, options = {}) {
  return checked(Buffer.from(fflateGunzip(bytes(data))), options);
}

/** @param {Buffer} out @param {{maxOutputLength?: number}} options */
function checked(out, { maxOutputLength }) {
  if (maxOutputLength !== undefined && out.length > maxOutputLength) {
    throw new RangeError(`Cannot create a Buffer larger than ${maxOutputLength} bytes`);
  }
  return out;
}

export default { constants, gzipSync, gunzipSync };
