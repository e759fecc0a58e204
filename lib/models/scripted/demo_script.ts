/**
 * The fixed script of `penguin demo`: the model looks at the workspace,
 * writes `hello.txt`, reads it back with a command, then answers with what
 * the command printed. Each step is decided from the request alone (how many
 * assistant turns the history holds), so the loop is the real one: the tools
 * really run, and the answer quotes their real output.
 *
 * @module
 */
import type { ScriptedReply, ScriptedRequest } from "./reply.ts";

/** The provider group name of the demo's model entry. */
export const DEMO_PROVIDER = "scripted";

/** The model id of the demo's model entry. */
export const DEMO_MODEL_ID = "penguin-demo";

/** The task `penguin demo` gives the scripted model. */
export const DEMO_TASK = "Create hello.txt that says hello, then show me what it contains.";

/** What the model writes to hello.txt. */
export const DEMO_GREETING = "Hello from penguin's scripted demo model!";

function lastToolResult(req: ScriptedRequest): string {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === "tool") return m.text;
    if (m.role === "assistant") break;
  }
  return "";
}

/** The demo's script: the reply to one request of the demo task. */
export function demoScript(req: ScriptedRequest): ScriptedReply {
  switch (req.turn) {
    case 0:
      return {
        text: "[scripted model] First I look at what the workspace holds.",
        calls: [{ name: "exec_command", arguments: { cmd: "ls -la" } }],
      };
    case 1:
      return {
        text: "[scripted model] Now I write hello.txt with the file tool.",
        calls: [{
          name: "write_file",
          arguments: { file_path: "hello.txt", content: `${DEMO_GREETING}\n` },
        }],
      };
    case 2:
      return {
        text: "[scripted model] And read it back with a command.",
        calls: [{ name: "exec_command", arguments: { cmd: "cat hello.txt" } }],
      };
    default: {
      const output = lastToolResult(req).trim();
      return {
        text: output.includes(DEMO_GREETING)
          ? `[scripted model] Done: \`cat hello.txt\` printed "${DEMO_GREETING}". ` +
            "Every step above was a real tool call, recorded in the session's trace; " +
            "only my replies were scripted."
          : "[scripted model] `cat hello.txt` did not print the greeting; the tool said: " +
            JSON.stringify(output.slice(0, 400)) +
            ". If the sandbox is the problem, `penguin sandbox check` explains how to fix it.",
      };
    }
  }
}
