import assert from "node:assert/strict";
import { z } from "zod";
import {
  argsJsonSchema,
  BUILTIN_TOOLS,
  defineTool,
  type ToolCallContext,
  type ToolEvent,
} from "../../lib/tools/mod.ts";
import { builtinToolPreview } from "../../lib/agent/toolset.ts";

const ctx: ToolCallContext = {
  sessionId: "s",
  toolCallId: "c",
  signal: new AbortController().signal,
};

async function events(it: AsyncIterable<ToolEvent>): Promise<ToolEvent[]> {
  const out: ToolEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const deleteTool = defineTool({
  name: "delete_note",
  description: "Delete a note, or only preview the deletion.",
  args: z.object({ id: z.string().min(1), dry_run: z.boolean().optional() }),
  permission: (args) => (args.dry_run ? "r" : "rw"),
  maxOutputLength: 500,
  preview: (args) => (typeof args.id === "string" ? `note ${args.id}` : undefined),
  async *run(args, _ctx, definition) {
    yield { type: "delta", text: `${args.dry_run ? "would delete" : "deleted"} ${args.id}` };
    yield { type: "result", note: `[limit ${definition.maxOutputLength}]` };
  },
});

Deno.test("defineTool fills the defaults and derives the model's schema from the zod args", () => {
  assert.deepEqual(deleteTool.definition, {
    name: "delete_note",
    description: "Delete a note, or only preview the deletion.",
    parameters: {
      type: "object",
      properties: { id: { type: "string", minLength: 1 }, dry_run: { type: "boolean" } },
      required: ["id"],
    },
    permission: "rw",
    timeoutMs: 120_000,
    maxOutputLength: 500,
    callDescription: false,
  });
  assert.throws(() => argsJsonSchema(z.string()), /must describe an object/);
});

Deno.test("a defined tool runs with validated arguments and the definition in use", async () => {
  const tool = deleteTool.create({ ...deleteTool.definition, maxOutputLength: 42 });
  assert.deepEqual(await events(tool.run({ id: "n1" }, ctx)), [
    { type: "delta", text: "deleted n1" },
    { type: "result", note: "[limit 42]" },
  ]);
});

Deno.test("arguments that do not fit never reach run: the call fails naming the parameter", async () => {
  const out = await events(deleteTool.create().run({ id: "" }, ctx));
  assert.equal(out.length, 2);
  const text = (out[0] as { text: string }).text;
  assert.match(text, /^delete_note was not run: required argument "id" is empty\./);
  assert.match(text, /- id \(string, required\)/);
  assert.deepEqual(out[1], { type: "result", status: "failed" });
});

Deno.test("a permission function decides per call; invalid arguments and configured permissions fall back", () => {
  const tool = deleteTool.create();
  assert.equal(tool.permissionFor!({ id: "n1", dry_run: true }), "r");
  assert.equal(tool.permissionFor!({ id: "n1" }), "rw");
  assert.equal(tool.permissionFor!({ dry_run: true }), "rw", "invalid arguments: the definition's");
  const configured = deleteTool.create({ ...deleteTool.definition, permission: "r" });
  assert.equal(configured.permissionFor, undefined, "a configured permission replaces the rule");
  assert.equal(configured.definition.permission, "r");
});

Deno.test("a preview reads raw arguments and never throws", () => {
  assert.equal(deleteTool.preview({ id: "n1" }), "note n1");
  assert.equal(deleteTool.preview({}), undefined);
  const throwing = defineTool({
    name: "t",
    description: "",
    args: z.object({}),
    permission: "r",
    preview: () => {
      throw new Error("boom");
    },
    async *run() {},
  });
  assert.equal(throwing.preview({}), undefined);
  assert.equal(throwing.create().preview!({}), undefined);
});

Deno.test("every built-in tool declares a preview of its subject", () => {
  assert.deepEqual(BUILTIN_TOOLS.map((t) => t.name), [
    "read_file",
    "edit_file",
    "write_file",
    "exec_command",
    "input_command",
    "kill_command",
    "read_image",
  ]);
  const cases: [string, Record<string, unknown>, string | undefined][] = [
    ["read_file", { file_path: "/work/src/lib/main.ts" }, "…/lib/main.ts"],
    ["write_file", { file_path: "notes.md", content: "x" }, "notes.md"],
    ["edit_file", { file_path: "a/b/c.ts" }, "…/b/c.ts"],
    ["read_image", { source: "shots/ui/home.png" }, "…/ui/home.png"],
    ["describe_image", { source: "shots/ui/home.png", prompt: "what?" }, "…/ui/home.png"],
    ["exec_command", { cmd: "ls -la" }, "$ ls -la"],
    ["exec_command", { description: "List files", cmd: "ls" }, "List files ($ ls)"],
    ["exec_command", { description: "List files" }, undefined],
    ["input_command", { process_id: "proc-1", chars: "y\n" }, "proc-1 << y\n"],
    ["input_command", { process_id: "proc-1" }, "proc-1"],
    ["kill_command", { process_id: " proc-1 " }, "proc-1"],
    ["run_subagent", { prompt: "Summarize the README" }, "Summarize the README"],
    ["input_subagent", { subagent_id: "subagent-1", prompt: "go on" }, "subagent-1 << go on"],
    ["kill_subagent", { subagent_id: "subagent-1" }, "subagent-1"],
    ["read_file", { file_path: 7 }, undefined],
    ["not_a_tool", { x: 1 }, undefined],
  ];
  for (const [name, args, want] of cases) {
    assert.equal(builtinToolPreview(name, args), want, `${name} ${JSON.stringify(args)}`);
  }
});
