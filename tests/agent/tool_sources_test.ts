import assert from "node:assert/strict";
import { z } from "zod";
import { createAgent } from "../../lib/agent/mod.ts";
import { builtinToolSource, openToolset } from "../../lib/agent/toolset.ts";
import { createSpawner } from "../../lib/agent/subagents/spawner.ts";
import type { Session } from "../../lib/agent/session.ts";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import type { SessionMeta } from "../../lib/protocol/types.ts";
import {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolSource,
  toolSource,
  type ToolSourceContext,
} from "../../lib/tools/mod.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, makeRoot } from "./_support.ts";

function simple(name: string, extra: Partial<Tool["definition"]> = {}): Tool<ToolContext> {
  return {
    definition: {
      name,
      description: `the ${name} tool`,
      parameters: { type: "object", properties: {} },
      permission: "r",
      timeoutMs: 1000,
      maxOutputLength: 1000,
      callDescription: false,
      ...extra,
    },
    async *run() {
      yield { type: "delta", text: name };
    },
  };
}

function context(warnings: string[], vision = false): ToolSourceContext {
  return {
    sessionId: "20260101T000000-aaaaaaaa",
    workspace: "/tmp",
    scratchpad: "/tmp",
    sandbox: createPolicy({ workspace: "/tmp" }),
    vision,
    warn: (line) => warnings.push(line),
  };
}

Deno.test("tools of every source are kept in source order; invalid and taken names are skipped with a warning", async () => {
  const warnings: string[] = [];
  const toolset = await openToolset([
    toolSource("first", [simple("lookup"), simple("bad name!"), simple("")]),
    toolSource("second", [simple("lookup"), simple("mcp__docs__search")]),
  ], context(warnings));
  assert.deepEqual(toolset.specs.map((s) => s.name), ["lookup", "mcp__docs__search"]);
  assert.equal(toolset.tools.get("lookup")!.definition.description, "the lookup tool");
  assert.deepEqual(warnings, [
    '[penguin] tool "bad name!" of source "first" is skipped: a tool name is 1 to 128 letters, digits, _ or -.',
    '[penguin] tool "" of source "first" is skipped: a tool name is 1 to 128 letters, digits, _ or -.',
    '[penguin] tool "lookup" of source "second" is skipped: an earlier source already offers a tool of that name.',
  ]);
  await toolset.dispose();
});

Deno.test("a source that fails to open is skipped with one warning; forModel filters by vision", async () => {
  const warnings: string[] = [];
  const broken: ToolSource = {
    name: "broken",
    open: () => Promise.reject(new Error("connection refused")),
  };
  const sources = [
    broken,
    toolSource("models", [
      simple("see", { forModel: "vision" }),
      simple("describe", { forModel: "text-only" }),
    ]),
  ];
  const text = await openToolset(sources, context(warnings, false));
  assert.deepEqual(text.specs.map((s) => s.name), ["describe"]);
  assert.deepEqual(warnings, [
    '[penguin] tool source "broken" could not be opened (connection refused); its tools are skipped.',
  ]);
  const vision = await openToolset(sources, context([], true));
  assert.deepEqual(vision.specs.map((s) => s.name), ["see"]);
});

Deno.test("every opened source is closed once when the tool set is disposed", async () => {
  const events: string[] = [];
  const source: ToolSource = {
    name: "counted",
    open: (ctx) => {
      events.push(`open ${ctx.sessionId}`);
      return { tools: [simple("counted")], close: () => void events.push("close") };
    },
  };
  const toolset = await openToolset(
    [builtinToolSource({ confineFileTools: false }), source],
    context([]),
  );
  assert.equal(toolset.specs[0]!.name, "read_file", "the built-ins come first");
  assert.equal(toolset.specs.at(-1)!.name, "counted");
  await toolset.dispose();
  assert.deepEqual(events, ["open 20260101T000000-aaaaaaaa", "close"]);
});

const noteTool = defineTool({
  name: "note",
  description: "Read a note, or erase it.",
  args: z.object({ erase: z.boolean().optional() }),
  permission: (args) => (args.erase ? "rw" : "r"),
  async *run(args) {
    yield { type: "delta", text: args.erase ? "erased" : "a note" };
  },
});

Deno.test("read-only approval runs a call its arguments make read-only, and asks for the rest", async () => {
  const server = await startModelServer({
    turns: [
      turn.of(
        { kind: "tool_call", name: "note", arguments: {} },
        { kind: "tool_call", name: "note", arguments: { erase: true } },
      ),
      turn.text("done"),
    ],
  });
  const sb = await makeRoot(server);
  const closed: string[] = [];
  try {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({
      workspaceDir: sb.workspace,
      tools: [{
        name: "notes",
        open: () => ({ tools: [noteTool.create()], close: () => void closed.push("notes") }),
      }],
    });
    assert.equal(session.toolPermission("note", { erase: false }), "r");
    assert.equal(session.toolPermission("note", { erase: true }), "rw");
    await collect(session.run("notes", { approve: "read-only" }));
    await session.dispose();
    assert.deepEqual(closed, ["notes"]);
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const decisions = records.filter((m) => m.payload.type === "approval_decision")
      .map((m) => (m.payload as unknown as { decision: string }).decision);
    assert.deepEqual(decisions, ["allow", "deny"]);
  } finally {
    await server.close();
    await sb.cleanup();
  }
});

Deno.test("a subagent is created with its parent's tool sources", async () => {
  const source = toolSource("shared", [simple("shared_tool")]);
  let given: readonly ToolSource[] | undefined;
  const spawner = createSpawner({
    parent: {
      session_id: "20260101T000000-aaaaaaaa",
      workspace: "/tmp",
      provider: "custom",
      model_id: "m",
    } as SessionMeta,
    ref: { root: "/tmp/none", projectId: "default_project", agentId: "default_agent" },
    depth: 0,
    options: { tools: [source] },
    create: (_agentId, opts) => {
      given = opts.tools;
      return Promise.resolve({} as Session);
    },
    resume: () => Promise.reject(new Error("not used")),
  });
  await spawner.spawn({ toolCallId: "call_1" });
  assert.deepEqual(given, [source]);
});
