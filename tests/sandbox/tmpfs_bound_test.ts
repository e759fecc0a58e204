// A command's private /tmp and /dev/shm are bounded, and the rest of /dev stores nothing: a tmpfs's
// pages belong to no process, so the out-of-memory killer never picks the command filling one, and
// unbounded (half the machine's memory each) they had the host's own processes killed instead.
// Checked from inside real sandboxes, on every way a command starts: the kernel's own figures for
// each mount, and a write to /dev refused.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { SHM_BYTES, TMP_BYTES } from "../../lib/sandbox/bwrap.ts";
import { visibleTempDir } from "./_helpers.ts";

const report = Deno.build.os === "linux" ? await detectSandbox() : undefined;
const bwrap = report?.kind === "bwrap";

// Each mount's size in bytes (blocks × block size, as statfs gives it), then whether /dev took a file.
const LOOK = `for m in /tmp /dev/shm; do echo "$m $(( $(stat -f -c '%b * %S' "$m") ))"; done
if : 2>/dev/null >/dev/penguin-fill; then echo "dev writable"; else echo "dev refused"; fi`;

async function lookInside(
  pin: { direct?: boolean; pool?: boolean },
  reuse: boolean,
): Promise<string> {
  const base = await visibleTempDir("penguin-tmpfs-bound-");
  const ws = join(base, "ws");
  await Deno.mkdir(ws);
  _pinLaunch(pin);
  try {
    const policy = createPolicy({ workspace: ws, home: "", hostEnv: { PATH: "/usr/bin:/bin" } });
    let out = "";
    const child = await spawnSandboxed({
      shell: LOOK,
      policy,
      stdin: "null",
      reuse,
      onOutput: (chunk) => out += chunk,
    });
    const status = await child.status;
    assert.equal(status.code, 0, out);
    return out;
  } finally {
    _pinLaunch({});
    await Deno.remove(base, { recursive: true });
  }
}

const WAYS: { name: string; pin: { direct?: boolean; pool?: boolean }; reuse: boolean }[] = [
  { name: "a sandbox of its own, started directly", pin: { pool: false }, reuse: false },
  { name: "a sandbox of its own, started by the supervisor", pin: { direct: false }, reuse: false },
  { name: "a sandbox kept for the session", pin: {}, reuse: true },
];

for (const way of WAYS) {
  Deno.test({
    name: `${way.name}: /tmp and /dev/shm are bounded and /dev is read-only`,
    // Bubblewrap before 0.8.0 (or setuid) has no --size; the probe then says so (detect_test).
    ignore: !bwrap || !report?.disableUserns,
    async fn() {
      const out = await lookInside(way.pin, way.reuse);
      assert.match(out, new RegExp(`^/tmp ${TMP_BYTES}$`, "m"), out);
      assert.match(out, new RegExp(`^/dev/shm ${SHM_BYTES}$`, "m"), out);
      assert.match(out, /^dev refused$/m, out);
    },
  });
}
