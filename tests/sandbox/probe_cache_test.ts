// The probe's answer remembered between penguin processes (lib/sandbox/_probe_cache.ts): used
// when nothing it depends on changed, and never when the file is not a trustworthy one. Each
// process is a `deno eval` with a run directory of its own; a bubblewrap that notes its runs
// tells whether a probe sandbox started.
import assert from "node:assert/strict";
import { join } from "node:path";
import { evalInRunDir } from "./_run_dir_eval.ts";
import { withTempDir, withWorkspace } from "../support/roots.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";

const lib = (f: string) => JSON.stringify(new URL(`../../lib/sandbox/${f}`, import.meta.url).href);

/** Write a bubblewrap at `path` that notes each run in `log`, then runs `body` (default: the real one). */
async function writeBwrap(
  path: string,
  log: string,
  body = 'exec /usr/bin/bwrap "$@"',
): Promise<void> {
  // Written beside and renamed into place: a new file (inode), as a package upgrade makes one.
  const tmp = `${path}.new`;
  await Deno.writeTextFile(tmp, `#!/bin/bash\necho run >>${JSON.stringify(log)}\n${body}\n`);
  await Deno.chmod(tmp, 0o755);
  await Deno.rename(tmp, path);
}

interface Fixture {
  fake: string;
  /** Replace the fake bubblewrap with a new file running `body` (default: the real one). */
  rewrite(body?: string): Promise<void>;
  run: string;
  cache: string;
  /** Probe sandboxes started so far. */
  runs(): Promise<number>;
  /** Detect in a new process (with `bootId` as the boot id, if given); its report's gist. */
  detect(bootId?: string): Promise<{ usable: boolean; disableUserns: boolean; failure?: string }>;
}

function withFixture(fn: (f: Fixture) => Promise<void>): Promise<void> {
  return withTempDir("penguin-probe-cache-", async (dir) => {
    const log = join(dir, "runs.log");
    const fake = join(dir, "bwrap");
    await writeBwrap(fake, log);
    const run = join(dir, "run");
    await fn({
      fake,
      rewrite: (body) => writeBwrap(fake, log, body),
      run,
      cache: join(run, "probe.json"),
      runs: async () =>
        (await Deno.readTextFile(log).catch(() => "")).split("\n").filter((l) => l).length,
      detect: async (bootId) =>
        JSON.parse(
          await evalInRunDir(
            `import { detectSandbox } from ${lib("detect.ts")};
            import { _pinBootId } from ${lib("_probe_cache.ts")};
            _pinBootId(${JSON.stringify(bootId)});
            const r = await detectSandbox({ bwrapPath: ${JSON.stringify(fake)} });
            console.log(JSON.stringify({ usable: r.usable, disableUserns: r.disableUserns,
              ...(r.failure ? { failure: r.failure } : {}) }));`,
            run,
          ),
        ),
    });
  });
}

const WORKS = { usable: true, disableUserns: true };

/** A test of `fn` on a fixture, run where bubblewrap works and `when` holds. */
function fixtureTest(name: string, fn: (f: Fixture) => Promise<void>, when = true): void {
  Deno.test({ name, ignore: !bwrap || !when, fn: () => withFixture(fn) });
}

/** A process detecting now (after `what` was done) works and starts a probe sandbox again. */
async function assertProbedAgain(f: Fixture, what: string): Promise<void> {
  const before = await f.runs();
  assert.deepEqual(await f.detect(), WORKS, what);
  assert.ok(await f.runs() > before, `${what}: probed again`);
}

fixtureTest("a second process uses the remembered probe: no probe sandbox starts", async (f) => {
  assert.deepEqual(await f.detect(), WORKS);
  const probed = await f.runs();
  assert.ok(probed >= 1);
  const info = await Deno.lstat(f.cache);
  assert.equal((info.mode ?? 0) & 0o777, 0o600);
  assert.deepEqual(await f.detect(), WORKS);
  assert.equal(await f.runs(), probed, "the second process started no probe sandbox");
});

fixtureTest("a replaced bubblewrap or another boot probes again", async (f) => {
  assert.deepEqual(await f.detect(), WORKS);
  let probed = await f.runs();
  await f.rewrite();
  assert.deepEqual(await f.detect(), WORKS);
  assert.ok(await f.runs() > probed, "a new bwrap binary is probed");
  probed = await f.runs();
  assert.deepEqual(await f.detect(), WORKS);
  assert.equal(await f.runs(), probed, "then remembered");
  assert.deepEqual(await f.detect("another-boot"), WORKS);
  assert.ok(await f.runs() > probed, "another boot is probed");
});

fixtureTest("a corrupt or forged cache file is ignored and the machine probed again", async (f) => {
  assert.deepEqual(await f.detect(), WORKS);
  const good = JSON.parse(await Deno.readTextFile(f.cache));
  const forgeries: [string, string][] = [
    ["garbage", "{not json"],
    [
      "weaker flags",
      JSON.stringify({ ...good, report: { ...good.report, disableUserns: false } }),
    ],
    [
      "no seccomp filter",
      JSON.stringify({
        ...good,
        report: { ...good.report, seccomp: { ...good.report.seccomp, installed: false } },
      }),
    ],
    [
      "a failing check",
      JSON.stringify({
        ...good,
        report: {
          ...good.report,
          checks: [...good.report.checks, { name: "x", status: "fail", detail: "y" }],
        },
      }),
    ],
    [
      "an extra field",
      JSON.stringify({ ...good, report: { ...good.report, bwrap: "/bin/true" } }),
    ],
    ["too large", JSON.stringify({ ...good, pad: "x".repeat(70 * 1024) })],
  ];
  for (const [what, text] of forgeries) {
    await Deno.writeTextFile(f.cache, text);
    await assertProbedAgain(f, what);
    // The probe's own answer replaced it.
    assert.deepEqual(JSON.parse(await Deno.readTextFile(f.cache)).report.disableUserns, true);
  }
});

fixtureTest("a cache file others may write, or not the user's own, is ignored", async (f) => {
  assert.deepEqual(await f.detect(), WORKS);
  const cases: [string, () => Promise<void>][] = [
    ["group-writable", () => Deno.chmod(f.cache, 0o620)],
    ["world-writable", () => Deno.chmod(f.cache, 0o602)],
    ["another user's", () => Deno.chown(f.cache, 65534, 65534)],
    ["a symlink", async () => {
      const target = `${f.cache}.target`;
      await Deno.rename(f.cache, target);
      await Deno.symlink(target, f.cache);
    }],
  ];
  for (const [what, spoil] of cases) {
    await spoil();
    await assertProbedAgain(f, what);
    const info = await Deno.lstat(f.cache);
    assert.ok(info.isFile && info.uid === 0 && (info.mode! & 0o777) === 0o600, what);
  }
}, Deno.uid() === 0);

fixtureTest("a probe that fails is not remembered", async (f) => {
  await f.rewrite(
    "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1",
  );
  const first = await f.detect();
  assert.equal(first.usable, false);
  assert.match(first.failure ?? "", /setting up uid map/);
  await assert.rejects(Deno.lstat(f.cache), Deno.errors.NotFound);
  const probed = await f.runs();
  assert.equal((await f.detect()).usable, false);
  assert.ok(await f.runs() > probed, "probed again");
});

fixtureTest(
  "a remembered probe whose bubblewrap broke since stops the command with the probe's error",
  async (f) => {
    // Works until the flag file exists; the binary itself stays the same file.
    const flag = join(f.run, "..", "broken");
    await f.rewrite(
      `if [ -e ${JSON.stringify(flag)} ]; then echo 'bwrap: Creating new namespace failed: ` +
        `Operation not permitted' >&2; exit 1; fi\nexec /usr/bin/bwrap "$@"`,
    );
    assert.deepEqual(await f.detect(), WORKS);
    await Deno.writeTextFile(flag, "");
    await withWorkspace(async (ws) => {
      const out = await evalInRunDir(
        `import { createPolicy, spawnSandboxed } from ${lib("mod.ts")};
        const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, home: "",
          bwrapPath: ${JSON.stringify(f.fake)} });
        try {
          const c = await spawnSandboxed({ shell: "touch ran", policy });
          console.log("started", (await c.status).code);
        } catch (e) { console.log(e.kind, e.message); }`,
        f.run,
      );
      // The probe's own refusal, as when nothing had been remembered.
      assert.match(
        out,
        /^runtime Cannot run "touch ran" \(sandbox workspace-write\): bubblewrap cannot set up a sandbox: .*Creating new namespace failed.*penguin sandbox check/,
      );
      await assert.rejects(Deno.lstat(join(ws, "ran")), Deno.errors.NotFound);
    });
    await assert.rejects(Deno.lstat(f.cache), Deno.errors.NotFound, "the stale answer is gone");
  },
);

fixtureTest(
  "a probe again that fails is not kept: the next command of the process probes once more",
  async (f) => {
    const flag = join(f.run, "..", "broken");
    await f.rewrite(
      `if [ -e ${JSON.stringify(flag)} ]; then echo 'bwrap: Creating new namespace failed: ` +
        `Operation not permitted' >&2; exit 1; fi\nexec /usr/bin/bwrap "$@"`,
    );
    assert.deepEqual(await f.detect(), WORKS);
    await Deno.writeTextFile(flag, "");
    await withWorkspace(async (ws) => {
      const out = await evalInRunDir(
        `import { createPolicy, spawnSandboxed } from ${lib("mod.ts")};
        const policy = createPolicy({ workspace: ${JSON.stringify(ws)}, home: "",
          bwrapPath: ${JSON.stringify(f.fake)} });
        const once = async (cmd) => {
          try {
            const c = await spawnSandboxed({ shell: cmd, policy });
            console.log("started", (await c.status).code);
          } catch (e) { console.log("refused", e.message.slice(0, 60)); }
        };
        await once("touch first");
        await Deno.remove(${JSON.stringify(flag)});
        await once("touch second");`,
        f.run,
      );
      const [first, second] = out.trim().split("\n");
      assert.match(first!, /^refused /);
      assert.equal(second, "started 0", "the machine works again: so does the next command");
      await assert.rejects(Deno.lstat(join(ws, "first")), Deno.errors.NotFound);
      await Deno.lstat(join(ws, "second"));
    });
  },
);
