// A penguin session that counts the nested-repository records its first plan reads, in a process
// of its own (run by repo_trust_index_test.ts with PENGUIN_RUN_DIR set): `deno run -A
// _trust_reads.ts <workspace> <record dir>` plans a sandbox for the workspace (joining it),
// counting the files read below the record directory, ends the session, and prints one JSON
// line: `{ reads: <paths read during the plan> }`.
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";

const [ws, dir] = Deno.args as [string, string];
const session = keepStandIns();
const policy = createPolicy({ workspace: ws, mode: "workspace-write", home: "", hostEnv: {} });
const reads: string[] = [];
const d = Deno as unknown as Record<string, (...args: unknown[]) => unknown>;
const saved = ["readTextFile", "readFile", "readTextFileSync", "readFileSync"].map((n) =>
  [n, d[n]!] as const
);
for (const [name, f] of saved) {
  d[name] = (...args: unknown[]) => {
    const path = String(args[0]);
    if (path.startsWith(`${dir}/`)) reads.push(path);
    return f.apply(Deno, args);
  };
}
try {
  await resolvePlan(policy, ws);
} finally {
  for (const [name, f] of saved) d[name] = f;
}
await session.end();
console.log(JSON.stringify({ reads }));
