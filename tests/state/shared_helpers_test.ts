// The helpers lib shares where its modules repeated themselves (issue 31
// item 6): opening, stat-ing and locking files (lib/state/_fs.ts), the
// invalid-name error (lib/state/_validated.ts), a call's message inbox
// (lib/tools/worker/_call_messages.ts) and sub-command tables
// (lib/cli/command.ts), on real files in a temp dir.
import assert from "node:assert/strict";
import { join } from "node:path";
import { lockFile, statExisting, tryOpen } from "../../lib/state/_fs.ts";
import { validated } from "../../lib/state/_validated.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { callEvents, callInbox } from "../../lib/tools/worker/_call_messages.ts";
import { commandGroup } from "../../lib/cli/command.ts";
import { withTempDir } from "../support/roots.ts";

const isRoot = Deno.uid() === 0;

Deno.test("tryOpen: null for a missing file; 'missing' throws other failures", async () => {
  await withTempDir("penguin-shared-", async (dir) => {
    const file = join(dir, "f");
    await Deno.writeTextFile(file, "x");
    const open = await tryOpen(file, { read: true });
    assert.ok(open !== null);
    open.close();
    assert.equal(await tryOpen(join(dir, "gone"), { read: true }), null);
    assert.equal(await tryOpen(join(dir, "gone"), { read: true }, "missing"), null);
    // A directory cannot be opened for writing: "any" gives null, "missing" throws.
    assert.equal(await tryOpen(dir, { write: true }), null);
    await assert.rejects(() => tryOpen(dir, { write: true }, "missing"));
  });
});

Deno.test("statExisting: the stat, or a not_found error naming what is missing", async () => {
  await withTempDir("penguin-shared-", async (dir) => {
    assert.ok((await statExisting(dir, "Workspace")).isDirectory);
    const gone = join(dir, "gone");
    await assert.rejects(
      () => statExisting(gone, "Workspace"),
      (e) =>
        e instanceof PenguinError && e.kind === "not_found" &&
        e.message === `Workspace does not exist: ${gone}`,
    );
  });
});

Deno.test("lockFile: a private lock file, held until closed", async () => {
  await withTempDir("penguin-shared-", async (dir) => {
    const path = join(dir, "x.lock");
    const first = await lockFile(path);
    if (!isRoot) assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    // A second open of the same file cannot take the lock while the first holds it.
    const probe = await Deno.open(path, { read: true, write: true });
    try {
      assert.equal(await probe.tryLock(true), false);
      first.close();
      assert.equal(await probe.tryLock(true), true);
    } finally {
      probe.close();
    }
  });
});

Deno.test("validated: the value when ok, else the invalid-name usage error", () => {
  assert.equal(validated(true, "a", "agent id", "rule"), "a");
  assert.throws(
    () => validated(false, "a b", "agent id", "only letters"),
    (e) =>
      e instanceof PenguinError && e.kind === "usage" &&
      e.message === 'Invalid agent id "a b": only letters',
  );
});

Deno.test("callInbox and callEvents: messages in order, done ends, a crash throws", async () => {
  const inbox = callInbox();
  const ended: string[] = [];
  const events = callEvents(inbox, (how) => ended.push(how));
  inbox.push({ type: "event", id: 1, event: { type: "delta", text: "a" } });
  inbox.push({ type: "event", id: 1, event: { type: "delta", text: "b" } });
  inbox.push({ type: "done", id: 1 });
  const got = [];
  for await (const e of events) got.push(e);
  assert.deepEqual(got, [{ type: "delta", text: "a" }, { type: "delta", text: "b" }]);
  assert.deepEqual(ended, ["done"]);

  const crashed = callInbox();
  const reading = callEvents(crashed, (how) => ended.push(how)).next();
  crashed.push({ type: "crash", error: { name: "Error", message: "worker died" } });
  await assert.rejects(reading, /worker died/);
  assert.deepEqual(ended, ["done", "crash"]);
});

Deno.test("commandGroup: one command per row under the shared prefix, in order", () => {
  const run = () => Promise.resolve(0);
  const cmds = commandGroup(["config", "vault"], [
    ["set", "store", "SET HELP", run],
    ["list", "list", "LIST HELP", run],
  ]);
  assert.deepEqual(cmds.map((c) => [c.path, c.summary, c.help, c.run]), [
    [["config", "vault", "set"], "store", "SET HELP", run],
    [["config", "vault", "list"], "list", "LIST HELP", run],
  ]);
});
