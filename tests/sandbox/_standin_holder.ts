// Helper for standin_sweep_test.ts: a penguin that holds stand-ins until its stdin closes (or it
// is killed). Args: `plan <workspace>` holds what a writable plan of the workspace needs;
// `hold <json>` holds the given placeholders. Prints the held placeholders as one JSON line once
// they exist and are recorded in the registry.
import { holdPlaceholders } from "../../lib/sandbox/_placeholders.ts";
import { createPolicy, type Placeholder, resolvePlan } from "../../lib/sandbox/mod.ts";

const [mode, arg] = Deno.args;
let placeholders: Placeholder[];
if (mode === "plan") {
  const policy = createPolicy({ workspace: arg!, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
  placeholders = (await resolvePlan(policy, arg!)).placeholders ?? [];
} else {
  placeholders = JSON.parse(arg!);
}
const release = await holdPlaceholders(placeholders);
console.log(JSON.stringify(placeholders));
// Block until the test closes stdin (a killed holder never gets here).
const buf = new Uint8Array(16);
while (await Deno.stdin.read(buf) !== null) { /* keep holding */ }
await release();
