// The direct path under a real terminal: Ctrl-C typed into penguin's terminal reaches penguin, never
// the sandboxed command (bubblewrap starts in a session of its own when penguin has a controlling
// terminal). The terminal is a pseudo-terminal made by util-linux `script`.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { withWorkspace } from "../support/roots.ts";
import { detectSandbox } from "../../lib/sandbox/mod.ts";

const HELPER = fileURLToPath(new URL("./_terminal_helper.ts", import.meta.url));
const script = ["/usr/bin/script", "/bin/script"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});
const report = await detectSandbox();

Deno.test({
  name: "a Ctrl-C typed into penguin's terminal does not reach a sandboxed command",
  ignore: script === undefined || report.kind !== "bwrap" || !report.usable,
  fn: async () => {
    await withWorkspace(async (ws) => {
      const inner = `${Deno.execPath()} run -A --quiet ${HELPER} ${ws}`;
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
      const ready = await until(/helper-ready own-group=(\w+) own-session=(\w+)/);
      assert.equal(ready[1], "true", text);
      assert.equal(ready[2], "true", text);
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
