/**
 * Temporary directories for what penguin writes on the host and no command
 * may see or change: inside penguin's private run directory
 * (`/tmp/penguin-<uid>`, `_standin_registry.ts`), which every sandbox plan
 * hides, also from a session whose workspace is `/tmp` itself. A plain
 * `Deno.makeTempDir()` lies in the host's `/tmp`: a session working in
 * `/tmp` read an MCP server's stderr log there, with the token it printed
 * (attack round 28 e19).
 *
 * @module
 */
import { privateRunDir } from "./_standin_registry.ts";

/** A new directory (0700) named `<prefix><random>` in penguin's private run directory. */
export async function makePrivateTempDir(prefix: string): Promise<string> {
  return await Deno.makeTempDir({ dir: await privateRunDir(), prefix });
}
