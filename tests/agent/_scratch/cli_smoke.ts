import { startModelServer, turn } from "/work/main/tests/support/model_server.ts";
import { makeRoot } from "/work/main/tests/agent/_support.ts";
import { runCli } from "/work/main/tests/support/cli.ts";
const server = await startModelServer({ turns: [
  turn.toolCall("write_file", { file_path: "a.txt", content: "hello\n" }),
  turn.toolCall("exec_command", { cmd: "cat a.txt; echo hi", description: "show" }),
  turn.text("All done, the file says hello."),
] });
const sb = await makeRoot(server);
const r = await runCli(["--root", sb.root, "run", "-m", "make a file", "--workspace", sb.workspace]);
console.log(r.code); console.log("STDOUT:\n"+r.stdout); console.log("STDERR:\n"+r.stderr);
await server.close(); await sb.cleanup();
