// penguin entry point: parse and dispatch only. `penguin --version` alone is answered here,
// before the dispatcher and what it imports (node:path, node:url, the registry) are loaded;
// every other command line goes to lib/cli/mod.ts, imported on demand.
import { VERSION } from "./lib/version.ts";

/** The version flags the dispatcher accepts as the whole command line. */
const VERSION_FLAGS = ["--version", "-v", "-V"];

/** Print the version; a reader that went away (`| head -c0`) is not an error, as in main(). */
function printVersion(): number {
  const data = new TextEncoder().encode(`penguin ${VERSION}\n`);
  try {
    for (let off = 0; off < data.length;) off += Deno.stdout.writeSync(data.subarray(off));
  } catch (err) {
    if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
  }
  return 0;
}

if (import.meta.main) {
  if (Deno.args.length === 1 && VERSION_FLAGS.includes(Deno.args[0]!)) Deno.exit(printVersion());
  const { main } = await import("./lib/cli/mod.ts");
  Deno.exit(await main(Deno.args));
}
