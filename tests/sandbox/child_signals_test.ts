// A penguin started with signals ignored (a script's `penguin run … &` ignores SIGINT and SIGQUIT,
// nohup SIGHUP) must not pass that on: a shell cannot undo a signal ignored at its start, so the
// command's `trap` never ran and penguin's own interrupt never reached it.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withWorkspace } from "../support/roots.ts";
import { detectSandbox } from "../../lib/sandbox/mod.ts";
import { signalsOfMask } from "../../lib/sandbox/_proc_facts.ts";
import { penguinArgv } from "../support/cli.ts";

const HELPER = fileURLToPath(new URL("./_child_signals_helper.ts", import.meta.url));
const report = await detectSandbox();

Deno.test("signalsOfMask reads a SigIgn mask of /proc/<pid>/status", () => {
  assert.deepEqual([...signalsOfMask("0000000000001006")!], [2, 3, 13]);
  assert.deepEqual([...signalsOfMask("8000000000000001")!], [1, 64]);
  assert.equal(signalsOfMask("not hex"), undefined);
});

Deno.test({
  name:
    "commands start with SIGHUP, SIGINT and SIGQUIT at their default although penguin ignores them",
  ignore: Deno.build.os !== "linux" || report.kind !== "bwrap" || !report.usable,
  fn: async () => {
    await withWorkspace(async (ws) => {
      // The helper runs under penguin's own permission set, started the way `… &` or nohup would.
      const flags = penguinArgv().slice(0, -1);
      const out = await new Deno.Command("bash", {
        args: [
          "--noprofile",
          "--norc",
          "-c",
          `trap '' HUP INT QUIT; exec "$@"`,
          "helper",
          Deno.execPath(),
          ...flags,
          HELPER,
          ws,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
      const lines = text.trim().split("\n").map((l) => JSON.parse(l));
      assert.deepEqual(lines.map((l) => l.name), ["direct", "supervised", "off"]);
      for (const l of lines) {
        // The helper itself was started with them ignored (else this test proves nothing)…
        assert.match(
          l.selfIgnored,
          /^[0-9a-f]{16}$/,
          `the helper's own SigIgn: ${JSON.stringify(l)}`,
        );
        assert.deepEqual(
          [1, 2, 3].filter((n) => signalsOfMask(l.selfIgnored)!.has(n)),
          [1, 2, 3],
          JSON.stringify(l),
        );
        // …and its commands were not.
        const command = signalsOfMask(l.command.replace(/^SigIgn:\s*/, ""))!;
        assert.deepEqual([1, 2, 3].filter((n) => command.has(n)), [], JSON.stringify(l));
        assert.deepEqual(l.traps, { SIGQUIT: 6, SIGINT: 6 }, JSON.stringify(l));
      }
    });
  },
});
