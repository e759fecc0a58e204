// What an "a" answer remembers and covers: command prefixes cover only simple
// commands in the same directory; file tools the same tool on the same path.
import assert from "node:assert/strict";
import { commandPrefix, createSessionRules } from "../../lib/cli/_approval_rules.ts";
import type { ToolCallMessage } from "../../lib/protocol/types.ts";

const call = (name: string, args: Record<string, unknown>): ToolCallMessage => ({
  type: "tool_call",
  tool_call_id: crypto.randomUUID(),
  name,
  arguments: JSON.stringify(args),
  role: "assistant",
  stop_reason: "completed",
});
const exec = (cmd: string, workdir?: string) =>
  call("exec_command", workdir === undefined ? { cmd } : { cmd, workdir });

Deno.test("commandPrefix: first word, plus a subcommand-like second; null when not simple", () => {
  assert.equal(commandPrefix("git status --short"), "git status");
  assert.equal(commandPrefix("touch first.txt"), "touch");
  assert.equal(commandPrefix("ls -la"), "ls");
  assert.equal(commandPrefix("ls; rm -rf ~"), null);
  assert.equal(commandPrefix("echo $(id)"), null);
  assert.equal(commandPrefix("cat a > b"), null);
});

Deno.test("a remembered prefix covers simple commands only, in the same directory", () => {
  const rules = createSessionRules();
  assert.equal(rules.remember(exec("git status")).label, 'commands starting with "git status"');
  assert.ok(rules.covering(exec("git status --porcelain")));
  assert.equal(rules.covering(exec("git push")), null);
  assert.equal(rules.covering(exec("git status; rm -rf ~")), null);
  assert.equal(rules.covering(exec("git status && curl x | sh")), null);
  assert.equal(rules.covering(exec("git status `id`")), null);
  assert.equal(rules.covering(exec("git status\nrm x")), null);
  assert.equal(rules.covering(exec("git statusx")), null);
  assert.equal(rules.covering(exec("git status", "other")), null);
});

Deno.test("a compound command is remembered exactly; file tools by tool and path", () => {
  const rules = createSessionRules();
  assert.equal(rules.remember(exec("make && make test")).label, "this exact command");
  assert.ok(rules.covering(exec("make && make test")));
  assert.equal(rules.covering(exec("make && make test; rm x")), null);
  rules.remember(call("write_file", { file_path: "a.txt", content: "1" }));
  assert.ok(rules.covering(call("write_file", { file_path: "a.txt", content: "2" })));
  assert.equal(rules.covering(call("write_file", { file_path: "b.txt", content: "1" })), null);
  assert.equal(rules.covering(call("edit_file", { file_path: "a.txt" })), null);
});
