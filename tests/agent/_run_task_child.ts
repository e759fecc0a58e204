// A program embedding penguin through the SDK: one `runTask()` call, its outcome as JSON on stdout.
// argv: <root> <workspace> <message>
import { agent } from "../../lib/mod.ts";

const { runTask } = agent;

const [root, workspace, message] = Deno.args;
const outcome = await runTask(
  { root: root!, workspace: workspace!, message: message! },
  { warn: (line) => Deno.stderr.writeSync(new TextEncoder().encode(line)) },
);
console.log(JSON.stringify(outcome));
