/**
 * Bytes as lowercase hexadecimal text, two digits a byte.
 *
 * @module
 */

/** `bytes` (a view or a whole buffer) as lowercase hex, two digits a byte. */
export function hexOf(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}
