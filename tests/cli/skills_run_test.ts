// A skill is invoked through `penguin run --skill`: the model is told to use
// it, sees it listed, and can read its files (read-only) from its commands.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";

Deno.test("run --skill sends a [use_skills] block, and the model's commands can read but not change the skill", async () => {
  const queue = [] as ReturnType<typeof turn.text>[];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 10 });
  const sb = await makeRoot(server, { visible: true });
  const src = await Deno.makeTempDir({ prefix: "penguin-skill-src-" });
  try {
    await Deno.writeTextFile(
      join(src, "SKILL.md"),
      "---\nname: notes\ndescription: Keep tidy notes\n---\nAlways write notes in notes/NOTES.md.\n",
    );
    const add = await runCli(["--root", sb.root, "skills", "install", src]);
    assert.equal(add.code, 0, add.stderr);
    const skillsDir = join(
      sb.root,
      "default_project",
      "agents",
      "default_agent",
      "agent_state",
      "skills",
    );
    const skillMd = join(skillsDir, "notes", "SKILL.md");
    queue.push(
      turn.of(item.toolCall("exec_command", { cmd: `cat ${skillMd}` }, { id: "c1" })),
      turn.of(item.toolCall("exec_command", { cmd: `echo changed > ${skillMd}` }, { id: "c2" })),
      turn.text("done"),
    );

    const unknown = await runCli([
      "--root",
      sb.root,
      "run",
      "--workspace",
      sb.workspace,
      "--skill",
      "nope",
      "-m",
      "x",
    ]);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /--skill nope: agent default_agent has no such skill \(installed: notes;/,
    );
    assert.equal(server.requests.length, 0, "nothing is sent for an unknown skill");

    const r = await runCli([
      "--root",
      sb.root,
      "run",
      "--workspace",
      sb.workspace,
      "--skill",
      "notes",
      "-m",
      "write a note",
    ]);
    assert.equal(r.code, 0, r.stderr);
    const first = server.requests[0]!.body as { messages: { role: string; content: unknown }[] };
    const system = JSON.stringify(first.messages.find((m) => m.role === "system")?.content);
    assert.ok(system.includes("- `notes` — Keep tidy notes"), "the skill is listed");
    assert.ok(system.includes(skillsDir), "the prompt says where skills are");
    const user = first.messages.find((m) => m.role === "user")!;
    assert.match(
      JSON.stringify(user.content),
      /^"\[use_skills\]\\nskills: notes\\n\[\/use_skills\]\\n\\nwrite a note"$/,
    );
    const outputs = JSON.stringify(server.requests[2]!.body);
    assert.match(outputs, /Always write notes in notes\/NOTES\.md\./, "the command read the skill");
    assert.match(outputs, /Read-only file system|Permission denied/, "and could not change it");
    assert.equal(
      await Deno.readTextFile(skillMd),
      "---\nname: notes\ndescription: Keep tidy notes\n---\nAlways write notes in notes/NOTES.md.\n",
    );
  } finally {
    await server.close();
    await sb.cleanup();
    await Deno.remove(src, { recursive: true });
  }
});
