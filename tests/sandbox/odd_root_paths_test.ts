// The launcher opens the workspace, the other writable roots and the shown home paths by name
// with `eval "exec N<…"`: a name with a space, quotes or `;$(…)` must be one word there, never
// shell text. Before, a workspace "my project" could run no command at all ("cannot open
// …/my"), and a name holding `;$(…)` ran that text on the host, outside the sandbox.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { _pinLaunch } from "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { exists, visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

/** A directory name that is shell text: word splitting, quotes, a command substitution. */
const ODD = `my project 'q' "d";$(touch${"${IFS}"}INJECTED)\`touch${"${IFS}"}INJECTED2\``;

for (const launch of ["sh", "supervised", "kept"] as const) {
  Deno.test({
    name: `a workspace, writable root and shown home path named like shell text run (${launch})`,
    ignore: !bwrap,
    async fn() {
      const base = await visibleTempDir("penguin-odd-roots-");
      const keeping = launch === "kept" ? keepStandIns() : undefined;
      _pinLaunch({ direct: launch !== "supervised" });
      try {
        const ws = join(base, `ws ${ODD}`);
        const pad = join(base, `pad ${ODD}`);
        const home = join(base, "home");
        const shown = join(home, `sdk ${ODD}`);
        for (const d of [ws, pad, shown]) await Deno.mkdir(d, { recursive: true });
        await Deno.writeTextFile(join(shown, "lib.txt"), "sdk-visible\n");
        const policy = {
          ...createPolicy({
            workspace: ws,
            scratchpad: pad,
            home,
            homeReadable: [shown],
            hostEnv: { PATH: "/usr/bin:/bin", HOME: home },
          }),
          hideOtherDataRoots: false,
        };
        let out = "";
        const child = await spawnSandboxed({
          argv: [
            "sh",
            "-c",
            'echo w > out && echo p > "$1/out" && cat "$2/lib.txt"',
            "sh",
            pad,
            shown,
          ],
          policy,
          stdin: "null",
          ...(launch === "kept" ? { reuse: true } : {}),
          onOutput: (chunk) => void (out += chunk),
        });
        const status = await child.status;
        await child.outputClosed;
        assert.equal(status.code, 0, out);
        assert.match(out, /sdk-visible/);
        assert.equal(await Deno.readTextFile(join(ws, "out")), "w\n");
        assert.equal(await Deno.readTextFile(join(pad, "out")), "p\n");
        // Nothing of the names ran: no file made by their text, wherever the launcher stood.
        for (const dir of [ws, base, "/"]) {
          assert.equal(await exists(join(dir, "INJECTED")), false, dir);
          assert.equal(await exists(join(dir, "INJECTED2")), false, dir);
        }
      } finally {
        _pinLaunch({});
        await keeping?.end();
        await Deno.remove(base, { recursive: true });
      }
    },
  });
}
