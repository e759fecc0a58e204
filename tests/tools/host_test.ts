// The sandboxed tool host: the session's git access reaches the file tools
// inside it, and a sandbox that cannot start fails the call closed.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import { READ_FILE_DEFINITION, WRITE_FILE_DEFINITION } from "../../lib/tools/mod.ts";
import type { ToolContext } from "../../lib/tools/context.ts";
import type { ToolEvent } from "../../lib/tools/tool.ts";
import { confinedFileTools } from "../../lib/tools/worker/mod.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";
import { selfReveal } from "../../lib/tools/host/self.ts";
import { REPO } from "../support/cli.ts";

async function outcome(events: AsyncIterable<ToolEvent>): Promise<{ text: string; ok: boolean }> {
  let text = "";
  let ok = true;
  for await (const e of events) {
    if (e.type === "delta") text += e.text;
    if (e.type === "result" && e.status === "failed") ok = false;
  }
  return { text, ok };
}

async function gitRepo(): Promise<string> {
  const base = await visibleTempDir("penguin-host-");
  const ws = join(base, "ws");
  await Deno.mkdir(join(ws, ".git", "refs", "heads"), { recursive: true });
  await Deno.mkdir(join(ws, ".git", "objects"), { recursive: true });
  await Deno.writeTextFile(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(join(ws, ".git", "config"), "[core]\n");
  return base;
}

for (const git of ["read-only", "writable"] as const) {
  Deno.test(`write_file in the tool host follows the session's git access (${git})`, async () => {
    const base = await gitRepo();
    const ws = join(base, "ws");
    const tools = confinedFileTools();
    try {
      const policy = { ...createPolicy({ workspace: ws }), git };
      const ctx: ToolContext = {
        workspace: ws,
        sessionId: "s",
        toolCallId: "c",
        signal: new AbortController().signal,
        sandbox: policy,
      };
      const write = tools.factories.write_file!(WRITE_FILE_DEFINITION);
      const ref = await outcome(
        write.run({ file_path: ".git/refs/heads/feature", content: "0".repeat(40) + "\n" }, ctx),
      );
      assert.equal(ref.ok, git === "writable", ref.text);
      const config = await outcome(
        write.run({ file_path: ".git/config", content: "[core]\nfsmonitor = evil\n" }, ctx),
      );
      assert.equal(config.ok, false, config.text);
      assert.equal(await Deno.readTextFile(join(ws, ".git", "config")), "[core]\n");
    } finally {
      await tools.dispose();
      await Deno.remove(base, { recursive: true });
    }
  });
}

Deno.test("a file tool call fails closed, saying why, when the sandbox cannot start", async () => {
  const base = await visibleTempDir("penguin-host-");
  const tools = confinedFileTools();
  try {
    await Deno.writeTextFile(join(base, "a.txt"), "hello\n");
    const policy = { ...createPolicy({ workspace: base }), bwrapPath: "/bin/false" };
    const read = tools.factories.read_file!(READ_FILE_DEFINITION);
    await assert.rejects(
      outcome(read.run({ file_path: "a.txt" }, {
        workspace: base,
        sessionId: "s",
        toolCallId: "c",
        signal: new AbortController().signal,
        sandbox: policy,
      })),
      /sandbox/i,
    );
  } finally {
    await tools.dispose();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the tool host reveals its executable, its source tree and Deno's cache", () => {
  const reveal = selfReveal({ HOME: "/home/u", DENO_DIR: "/opt/deno-cache" });
  assert.equal(reveal[0], Deno.execPath());
  assert.ok(reveal.includes(REPO.replace(/\/$/, "")), reveal.join(", "));
  assert.ok(reveal.includes("/opt/deno-cache"));
  assert.ok(selfReveal({ HOME: "/home/u" }).includes("/home/u/.cache/deno"));
});
