// penguin.jsonc widens only once trusted: real `penguin run`s against the scripted model. A file
// the model plants (in a subdirectory where a later session starts, or a copy of a trusted one)
// widens nothing, a trusted one does, a changed one is untrusted again, and the trust store in
// the data root is out of the model's reach.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { hostRun } from "../support/host_git.ts";
import { makeRoot, type Sandbox } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { sha256Hex, trustDir } from "../../lib/state/trust.ts";

type Server = Awaited<ReturnType<typeof startModelServer>> & { queue: ScriptedTurn[] };

async function scripted(): Promise<Server> {
  const queue: ScriptedTurn[] = [];
  const server = await startModelServer({ handler: () => queue.shift(), maxRequests: 100 });
  return Object.assign(server, { queue });
}

/** Run `body` with a scripted model and a data root and workspace the sandbox can see. */
async function withSetup(body: (sb: Sandbox, server: Server) => Promise<void>): Promise<void> {
  const server = await scripted();
  const sb = await makeRoot(server, { visible: true });
  try {
    await body(sb, server);
  } finally {
    await server.close();
    await sb.cleanup();
  }
}

let ids = 0;

/** Queue one exec_command turn and a closing text turn; the call's id. */
function queueExec(server: Server, cmd: string): string {
  const id = `c_${++ids}`;
  server.queue.push(
    turn.of(item.toolCall("exec_command", { description: "x", cmd, yield_time_ms: 10000 }, { id })),
    turn.text("done"),
  );
  return id;
}

/** `penguin run` in `ws` with one exec_command; its result and the command's output. */
async function runExec(sb: Sandbox, server: Server, ws: string, cmd: string) {
  const id = queueExec(server, cmd);
  const r = await runCli(["--root", sb.root, "run", "--workspace", ws, "-m", "go"]);
  assert.equal(r.code, 0, r.stderr);
  return { ...r, output: toolOutputsById(server.requests).get(id) ?? "" };
}

/** `git` on the host, with no system or user config. */
async function hostGit(cwd: string, home: string, args: string[]): Promise<string> {
  const out = await hostRun(home, cwd, "git", args);
  assert.equal(out.code, 0, out.stderr);
  return out.stdout;
}

async function gitRepo(dir: string, home: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await hostGit(dir, home, ["init", "-q", "-b", "main", "."]);
  await hostGit(dir, home, ["commit", "-q", "--allow-empty", "-m", "init"]);
}

const commit = (tag: string) =>
  `echo ${tag} > ${tag}.txt && git add ${tag}.txt && ` +
  `git -c user.name=m -c user.email=m@x commit -qm ${tag} && echo committed-${tag}`;

async function log(dir: string, home: string): Promise<string> {
  return await hostGit(dir, home, ["log", "--format=%s"]);
}

const WIDENING = '{\n  "git": "writable",\n  "network": "on"\n}\n';

Deno.test("a penguin.jsonc the model plants in a subdirectory gives a later session there neither writable git nor the network", async () => {
  await withSetup(async (sb, server) => {
    const sub = join(sb.workspace, "sub");
    await gitRepo(sub, sb.base);
    const planted = await runExec(
      sb,
      server,
      sb.workspace,
      `printf '${WIDENING.replaceAll("\n", "\\n")}' > sub/penguin.jsonc && echo planted`,
    );
    assert.match(planted.output, /planted/);
    assert.equal(await Deno.readTextFile(join(sub, "penguin.jsonc")), WIDENING);

    const later = await runExec(sb, server, sub, commit("sub1"));
    assert.doesNotMatch(later.output, /committed-sub1/);
    assert.doesNotMatch(await log(sub, sb.base), /sub1/);
    const file = join(sub, "penguin.jsonc");
    assert.ok(
      later.stderr.includes(
        `${file}: line 2, column 10: "git": "writable" is ignored (commands may commit`,
      ),
      later.stderr,
    );
    assert.ok(
      later.stderr.includes(`${file}: line 3, column 14: "network": "on" is ignored`),
      later.stderr,
    );
    assert.match(later.stderr, /not trusted.*`penguin trust .*sub\/penguin\.jsonc` reviews it/);
  });
});

Deno.test("a trusted penguin.jsonc widens; a copy elsewhere, a file above the workspace and a changed file do not", async () => {
  await withSetup(async (sb, server) => {
    const ws = sb.workspace;
    const sub = join(ws, "sub");
    await gitRepo(ws, sb.base);
    await gitRepo(sub, sb.base);
    await Deno.writeTextFile(join(ws, ".gitignore"), "sub/\n");
    const policy = '{\n  // the user\'s own\n  "git": "writable"\n}\n';
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), policy);

    const trusted = await runCli(["--root", sb.root, "trust", ws]);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.match(trusted.stdout, /line 3, column 10: "git": "writable": commands may commit/);
    assert.ok(trusted.stdout.includes(await sha256Hex(policy)), trusted.stdout);

    // Trusted: commands may commit. The model copies the file into the subdirectory.
    const first = await runExec(sb, server, ws, `${commit("top1")} && cp penguin.jsonc sub/`);
    assert.match(first.output, /committed-top1/);
    assert.match(await log(ws, sb.base), /^top1$/m);
    assert.match(first.stderr, /penguin\.jsonc \(trusted\): commands may commit/);
    assert.equal(await Deno.readTextFile(join(sub, "penguin.jsonc")), policy);

    // The same content at another path is not trusted.
    const copy = await runExec(sb, server, sub, commit("sub1"));
    assert.doesNotMatch(copy.output, /committed-sub1/);
    assert.doesNotMatch(await log(sub, sb.base), /sub1/);
    assert.match(
      copy.stderr,
      /sub\/penguin\.jsonc: line 3, column 10: "git": "writable" is ignored/,
    );

    // Nor does a trusted file above the workspace apply to it.
    await Deno.remove(join(sub, "penguin.jsonc"));
    const below = await runExec(sb, server, sub, commit("sub2"));
    assert.doesNotMatch(below.output, /committed-sub2/);
    assert.doesNotMatch(await log(sub, sb.base), /sub2/);
    assert.doesNotMatch(below.stderr, /trusted/);

    // A change makes it untrusted again, and penguin says so.
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), policy + "// edited\n");
    const changed = await runExec(sb, server, ws, commit("top2"));
    assert.doesNotMatch(changed.output, /committed-top2/);
    assert.doesNotMatch(await log(ws, sb.base), /top2/);
    assert.match(
      changed.stderr,
      /penguin\.jsonc: penguin\.jsonc changed since you trusted it; run penguin trust to review/,
    );
    const list = await runCli(["--root", sb.root, "trust", "--list"]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^changed +\\S+ +${join(ws, "penguin.jsonc")}$`, "m"));

    // Revoked, the original content is no longer trusted either.
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), policy);
    const revoked = await runCli(["--root", sb.root, "trust", "--revoke", ws]);
    assert.equal(revoked.code, 0, revoked.stderr);
    const after = await runExec(sb, server, ws, commit("top3"));
    assert.doesNotMatch(after.output, /committed-top3/);
    assert.match(after.stderr, /"git": "writable" is ignored/);
    const none = await runCli(["--root", sb.root, "trust", "--list"]);
    assert.match(none.stdout, /No penguin\.jsonc is trusted/);
  });
});

Deno.test("the model's commands cannot see or write the trust store, so they cannot trust a file", async () => {
  await withSetup(async (sb, server) => {
    const ws = sb.workspace;
    await gitRepo(ws, sb.base);
    const policy = '{ "git": "writable" }\n';
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), policy);
    // Something else is trusted, so the store exists on the host.
    await Deno.mkdir(join(sb.base, "other"));
    await Deno.writeTextFile(join(sb.base, "other", "penguin.jsonc"), "{}\n");
    assert.equal((await runCli(["--root", sb.root, "trust", join(sb.base, "other")])).code, 0);
    const store = trustDir(sb.root);
    const before = (await Array.fromAsync(Deno.readDir(store))).map((e) => e.name).sort();

    // The record `penguin trust` would write for this file, forged by the model.
    const path = join(ws, "penguin.jsonc");
    const name = `${await sha256Hex(path)}.json`;
    const record = JSON.stringify({
      path,
      sha256: await sha256Hex(policy),
      trusted_at: new Date().toISOString(),
    });
    const forge = await runExec(
      sb,
      server,
      ws,
      `ls -A ${store} 2>&1; echo ---; mkdir -p ${store} 2>&1; ` +
        `echo '${btoa(record)}' | base64 -d > ${store}/${name} 2>&1; echo forged=$?; ${
          commit("m1")
        }`,
    );
    assert.doesNotMatch(forge.output, new RegExp(before[0]!.slice(0, 16)), "the store is hidden");
    assert.doesNotMatch(forge.output, /committed-m1/);
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(store))).map((e) => e.name).sort(),
      before,
      "nothing was written to the host's store",
    );

    const next = await runExec(sb, server, ws, commit("m2"));
    assert.doesNotMatch(next.output, /committed-m2/);
    assert.doesNotMatch(await log(ws, sb.base), /m1|m2/);
    assert.match(next.stderr, /"git": "writable" is ignored/);
  });
});

Deno.test("penguin trust refuses what penguin would not read as a policy", async () => {
  await withSetup(async (sb) => {
    const ws = sb.workspace;
    const trust = (...args: string[]) => runCli(["--root", sb.root, "trust", ...args]);
    const missing = await trust(ws);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /there is no ".*\/ws\/penguin\.jsonc"/);
    await Deno.writeTextFile(join(ws, "other.jsonc"), "{}");
    const other = await trust(join(ws, "other.jsonc"));
    assert.equal(other.code, 2);
    assert.match(other.stderr, /neither a workspace directory nor its penguin\.jsonc/);
    await Deno.symlink("other.jsonc", join(ws, "penguin.jsonc"));
    const link = await trust(ws);
    assert.equal(link.code, 2);
    assert.match(link.stderr, /is a symbolic link/);
    await Deno.remove(join(ws, "penguin.jsonc"));
    await Deno.writeTextFile(join(ws, "penguin.jsonc"), '{\n  "git": "rw"\n}');
    const bad = await trust(ws);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /line 2, column 10: git: expected "read-only" or "writable"/);
    const revoke = await trust("--revoke", ws);
    assert.equal(revoke.code, 1);
    assert.match(revoke.stderr, /is not trusted/);
    await assert.rejects(Deno.stat(trustDir(sb.root)), Deno.errors.NotFound);
  });
});
