// penguin entry point: parse and dispatch only.
import { main } from "./lib/cli/mod.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
