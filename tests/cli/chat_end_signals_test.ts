// A piped `penguin chat` ends on SIGHUP (the terminal or ssh connection closed) and SIGQUIT as it
// does on SIGTERM: it exits with its own status, not killed by the signal, so the session's end
// (its last look for armed git repositories, its stand-ins removed) runs (attack pass
// final14-concgit S3/S4).
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { spawnChat } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";

async function chatThenSignal(sig: Deno.Signal): Promise<Deno.CommandStatus> {
  return await withModelRoot({ turns: [turn.text("first answer")] }, async (sb) => {
    const child = spawnChat(sb, "null");
    const input = child.stdin.getWriter();
    await input.write(new TextEncoder().encode("hello\n"));
    // The answer printed: the chat waits for the next line (stdin stays open).
    let out = "";
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    while (!out.includes("first answer")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    assert.match(out, /first answer/);
    child.kill(sig);
    const status = await child.status;
    await reader.cancel().catch(() => {});
    await input.close().catch(() => {});
    return status;
  });
}

Deno.test("a piped chat ends on SIGHUP, SIGQUIT and SIGALRM with the status SIGTERM gives it", async () => {
  const term = await chatThenSignal("SIGTERM");
  assert.equal(term.signal, null, "SIGTERM is handled");
  for (const sig of ["SIGHUP", "SIGQUIT", "SIGALRM"] as const) {
    const st = await chatThenSignal(sig);
    assert.deepEqual([st.signal, st.code], [null, term.code], sig);
  }
});
