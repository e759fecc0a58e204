// The shell snapshot's capture is shared by every caller with the same policy (review s38, finding
// 6): one caller giving up (a session's warm-up stopped) must not stop it for another still waiting,
// who would then run its command without the profile's variables. The capture stops only when no
// caller is left, and a caller after that starts a fresh one. Each case runs in a penguin process of
// its own with a run directory of its own; the profile waits for a `go` file the script writes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { evalInRunDir } from "./_run_dir_eval.ts";

/** Runs `body` (a script using `policy`, `go()` and `loginEnvironment`) and returns its output. */
async function inRunDir(body: string): Promise<unknown> {
  const base = await Deno.stat("/var/tmp").then((s) => s.isDirectory, () => false);
  const dir = await Deno.realPath(
    await Deno.makeTempDir({
      prefix: "penguin-login-shared-",
      ...(base ? { dir: "/var/tmp" } : {}),
    }),
  );
  try {
    const ws = join(dir, "ws");
    const home = join(dir, "home");
    await Deno.mkdir(ws);
    await Deno.mkdir(home);
    await Deno.writeTextFile(
      join(home, ".bash_profile"),
      `export FROM_PROFILE=shared\nuntil [ -e ${ws}/go ]; do sleep 0.01; done\n`,
    );
    const mod = new URL("../../lib/sandbox/mod.ts", import.meta.url).href;
    const script = `
      import { createPolicy, loginEnvironment } from ${JSON.stringify(mod)};
      const policy = createPolicy({
        workspace: ${JSON.stringify(ws)},
        home: ${JSON.stringify(home)},
        hostEnv: { PATH: ${JSON.stringify(Deno.env.get("PATH") ?? "/usr/bin:/bin")}, HOME: ${
      JSON.stringify(home)
    } },
        allowEnv: ["FROM_PROFILE"],
      });
      const go = () => Deno.writeTextFile(${JSON.stringify(join(ws, "go"))}, "");
      const seen = (env) => env.FROM_PROFILE ?? "(none)";
      ${body}
    `;
    return JSON.parse(await evalInRunDir(script, join(dir, "run")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("one caller giving up leaves the shared capture running for another", async () => {
  const out = await inRunDir(`
    const starter = new AbortController();
    const first = loginEnvironment(policy, { signal: starter.signal, timeoutMs: 600_000 });
    const second = loginEnvironment(policy);
    const third = loginEnvironment(policy, { signal: new AbortController().signal });
    starter.abort();
    const firstEnv = await first;
    await go();
    console.log(JSON.stringify([seen(firstEnv), seen(await second), seen(await third)]));
  `);
  assert.deepEqual(out, ["(none)", "shared", "shared"]);
});

Deno.test("a caller asking while the others give up keeps the capture running", async () => {
  const out = await inRunDir(`
    const a = new AbortController();
    const b = new AbortController();
    const first = loginEnvironment(policy, { signal: a.signal, timeoutMs: 600_000 });
    const second = loginEnvironment(policy, { signal: b.signal });
    a.abort();
    b.abort();
    const later = loginEnvironment(policy);
    const stopped = [seen(await first), seen(await second)];
    await go();
    console.log(JSON.stringify([...stopped, seen(await later)]));
  `);
  assert.deepEqual(out, ["(none)", "(none)", "shared"]);
});

Deno.test("the capture stops when every caller gave up, and the next caller starts afresh", async () => {
  // The profile waits for `go` forever: the callers' waits end only because the shell is stopped.
  const out = await inRunDir(`
    const a = new AbortController();
    const b = new AbortController();
    const first = loginEnvironment(policy, { signal: a.signal, timeoutMs: 600_000 });
    const second = loginEnvironment(policy, { signal: b.signal });
    a.abort();
    const firstEnv = await first;
    b.abort();
    const stopped = [seen(firstEnv), seen(await second)];
    await go();
    const again = await loginEnvironment(policy, { timeoutMs: 600_000 });
    console.log(JSON.stringify([...stopped, seen(again)]));
  `);
  assert.deepEqual(out, ["(none)", "(none)", "shared"]);
});
