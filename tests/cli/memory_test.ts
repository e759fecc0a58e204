// Memory that works: a scripted session saves memories with write_file and
// with a shell command, into the user scope and the workspace scope whose
// paths the prompt gives, and the next session's request carries both
// indexes. The rest of agent_state stays out of reach.
import assert from "node:assert/strict";
import { join } from "node:path";
import { inRoot, runCli } from "../support/cli.ts";
import { item, turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";

type Body = { messages: { role: string; content: unknown }[] };

function systemOf(body: unknown): string {
  const sys = (body as Body).messages.find((m) => m.role === "system")?.content;
  return typeof sys === "string" ? sys : JSON.stringify(sys);
}

function agentState(root: string): string {
  return join(root, "default_project", "agents", "default_agent", "agent_state");
}

Deno.test("a memory saved with write_file and one saved by a command are in the next session's prompt", async () => {
  const queue = [] as ReturnType<typeof turn.text>[];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 20 }, async (sb, server) => {
    const state = agentState(sb.root);
    const user = join(state, "memory", "user");
    const shared = join(state, "..", "shared_env");
    // The first session learns the workspace memory directory from its prompt.
    queue.push(turn.text("looked"));
    const first = await runCli(inRoot(sb, "run", "-m", "hi"));
    assert.equal(first.code, 0, first.stderr);
    const prompt1 = systemOf(server.requests[0]!.body);
    assert.ok(prompt1.includes("(the index is empty — nothing has been saved yet)"));
    const wsDir = /lives in (\S+), organised/.exec(prompt1)?.[1];
    assert.ok(wsDir, "the prompt names the workspace memory directory");
    assert.ok(wsDir.startsWith(join(state, "memory") + "/"));
    assert.equal(await Deno.readTextFile(join(wsDir, ".workspace")), `${sb.workspace}\n`);

    const topic =
      "---\nname: tabs\ndescription: indent style\nupdated_at: 2026-12-02\n---\nTabs.\n";
    queue.push(
      turn.of(
        item.toolCall("write_file", { file_path: join(user, "tabs.md"), content: topic }, {
          id: "w1",
        }),
        item.toolCall("write_file", {
          file_path: join(user, "MEMORY.md"),
          content: "- tabs.md: the user indents with tabs\n",
        }, { id: "w2" }),
        item.toolCall("exec_command", {
          cmd: `printf -- '- build.md: build with make -j4\\n' >> '${wsDir}/MEMORY.md' && ` +
            `printf 'make -j4\\n' > '${wsDir}/build.md' && ` +
            `mkdir -p '${shared}/tool' && echo cached > '${shared}/tool/c' && echo saved`,
        }, { id: "c1" }),
      ),
      turn.text("saved"),
    );
    const save = await runCli(inRoot(sb, "run", "-m", "save"));
    assert.equal(save.code, 0, save.stderr);
    const outputs = JSON.stringify(server.requests[2]!.body);
    assert.match(outputs, /saved/);
    assert.equal(await Deno.readTextFile(join(user, "tabs.md")), topic);
    assert.equal(await Deno.readTextFile(join(wsDir, "build.md")), "make -j4\n");
    assert.equal(
      await Deno.readTextFile(join(shared, "tool", "c")),
      "cached\n",
      "shared_env is real",
    );

    queue.push(turn.text("remembered"));
    const next = await runCli(inRoot(sb, "run", "-m", "go"));
    assert.equal(next.code, 0, next.stderr);
    const prompt3 = systemOf(server.requests[3]!.body);
    assert.ok(prompt3.includes("- tabs.md: the user indents with tabs"), prompt3);
    assert.ok(prompt3.includes("- build.md: build with make -j4"), prompt3);
  }, { visible: true });
});

Deno.test("memory follows the sandbox mode: written by the file tools with --sandbox off, read-only with --sandbox read-only", async () => {
  const queue = [] as ReturnType<typeof turn.text>[];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 20 }, async (sb, server) => {
    const user = join(agentState(sb.root), "memory", "user");
    const run = (mode: string) => runCli(inRoot(sb, "run", "--sandbox", mode, "-m", "x"));
    queue.push(
      turn.of(item.toolCall("write_file", {
        file_path: join(user, "MEMORY.md"),
        content: "- off.md: written with the sandbox off\n",
      }, { id: "w_off" })),
      turn.text("ok"),
    );
    const off = await run("off");
    assert.equal(off.code, 0, off.stderr);
    assert.equal(
      await Deno.readTextFile(join(user, "MEMORY.md")),
      "- off.md: written with the sandbox off\n",
    );
    queue.push(
      turn.of(
        item.toolCall("read_file", { file_path: join(user, "MEMORY.md") }, { id: "r_ro" }),
        item.toolCall("exec_command", { cmd: `echo x >> '${user}/MEMORY.md'` }, { id: "c_ro" }),
      ),
      turn.text("ok"),
    );
    const ro = await run("read-only");
    assert.equal(ro.code, 0, ro.stderr);
    const body = JSON.stringify(server.requests.at(-1)!.body);
    assert.ok(systemOf(server.requests.at(-2)!.body).includes("- off.md: written with"));
    assert.match(body, /written with the sandbox off/, "read_file reads memory");
    assert.match(body, /Read-only file system/, "commands cannot write it");
    assert.equal(
      await Deno.readTextFile(join(user, "MEMORY.md")),
      "- off.md: written with the sandbox off\n",
    );
  }, { visible: true });
});

Deno.test("a long index is injected cut to its first 200 lines, with a note saying so", async () => {
  await withModelRoot({ handler: () => turn.text("ok"), maxRequests: 5 }, async (sb, server) => {
    const user = join(agentState(sb.root), "memory", "user");
    await Deno.mkdir(user, { recursive: true });
    const lines = Array.from({ length: 250 }, (_, i) => `- t${i + 1}.md: topic ${i + 1}`);
    await Deno.writeTextFile(join(user, "MEMORY.md"), lines.join("\n") + "\n");
    const r = await runCli(inRoot(sb, "run", "-m", "x"));
    assert.equal(r.code, 0, r.stderr);
    const prompt = systemOf(server.requests[0]!.body);
    assert.ok(prompt.includes("- t200.md: topic 200\n(index truncated: showing 200 of 250 lines"));
    assert.ok(!prompt.includes("- t201.md"));
  }, { visible: true });
});
