// After a disk-full stop (a real full tmpfs under the traces), the next
// writer of that trace cuts the torn record off and says so, so `penguin
// trace validate` passes after a successful resume; and a `trace export -o`
// onto a full disk leaves no partial file. Needs root (mount); skipped otherwise.
import assert from "node:assert/strict";
import { join } from "node:path";
import { listSessionFiles } from "../../lib/trace/paths.ts";
import { type ModelServerOptions, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, mcpAddArgs, runCli, runCliOk } from "../support/cli.ts";
import { makeRoot, type Sandbox, tracesDir } from "../agent/_support.ts";
import { canMount, fillDisk, mountTmpfs, umount } from "../support/tmpfs.ts";

const MOUNT = await canMount();
if (!MOUNT) console.error("disk_full_heal_test: skipped, mounting a tmpfs needs root on Linux");

/** The trace files under `dir` whose text holds `needle`. */
async function tracesHolding(dir: string, needle: string): Promise<string[]> {
  const out: string[] = [];
  for await (const day of Deno.readDir(dir)) {
    if (!day.isDirectory || day.name.startsWith(".")) continue;
    for await (const f of Deno.readDir(join(dir, day.name))) {
      const p = join(dir, day.name, f.name);
      if ((await Deno.readTextFile(p)).includes(needle)) out.push(p);
    }
  }
  return out;
}

/** Resolve once a trace under `dir` holds `needle`: looked at again on every file event. */
async function untilTraceHolds(dir: string, needle: string): Promise<void> {
  using watcher = Deno.watchFs(dir, { recursive: true });
  if ((await tracesHolding(dir, needle)).length > 0) return;
  for await (const _ of watcher) {
    if ((await tracesHolding(dir, needle)).length > 0) return;
  }
}

/**
 * The definition of a test that needs a tmpfs: `body` runs with a data root for a scripted
 * server of `opts` and the mount point `mountPoint` names in it; the mount point is unmounted
 * (once `body` mounted it), the server closed and the root removed afterwards.
 */
function mountTest(
  name: string,
  opts: ModelServerOptions,
  mountPoint: (sb: Sandbox) => string,
  body: (sb: Sandbox, dir: string) => Promise<void>,
): Deno.TestDefinition {
  return {
    name,
    ignore: !MOUNT,
    async fn() {
      const server = await startModelServer(opts);
      const sb = await makeRoot(server);
      const dir = mountPoint(sb);
      try {
        await body(sb, dir);
      } finally {
        await umount(dir);
        await server.close();
        await sb.cleanup();
      }
    },
  };
}

/** The traces directory of the first test's root, which its scripted server fills. */
const traces = { dir: "" };
Deno.test(mountTest(
  "after a disk-full stop, the resumed run cuts the torn record off and trace validate passes",
  {
    handler: async (req, index) => {
      if (index === 0) {
        // request_begin is on disk before the request is sent; the disk fills while the model
        // answers, so the tool call record (pages long) lands only in part.
        await untilTraceHolds(traces.dir, '"type":"request_begin"');
        await fillDisk(join(traces.dir, "filler"));
        return turn.toolCall("exec_command", {
          cmd: "true",
          description: `a long description ${"x".repeat(16 * 1024)}`,
        });
      }
      return turn.text(`resumed after ${req.index} requests`);
    },
  },
  (sb) => (traces.dir = tracesDir(sb.root)),
  async (sb) => {
    await mountTmpfs(traces.dir, "4m");
    const first = await runCli(inRoot(sb, "run", "-m", "Go."));
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /No space left on device \(os error 28\)/);
    const sid = /Session: (session-\S+)/.exec(first.stderr)![1]!;
    const [file] = await listSessionFiles(traces.dir, sid);
    const torn = await Deno.readFile(file!.path);
    assert.notEqual(torn.at(-1), 0x0a, "the tool call record was cut short by the full disk");
    const before = await runCli(["trace", "validate", file!.path]);
    assert.equal(before.code, 1, before.stdout);
    assert.match(before.stdout, /torn last line: a record cut short without its newline/);

    await Deno.remove(join(traces.dir, "filler"));
    const resumed = await runCli(
      ["--root", sb.root, "run", "--resume", sid, "-m", "Continue."],
      { cwd: sb.workspace },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /resumed after 1 requests/);
    assert.match(
      resumed.stderr,
      /\[trace\] removed the torn end of ".+_001\.jsonl": a tool_call record cut short by a write that failed \(\d+ byte\(s\) without their newline\)/,
    );
    const after = await runCli(["trace", "validate", traces.dir]);
    assert.equal(after.code, 0, after.stdout + after.stderr);
    const text = await Deno.readTextFile(file!.path);
    assert.ok(
      text.startsWith(new TextDecoder().decode(torn.subarray(0, torn.lastIndexOf(0x0a) + 1))),
    );
    assert.doesNotMatch(text, /a long description/);
  },
));

Deno.test(mountTest(
  "trace export -o onto a full disk leaves no partial file, and an existing one as it was",
  { turns: [turn.text(`long answer ${"y".repeat(256 * 1024)}`)] },
  (sb) => join(sb.base, "out"),
  async (sb, out) => {
    const r = await runCli(inRoot(sb, "run", "-m", "Go."));
    assert.equal(r.code, 0, r.stderr);
    await mountTmpfs(out, "64k");
    await Deno.writeTextFile(join(out, "old.md"), "the previous export\n");
    for (const name of ["old.md", "new.md"]) {
      const exp = await runCli([
        "--root",
        sb.root,
        "trace",
        "export",
        "latest",
        "--format",
        "md",
        "-o",
        join(out, name),
      ]);
      assert.equal(exp.code, 1, exp.stderr);
      assert.match(exp.stderr, /Cannot write ".+\.md": No space left on device/);
    }
    const left = [];
    for await (const e of Deno.readDir(out)) left.push(e.name);
    assert.deepEqual(left, ["old.md"]);
    assert.equal(await Deno.readTextFile(join(out, "old.md")), "the previous export\n");
  },
));

const agentOf = (sb: Sandbox) => join(sb.root, "default_project", "agents", "default_agent");
Deno.test(mountTest(
  "agent snapshot onto a full disk leaves no partial archive",
  { turns: [] },
  (sb) => join(agentOf(sb), "snapshots"),
  async (sb, snapshots) => {
    const agent = agentOf(sb);
    // Bytes that do not compress: the archive needs more room than the disk has.
    const noise = new Uint8Array(512 * 1024);
    for (let at = 0; at < noise.length; at += 65536) {
      crypto.getRandomValues(noise.subarray(at, at + 65536));
    }
    await runCliOk(mcpAddArgs(sb.root, "x", "--no-test", "--", "true"));
    await Deno.writeFile(join(agent, "agent_state", "data.bin"), noise);
    await mountTmpfs(snapshots, "128k");
    const r = await runCli(["--root", sb.root, "agent", "snapshot"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /Cannot write the snapshot ".+v1\.tar\.gz": no space left on the device/,
    );
    const left = [];
    for await (const e of Deno.readDir(snapshots)) left.push(e.name);
    assert.deepEqual(left, []);
  },
));
