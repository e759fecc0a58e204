// The command registry loads command modules on demand: a command line naming
// `trace show` loads that module alone, a bare `trace` every trace command.
import assert from "node:assert/strict";
import { commandsFor } from "../../lib/cli/registry.ts";

const names = (cs: { path: string[] }[]) => cs.map((c) => c.path.join(" "));

Deno.test("a trace subcommand loads only its own module; the word alone loads all of them, in help order", async () => {
  assert.deepEqual(names(await commandsFor("trace", "show")), ["trace show"]);
  assert.deepEqual(names(await commandsFor("trace", "stats")), ["trace stats"]);
  const all = [
    "trace validate",
    "trace show",
    "trace stats",
    "trace export",
    "trace follow",
    "trace diff",
  ];
  assert.deepEqual(names(await commandsFor("trace")), all);
  // An unknown or mistyped subcommand sees them all (for the suggestion and the group help).
  assert.deepEqual(names(await commandsFor("trace", "shwo")), all);
  // Words whose modules serve several subcommands are unaffected by the second word.
  assert.ok(names(await commandsFor("sessions", "list")).includes("sessions delete"));
});
