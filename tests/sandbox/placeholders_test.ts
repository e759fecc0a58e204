// Stand-ins for missing protected paths: shared while held, removed only when
// the last holder lets go and only when still exactly what penguin created.
import assert from "node:assert/strict";
import { join } from "node:path";
import { holdPlaceholders, livePlaceholders } from "../../lib/sandbox/_placeholders.ts";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import { exists } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";

Deno.test("a stand-in lives until its last holder releases it", async () => {
  await withWorkspace(async (dir) => {
    const p = { path: join(dir, "commondir"), kind: "file" as const, content: "." };
    const a = await holdPlaceholders([p]);
    const b = await holdPlaceholders([p]);
    assert.equal(await Deno.readTextFile(p.path), ".");
    assert.ok(livePlaceholders().has(p.path));
    await a();
    assert.equal(await exists(p.path), true, "still held by the second sandbox");
    await b();
    assert.equal(await exists(p.path), false);
    assert.equal(livePlaceholders().has(p.path), false);
  });
});

Deno.test("a stand-in someone changed, or a path that already existed, is left alone", async () => {
  await withWorkspace(async (dir) => {
    const hooks = { path: join(dir, "hooks"), kind: "dir" as const };
    const cfg = { path: join(dir, "config.worktree"), kind: "file" as const, content: "" };
    const release = await holdPlaceholders([hooks, cfg]);
    await Deno.writeTextFile(join(hooks.path, "user-hook"), "x");
    await Deno.writeTextFile(cfg.path, "[user]\n");
    await release();
    assert.equal(await exists(join(hooks.path, "user-hook")), true);
    assert.equal(await Deno.readTextFile(cfg.path), "[user]\n");

    const existing = { path: join(dir, "commondir"), kind: "file" as const, content: "." };
    await Deno.writeTextFile(existing.path, ".");
    await (await holdPlaceholders([existing]))();
    assert.equal(await exists(existing.path), true, "not created by penguin, not removed");
  });
});

Deno.test("a stand-in replaced by another file with the same content is left alone", async () => {
  await withWorkspace(async (dir) => {
    const p = { path: join(dir, "commondir"), kind: "file" as const, content: "." };
    const release = await holdPlaceholders([p]);
    // The new file exists before the stand-in goes: it cannot get the stand-in's inode.
    await Deno.writeTextFile(`${p.path}.new`, ".");
    await Deno.rename(`${p.path}.new`, p.path);
    await release();
    assert.equal(await Deno.readTextFile(p.path), ".", "not the file penguin created");
  });
});

Deno.test("a held stand-in someone removed is put back for the next sandbox", async () => {
  await withWorkspace(async (dir) => {
    const p = { path: join(dir, "penguin.jsonc"), kind: "file" as const, content: "{}\n" };
    const a = await holdPlaceholders([p]);
    await Deno.remove(p.path);
    const b = await holdPlaceholders([p]);
    assert.equal(await Deno.readTextFile(p.path), "{}\n", "bubblewrap needs a source to mount");
    await a();
    await b();
    assert.equal(await exists(p.path), false);
  });
});

Deno.test("a stand-in released by one sandbox while the next one takes it stays for the next one", async () => {
  await withWorkspace(async (dir) => {
    const p = { path: join(dir, "penguin.jsonc"), kind: "file" as const, content: "{}\n" };
    for (let i = 0; i < 100; i++) {
      const first = await holdPlaceholders([p]);
      // The release (its removal) and the next hold start together, as when one command ends
      // while the next one starts.
      const [, second] = await Promise.all([first(), holdPlaceholders([p])]);
      assert.equal(await exists(p.path), true, `round ${i}: the next sandbox has its source`);
      await second();
      assert.equal(await exists(p.path), false, `round ${i}: removed after the last holder`);
    }
  });
});

/**
 * Run `body` with the first `Deno[name]` call on `path` (after `skip` others) held at a gate:
 * `body` gets a promise that settles once that call is waiting, and a function that lets it go on.
 */
async function withCallHeld(
  name: "lstat" | "open",
  path: string,
  body: (reached: Promise<void>, go: () => void) => Promise<void>,
  skip = 0,
): Promise<void> {
  const deno = Deno as unknown as Record<
    string,
    (p: string, ...rest: unknown[]) => Promise<unknown>
  >;
  const real = deno[name]!;
  let arrive!: () => void, go!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const gate = new Promise<void>((r) => (go = r));
  let armed = true;
  deno[name] = async (p: string, ...rest: unknown[]) => {
    if (armed && String(p) === path && skip-- <= 0) {
      armed = false;
      arrive();
      await gate;
    }
    return await real(p, ...rest);
  };
  try {
    await body(reached, go);
  } finally {
    deno[name] = real;
    go();
  }
}

/**
 * Run `body` with the first shell run for an operation `op` on stand-ins (see
 * lib/sandbox/_standin_ops.ts) held at a gate before it starts, like {@linkcode withCallHeld}.
 */
async function withShellHeld(
  op: string,
  body: (reached: Promise<void>, go: () => void) => Promise<void>,
): Promise<void> {
  const Real = Deno.Command;
  let arrive!: () => void, go!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const gate = new Promise<void>((r) => (go = r));
  let armed = true;
  class Held extends Real {
    #args: string[];
    constructor(cmd: string | URL, opts?: Deno.CommandOptions) {
      super(cmd, opts);
      this.#args = opts?.args?.map(String) ?? [];
    }
    override async output(): Promise<Deno.CommandOutput> {
      // sh -c SCRIPT sh <parent> <count> <names> <op> <name> <want> …: the first operation.
      if (armed && this.#args[0] === "-c" && this.#args[6] === op) {
        armed = false;
        arrive();
        await gate;
      }
      return await super.output();
    }
  }
  (Deno as { Command: typeof Deno.Command }).Command = Held;
  try {
    await body(reached, go);
  } finally {
    (Deno as { Command: typeof Deno.Command }).Command = Real;
    go();
  }
}

Deno.test("a stand-in counts as missing while it is created and while it is removed", async () => {
  // A plan made in those moments that took it for the user's file would mount it without
  // holding it, and the removal would leave that sandbox with no source to mount.
  await withWorkspace(async (dir) => {
    const p = { path: join(dir, "penguin.jsonc"), kind: "file" as const, content: "{}\n" };
    let release!: () => Promise<void>;
    // Created: the file exists, and is being opened for its content (made empty in its directory).
    await withCallHeld("open", p.path, async (reached, go) => {
      const holding = holdPlaceholders([p]);
      await reached;
      assert.equal(await exists(p.path), true);
      assert.ok(livePlaceholders().has(p.path), "counted as missing while created");
      go();
      release = await holding;
    });
    // Removed: the file still exists while the shell that removes it is on its way.
    await withShellHeld("rm", async (reached, go) => {
      const releasing = release();
      await reached;
      assert.equal(await exists(p.path), true);
      assert.ok(livePlaceholders().has(p.path), "counted as missing while removed");
      go();
      await releasing;
    });
    assert.equal(await exists(p.path), false);
    assert.equal(livePlaceholders().has(p.path), false);
  });
});

Deno.test("a plan that saw no stand-in held, then found one on disk, looks again", async () => {
  // The plan checks the held set, then the disk. A stand-in created between the two would pass
  // for the user's file: mounted, never held, and lost to its holder's release.
  await withWorkspace(async (dir) => {
    const policy = createPolicy({ workspace: dir, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
    const policyPath = join(dir, "penguin.jsonc");
    const stub = (await resolvePlan(policy, dir)).placeholders!.find((p) => p.path === policyPath);
    assert.ok(stub, "a missing penguin.jsonc gets a stand-in");
    let release: (() => Promise<void>) | undefined;
    try {
      let planned!: Awaited<ReturnType<typeof resolvePlan>>;
      await withCallHeld("lstat", policyPath, async (reached, go) => {
        const planning = resolvePlan(policy, dir).then((p) => (planned = p));
        await reached; // the plan found it not held and is looking at the disk
        release = await holdPlaceholders([stub]);
        go();
        await planning;
      });
      assert.ok(
        planned.placeholders?.some((p) => p.path === policyPath),
        "the stand-in counts as missing in the plan",
      );
    } finally {
      await release?.();
    }
  });
});
