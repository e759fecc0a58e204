/**
 * A secret that counts how often its value is read: the masking cost tests
 * measure work (how often a matcher reads the secrets), not time.
 *
 * @module
 */
import type { Secret } from "../../lib/tools/mod.ts";

/** A vault secret `name` holding `value`, and how often its value has been read. */
export function countedSecret(
  name: string,
  value: string,
): { secret: Secret; reads: () => number } {
  let reads = 0;
  const secret = {
    kind: "vault",
    name,
    get value() {
      reads++;
      return value;
    },
  } as Secret;
  return { secret, reads: () => reads };
}
