// The direct path under a real terminal: Ctrl-C typed into penguin's terminal reaches penguin, never
// the sandboxed command (bubblewrap starts in a session of its own when penguin has a controlling
// terminal). The terminal is a pseudo-terminal made by util-linux `script`.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withWorkspace } from "../support/roots.ts";
import { detectSandbox } from "../../lib/sandbox/mod.ts";
import { penguinArgv } from "../support/cli.ts";
import { hostHas } from "../support/host_tools.ts";

const HELPER = fileURLToPath(new URL("./_terminal_helper.ts", import.meta.url));
const script = ["/usr/bin/script", "/bin/script"].find(hostHas);
const report = await detectSandbox();

/** Fields 3.. of /proc/<pid>/stat (state, ppid, pgrp, session, ...). */
function stat(pid: number): string[] {
  const line = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return line.slice(line.lastIndexOf(")") + 2).split(" ");
}

Deno.test({
  name: "a Ctrl-C typed into penguin's terminal does not reach a sandboxed command",
  ignore: script === undefined || report.kind !== "bwrap" || !report.usable,
  fn: async () => {
    await withWorkspace(async (ws) => {
      // The helper runs under penguin's own permission set (the flags of `deno task penguin`).
      const flags = penguinArgv().slice(0, -1);
      const inner = [Deno.execPath(), ...flags, HELPER, ws].join(" ");
      const proc = new Deno.Command(script!, {
        args: ["-qefc", inner, "/dev/null"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).spawn();
      const writer = proc.stdin.getWriter();
      const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      const until = async (re: RegExp) => {
        while (!re.test(text)) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`the helper ended before ${re}: ${text}`);
          text += value;
        }
        return text.match(re)!;
      };
      const ready = await until(/helper-ready child=(\d+) self=(\d+)/);
      // bwrap has a session of its own: it is no member of the terminal's foreground group.
      const [, , childGroup, childSession] = stat(Number(ready[1]));
      const [, , helperGroup] = stat(Number(ready[2]));
      assert.notEqual(childGroup, helperGroup, text);
      assert.equal(childSession, ready[1], text);
      await writer.write(new Uint8Array([3])); // Ctrl-C: SIGINT to the terminal's foreground group
      const result = await until(/helper-result (\{.*\})/);
      const { out, code } = JSON.parse(result[1]!);
      assert.equal(out, "got x\n", "the command saw no SIGINT and read its line");
      assert.equal(code, 0);
      await writer.close().catch(() => {});
      await reader.cancel();
      await proc.stderr.cancel();
      await proc.status;
    });
  },
});
