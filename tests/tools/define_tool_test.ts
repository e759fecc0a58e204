import assert from "node:assert/strict";
import { BUILTIN_NAMES } from "./_support.ts";
import { z } from "zod";
import {
  argsJsonSchema,
  BUILTIN_TOOLS,
  defineTool,
  type ToolCallContext,
  type ToolEvent,
} from "../../lib/tools/mod.ts";
import { builtinToolPreviews } from "../../lib/agent/tool_previews.ts";
import { toolCallPreview, type ToolPreviews } from "../../lib/display/tool_preview.ts";

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
  preview: ({ args }) => {
    const id = args()?.id;
    return typeof id === "string" ? `note ${id}` : null;
  },
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

Deno.test("a tool's preview shows its calls, and one that throws falls back to the generic form", () => {
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
  const previews: ToolPreviews = (name) =>
    [deleteTool, throwing].find((t) => t.name === name)?.preview;
  const show = (name: string, json: string, final = true) =>
    toolCallPreview(name, json, { final, previews });
  assert.equal(show("delete_note", '{"id":"n1"}'), "delete_note <- note n1");
  assert.equal(show("delete_note", '{"id":"n', false), null, "args() is null until complete");
  assert.equal(show("delete_note", "{}"), "delete_note", "null when complete: the generic form");
  assert.equal(show("t", '{"a": 1}'), 't {"a": 1}');
  assert.equal(deleteTool.create().preview, deleteTool.preview);
});

Deno.test("the built-in tools' previews: each shows its subject", () => {
  assert.deepEqual(BUILTIN_TOOLS.map((t) => t.name), BUILTIN_NAMES);
  const cases: [string, Record<string, unknown>, string][] = [
    ["read_file", { file_path: "/work/src/lib/main.ts" }, "read_file …/lib/main.ts"],
    ["write_file", { file_path: "notes.md", content: "x" }, "write_file notes.md"],
    ["edit_file", { file_path: "a/b/c.ts" }, "edit_file …/b/c.ts"],
    ["read_image", { source: "shots/ui/home.png" }, "read_image …/ui/home.png"],
    [
      "describe_image",
      { source: "shots/ui/home.png", prompt: "what?" },
      "describe_image …/ui/home.png",
    ],
    ["exec_command", { cmd: "ls -la" }, "exec_command <- $ ls -la"],
    ["exec_command", { description: "List files", cmd: "ls" }, "exec_command <- List files ($ ls)"],
    ["exec_command", { description: "List files" }, "exec_command <- List files"],
    ["input_command", { process_id: "proc-1", chars: "y\n" }, "input_command <- proc-1 << y\\n"],
    ["input_command", { process_id: "proc-1" }, "input_command <- proc-1"],
    ["kill_command", { process_id: "proc-1" }, 'kill_command {"process_id":"proc-1"}'],
    ["run_subagent", { prompt: "Summarize the README" }, "run_subagent <- Summarize the README"],
    [
      "input_subagent",
      { subagent_id: "subagent-1", prompt: "go on" },
      "input_subagent <- subagent-1 << go on",
    ],
    ["kill_subagent", { subagent_id: "s-1" }, 'kill_subagent {"subagent_id":"s-1"}'],
    ["read_file", { file_path: 7 }, 'read_file {"file_path":7}'],
    ["not_a_tool", { x: 1 }, 'not_a_tool {"x":1}'],
  ];
  for (const [name, args, want] of cases) {
    const got = toolCallPreview(name, JSON.stringify(args), {
      final: true,
      previews: builtinToolPreviews,
    });
    assert.equal(got, want, `${name} ${JSON.stringify(args)}`);
  }
});
