// The memory directories are the only writable part of agent_state, and no
// path through them reaches the agent's secrets or configuration: symbolic
// links (relative and absolute), `..`, the parent directory, hard links, and
// a link penguin itself would follow when it next writes the marker or reads
// the index. Everything runs through `penguin run` against real files.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { setVault } from "../support/secrets.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { withModelRoot } from "../support/roots.ts";

const VAULT_MARK = "vault-comment-marker-9182";
const CFG_MARK = "cfg-marker-7731";
const AGENTS_MARK = "agents-marker-5150";

type Server = Awaited<ReturnType<typeof startModelServer>>;

function systemOf(body: unknown): string {
  const msgs = (body as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(msgs.find((m) => m.role === "system")?.content);
}

const exec = (cmd: string, id: string): ScriptedTurn =>
  turn.of(item.toolCall("exec_command", { cmd }, { id }));
const tool = (name: string, args: Record<string, unknown>, id: string): ScriptedTurn =>
  turn.of(item.toolCall(name, args, { id }));

Deno.test("no path through the memory directories reads or writes the vault, system_config.yaml, AGENTS.md or skills", async () => {
  const queue: ScriptedTurn[] = [turn.text("hello")];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 40 }, async (sb, server) => {
    const first = await runCli(inRoot(sb, "run", "-m", "hi"));
    assert.equal(first.code, 0, first.stderr);
    const wsDir = /lives in (\S+), organised/.exec(systemOf(server.requests[0]!.body))![1]!;
    const state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    const user = join(state, "memory", "user");
    const vault = join(state, ".vault.toml");
    const cfg = join(state, "system_config.yaml");
    const agentsMd = join(state, "AGENTS.md");
    await Deno.writeTextFile(vault, `# ${VAULT_MARK}\nSECRET_TOKEN = "tok-1"\n`, { mode: 0o600 });
    await Deno.writeTextFile(cfg, `\n# ${CFG_MARK}\n`, { append: true });
    await Deno.writeTextFile(agentsMd, `${AGENTS_MARK}\n`);
    await Deno.mkdir(join(state, "skills", "s1"), { recursive: true });
    await Deno.writeTextFile(join(state, "skills", "s1", "SKILL.md"), "skill\n");
    const before = {
      vault: await Deno.readTextFile(vault),
      cfg: await Deno.readTextFile(cfg),
      agents: await Deno.readTextFile(agentsMd),
    };

    queue.push(
      // Links from inside the memory directory to the secrets, relative and absolute.
      exec(
        `cd '${user}' && ln -s ../../.vault.toml v_rel.md && ln -s '${vault}' v_abs.md && ` +
          `ln -s ../../system_config.yaml c_rel.md && ln -s '${cfg}' c_abs.md; ` +
          `cat v_rel.md v_abs.md c_rel.md c_abs.md ../../AGENTS.md; ls -a .. ../..; echo end`,
        "links",
      ),
      // Writes next to and above the memory directory, and a hard link.
      exec(
        `echo x > '${user}/../pwned'; echo x >> '${cfg}'; echo x >> '${agentsMd}'; ` +
          `echo x > '${state}/skills/s1/SKILL.md'; mkdir '${state}/skills/evil'; ` +
          `ln '${vault}' '${user}/hard.md'; echo end`,
        "writes",
      ),
      tool("read_file", { file_path: join(user, "v_rel.md") }, "r_rel"),
      tool("read_file", { file_path: join(user, "c_abs.md") }, "r_abs"),
      tool("read_file", { file_path: join(user, "..", "..", "system_config.yaml") }, "r_dots"),
      tool("read_file", { file_path: agentsMd }, "r_agents"),
      tool("write_file", { file_path: join(user, "..", "pwned.md"), content: "x" }, "w_parent"),
      tool("write_file", { file_path: join(user, "c_rel.md"), content: "x" }, "w_link"),
      tool("write_file", { file_path: join(user, "..", "..", ".vault.toml"), content: "x" }, "w_v"),
      tool("edit_file", {
        file_path: join(wsDir, "..", "..", "system_config.yaml"),
        old_string: CFG_MARK,
        new_string: "y",
      }, "e_cfg"),
      // Links penguin itself would meet: the index it injects, the marker it writes.
      exec(
        `ln -sf '${vault}' '${user}/MEMORY.md' && ln -sf '${cfg}' '${wsDir}/.workspace' && ` +
          `ln -sf ../../system_config.yaml '${wsDir}/MEMORY.md' && echo planted`,
        "plant",
      ),
      turn.text("done"),
    );
    const attack = await runCli(inRoot(sb, "run", "-m", "attack"));
    assert.equal(attack.code, 0, attack.stderr);
    const out = toolOutputsById(server.requests);
    for (const [id, text] of out) {
      for (const mark of [VAULT_MARK, CFG_MARK, AGENTS_MARK]) {
        assert.ok(!text.includes(mark), `${id} leaked ${mark}: ${text}`);
      }
    }
    assert.match(out.get("links")!, /No such file or directory/);
    assert.match(out.get("writes")!, /Read-only file system|No such file or directory/);
    for (
      const id of ["r_rel", "r_abs", "r_dots", "r_agents", "w_parent", "w_link", "w_v", "e_cfg"]
    ) {
      assert.match(out.get(id)!, /outside the workspace|Refusing|No such file|not exist/, id);
    }
    assert.match(out.get("plant")!, /planted/);
    assert.deepEqual(
      {
        vault: await Deno.readTextFile(vault),
        cfg: await Deno.readTextFile(cfg),
        agents: await Deno.readTextFile(agentsMd),
      },
      before,
    );
    assert.equal(await Deno.readTextFile(join(state, "skills", "s1", "SKILL.md")), "skill\n");
    for (const gone of ["memory/pwned", "memory/pwned.md", "skills/evil", "memory/user/hard.md"]) {
      await assert.rejects(Deno.lstat(join(state, gone)), Deno.errors.NotFound, gone);
    }

    // The next session neither injects the linked files nor writes through the marker link.
    queue.push(turn.text("next"));
    const next = await runCli(inRoot(sb, "run", "-m", "n"));
    assert.equal(next.code, 0, next.stderr);
    const prompt = systemOf(server.requests.at(-1)!.body);
    for (const mark of [VAULT_MARK, CFG_MARK]) assert.ok(!prompt.includes(mark), mark);
    assert.ok(prompt.includes("(the index is empty — nothing has been saved yet)"));
    assert.equal(
      await Deno.readTextFile(cfg),
      before.cfg,
      "the marker link was not written through",
    );
    const marker = await Deno.lstat(join(wsDir, ".workspace"));
    assert.ok(marker.isFile && !marker.isSymlink);
    assert.equal(await Deno.readTextFile(join(wsDir, ".workspace")), `${sb.workspace}\n`);
  }, { visible: true });
});

Deno.test("a link to the vault swapped in and out of the memory directory by a running command never lets a read through", async () => {
  let state = "";
  await withModelRoot({
    maxRequests: 10,
    handler: (req, i) => {
      const user = join(state, "memory", "user");
      if (i === 0) {
        return turn.of(item.toolCall("exec_command", {
          cmd: `cd '${user}' && while :; do printf 'plain\\n' > t1 && mv -f t1 x.md; ` +
            `ln -sf '${join(state, ".vault.toml")}' t2 && mv -f t2 x.md; ` +
            `ln -sf ../../.vault.toml t3 && mv -f t3 x.md; done`,
          run_in_background: true,
        }, { id: "race" }));
      }
      if (i === 1) {
        const reads = Array.from(
          { length: 12 },
          (_, n) =>
            n % 2 === 0
              ? item.toolCall("read_file", { file_path: join(user, "x.md") }, { id: `r${n}` })
              : item.toolCall("exec_command", { cmd: `cat '${user}/x.md'` }, { id: `r${n}` }),
        );
        return turn.of(...reads);
      }
      if (i === 2) {
        const id = /process_id (proc-[\w-]+)/.exec(JSON.stringify(req.body))?.[1] ?? "none";
        return turn.of(item.toolCall("kill_command", { process_id: id }, { id: "kill" }));
      }
      return turn.text("done");
    },
  }, async (sb, server) => {
    state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    await Deno.mkdir(state, { recursive: true });
    await Deno.writeTextFile(join(state, ".vault.toml"), `# ${VAULT_MARK}\nK = "v"\n`);
    const r = await runCli(inRoot(sb, "run", "-m", "race"));
    assert.equal(r.code, 0, r.stderr);
    const out = toolOutputsById(server.requests);
    assert.equal(out.size, 14, [...out.keys()].join(","));
    for (const [id, text] of out) assert.ok(!text.includes(VAULT_MARK), `${id} leaked: ${text}`);
    assert.doesNotMatch(out.get("kill")!, /no such|unknown|not found/i, "the racer was stopped");
  }, { visible: true });
});

Deno.test("agent snapshot of a memory directory where the model planted a terabyte sparse file and a FIFO fails fast, then packs", async () => {
  const queue: ScriptedTurn[] = [];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 10 }, async (sb, server) => {
    const state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    const user = join(state, "memory", "user");
    queue.push(
      exec(
        `cd '${user}' && truncate -s 1T big.md && mkfifo pipe.md && echo note > note.md && ` +
          `ls -s big.md && echo planted`,
        "plant",
      ),
      turn.text("done"),
    );
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "plant"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(toolOutputsById(server.requests).get("plant")!, /planted/);
    assert.equal((await Deno.lstat(join(user, "big.md"))).size, 2 ** 40);

    // Read whole, the sparse file would take a terabyte of penguin's memory.
    const big = await runCli(["--root", sb.root, "agent", "snapshot"]);
    assert.equal(big.code, 1, big.stderr);
    assert.match(big.stderr, /Cannot snapshot .*more than 20000 files or 512 MiB/);

    // Without it, the snapshot packs; the FIFO is left out (and reported), never opened.
    await Deno.remove(join(user, "big.md"));
    const done = await runCli(["--root", sb.root, "agent", "snapshot"]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout + done.stderr, /memory\/user\/pipe\.md/);
  }, { visible: true });
});

Deno.test("a vault value the model saved in its memory index reaches the next session's prompt masked", async () => {
  const VALUE = "vault-value-73a91c";
  const queue: ScriptedTurn[] = [
    exec(`printf 'token: %s\\n' "$MEM_TOKEN" > "$PENGUIN_MEM/MEMORY.md" && echo saved`, "save"),
    turn.text("saved"),
  ];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 10 }, async (sb, server) => {
    const state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    await setVault(sb.root, "MEM_TOKEN", VALUE);
    // The command finds the memory directory through a variable the test sets in the vault too.
    await setVault(sb.root, "PENGUIN_MEM", join(state, "memory", "user"));
    const first = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "s"]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(toolOutputsById(server.requests).get("save")!, /saved/);
    assert.ok(
      (await Deno.readTextFile(join(state, "memory", "user", "MEMORY.md"))).includes(VALUE),
    );

    queue.push(turn.text("next"));
    const next = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "n"]);
    assert.equal(next.code, 0, next.stderr);
    const prompt = systemOf(server.requests.at(-1)!.body);
    assert.ok(!prompt.includes(VALUE), "the vault value reached the request unmasked");
    assert.ok(prompt.includes("token: [redacted:vault:MEM_TOKEN]"), prompt);
    const traces = join(sb.root, "default_project", "agents", "default_agent", "traces");
    for await (const d of Deno.readDir(traces)) {
      for await (const f of Deno.readDir(join(traces, d.name))) {
        const text = await Deno.readTextFile(join(traces, d.name, f.name));
        assert.ok(!text.includes(VALUE), `${f.name} recorded the vault value`);
      }
    }
  }, { visible: true });
});

Deno.test("the revealed directories themselves cannot be renamed or replaced by a link for the next session to follow", async () => {
  const queue: ScriptedTurn[] = [];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 10 }, async (sb, server) => {
    const agent = join(sb.root, "default_project", "agents", "default_agent");
    const user = join(agent, "agent_state", "memory", "user");
    const shared = join(agent, "shared_env");
    const dirs = [user, shared];
    queue.push(
      exec(
        dirs.map((d) => `mv '${d}' '${d}.old'; rmdir '${d}'; ln -sfn / '${d}'`).join("; ") +
          `; mv "$PWD" "$PWD.old"; echo tried`,
        "swap",
      ),
      turn.text("done"),
    );
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "swap"]);
    assert.equal(r.code, 0, r.stderr);
    const out = toolOutputsById(server.requests).get("swap")!;
    assert.match(out, /tried/);
    assert.match(out, /Read-only file system|Device or resource busy/);
    for (const d of dirs) {
      const info = await Deno.lstat(d);
      assert.ok(info.isDirectory && !info.isSymlink, `${d} was replaced`);
      await assert.rejects(Deno.lstat(`${d}.old`), Deno.errors.NotFound);
    }
    assert.ok((await Deno.lstat(sb.workspace)).isDirectory);
  }, { visible: true });
});
