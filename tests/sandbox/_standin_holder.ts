// Helper for standin_sweep_test.ts: a penguin that holds stand-ins until its stdin closes (or it
// is killed). Args: `plan <workspace>` holds what a writable plan of the workspace needs;
// `hold <json>` holds the given placeholders. Prints the held placeholders as one JSON line once
// they exist and are recorded in the registry. `sweep` sweeps stand-ins of any shape. `sandbox <workspace> <script>` runs the script in
// a sandbox of the workspace (policy home "", the environment's HOME for penguin's run directory)
// and prints its output.
import { holdPlaceholders, sweepStandIns } from "../../lib/sandbox/_placeholders.ts";
import {
  createPolicy,
  type Placeholder,
  resolvePlan,
  spawnSandboxed,
} from "../../lib/sandbox/mod.ts";

const [mode, arg] = Deno.args;
if (mode === "sweep") {
  // `sweep`: remove the stand-ins no living penguin holds, of any shape.
  await sweepStandIns(() => true);
  Deno.exit(0);
}
if (mode === "sandbox") {
  const policy = createPolicy({
    workspace: arg!,
    home: "",
    hostEnv: { PATH: "/usr/bin:/bin", HOME: arg! },
  });
  const child = await spawnSandboxed({ shell: Deno.args[2]!, policy, stdin: "null" });
  for await (const chunk of child.output) await Deno.stdout.write(new TextEncoder().encode(chunk));
  await child.status;
  Deno.exit(0);
}
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
