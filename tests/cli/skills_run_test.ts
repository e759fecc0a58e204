// A skill is invoked through `penguin run --skill`: the model is told to use
// it, sees it listed, and can read its files (read-only) from its commands.
import assert from "node:assert/strict";
import { join } from "node:path";
import { inRoot, runCli } from "../support/cli.ts";
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

    const unknown = await runCli(inRoot(sb, "run", "--skill", "nope", "-m", "x"));
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /--skill nope: agent default_agent has no such skill \(installed: notes;/,
    );
    assert.equal(server.requests.length, 0, "nothing is sent for an unknown skill");

    const r = await runCli(inRoot(sb, "run", "--skill", "notes", "-m", "write a note"));
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

/** A root with the skill "notes" installed; returns its SKILL.md path and agent_state dir. */
async function withNotesSkill(
  script: ReturnType<typeof turn.text>[],
  body: (ctx: {
    root: string;
    workspace: string;
    skillMd: string;
    agentState: string;
    server: Awaited<ReturnType<typeof startModelServer>>;
  }) => Promise<void>,
): Promise<void> {
  const server = await startModelServer({ handler: () => script.shift(), maxRequests: 20 });
  const sb = await makeRoot(server, { visible: true });
  const src = await Deno.makeTempDir({ prefix: "penguin-skill-src-" });
  try {
    await Deno.writeTextFile(join(src, "SKILL.md"), SKILL_TEXT);
    const add = await runCli(["--root", sb.root, "skills", "install", src]);
    assert.equal(add.code, 0, add.stderr);
    const agentState = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    await body({
      root: sb.root,
      workspace: sb.workspace,
      skillMd: join(agentState, "skills", "notes", "SKILL.md"),
      agentState,
      server,
    });
  } finally {
    await server.close();
    await sb.cleanup();
    await Deno.remove(src, { recursive: true });
  }
}

const SKILL_TEXT = "---\nname: notes\ndescription: Keep tidy notes\n---\nUse notes/NOTES.md.\n";

Deno.test("read_file reads an installed skill; write_file and edit_file into the skills directory are refused; the rest of agent_state stays out of reach", async () => {
  const script: ReturnType<typeof turn.text>[] = [];
  await withNotesSkill(script, async ({ root, workspace, skillMd, agentState, server }) => {
    script.push(
      turn.of(
        item.toolCall("read_file", { file_path: skillMd }, { id: "r1" }),
        item.toolCall("write_file", { file_path: skillMd, content: "pwned" }, { id: "w1" }),
        item.toolCall("edit_file", {
          file_path: skillMd,
          old_string: "tidy",
          new_string: "messy",
        }, { id: "e1" }),
        item.toolCall(
          "write_file",
          { file_path: join(agentState, "skills", "evil", "SKILL.md"), content: "x" },
          { id: "w2" },
        ),
        item.toolCall("read_file", { file_path: join(agentState, "system_config.yaml") }, {
          id: "r2",
        }),
      ),
      turn.text("done"),
    );
    const r = await runCli(["--root", root, "run", "--workspace", workspace, "-m", "read it"]);
    assert.equal(r.code, 0, r.stderr);
    const messages = (server.requests[1]!.body as {
      messages: { role: string; tool_call_id?: string; content: unknown }[];
    }).messages;
    const out = (id: string) =>
      JSON.stringify(messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content);
    assert.match(out("r1"), /Use notes\/NOTES\.md\./);
    assert.match(out("w1"), /Refusing to write .*which the file tools can read but never change/);
    assert.match(out("e1"), /Refusing to edit .*which the file tools can read but never change/);
    assert.match(out("w2"), /Refusing to write .*which the file tools can read but never change/);
    assert.match(out("r2"), /outside the workspace/);
    assert.ok(!out("r2").includes("system_prompt"), out("r2"));
    assert.equal(await Deno.readTextFile(skillMd), SKILL_TEXT);
    await assert.rejects(Deno.stat(join(agentState, "skills", "evil")), Deno.errors.NotFound);
  });
});

Deno.test("chat /skill <name> <message> sends a [use_skills] block; /skill <name> alone opens the next message; an unknown name is refused", async () => {
  const script = [turn.text("one"), turn.text("two"), turn.text("three")];
  await withNotesSkill(script, async ({ root, workspace, server }) => {
    const r = await runCli(["--root", root, "chat", "--workspace", workspace], {
      stdin:
        "/skill nope hi\n/skill notes write a note\\\n  in two lines\n/skill notes\nand another\nplain\n",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\[error\] No such skill: nope \(installed: notes; see penguin skills list\)/,
    );
    assert.match(r.stdout, /\[skill\] notes: sent with your next message/);
    assert.equal(server.requests.length, 3);
    const lastUser = (i: number) => {
      const ms = (server.requests[i]!.body as { messages: { role: string; content: unknown }[] })
        .messages.filter((m) => m.role === "user");
      return JSON.stringify(ms[ms.length - 1]!.content);
    };
    assert.equal(
      lastUser(0),
      JSON.stringify("[use_skills]\nskills: notes\n[/use_skills]\n\nwrite a note\n  in two lines"),
    );
    assert.equal(
      lastUser(1),
      JSON.stringify("[use_skills]\nskills: notes\n[/use_skills]\n\nand another"),
    );
    assert.equal(lastUser(2), JSON.stringify("plain"));
  });
});
