import assert from "node:assert/strict";
import { openPager, pagerCommand } from "../../lib/sandbox/pager.ts";
import { penguinArgv } from "../support/cli.ts";
import { hasTmux } from "../support/tmux.ts";

Deno.test("pagerCommand defaults to less -FRX and is off for an empty PAGER or cat", () => {
  assert.equal(pagerCommand(() => undefined), "less -FRX");
  assert.equal(pagerCommand(() => "most -s"), "most -s");
  assert.equal(pagerCommand(() => ""), undefined);
  assert.equal(pagerCommand(() => "cat"), undefined);
});

async function withPagerScript(fn: (dir: string, script: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-pager-" });
  const script = `${dir}/pager.sh`;
  // The "pager" records what it was fed and which environment it saw.
  await Deno.writeTextFile(script, `#!/bin/sh\nenv > "${dir}/env.txt"\ncat > "${dir}/paged.txt"\n`);
  await Deno.chmod(script, 0o755);
  try {
    await fn(dir, script);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("openPager feeds everything written to $PAGER and keeps secrets out of its environment", async () => {
  await withPagerScript(async (dir, script) => {
    const saved = { PAGER: Deno.env.get("PAGER"), KEY: Deno.env.get("DEEPSEEK_API_KEY") };
    Deno.env.set("PAGER", script);
    Deno.env.set("DEEPSEEK_API_KEY", "sk-must-not-reach-the-pager");
    try {
      const pager = await openPager();
      assert.ok(pager, "a pager should start");
      for (let i = 0; i < 1000; i++) pager.write(`line ${i}\n`);
      await pager.close();
      const paged = await Deno.readTextFile(`${dir}/paged.txt`);
      assert.equal(paged.split("\n").length, 1001);
      assert.ok(paged.startsWith("line 0\nline 1\n"));
      const env = await Deno.readTextFile(`${dir}/env.txt`);
      assert.doesNotMatch(env, /sk-must-not-reach-the-pager/);
      assert.match(env, new RegExp(`^PAGER=${script}$`, "m"));
    } finally {
      for (const [k, v] of [["PAGER", saved.PAGER], ["DEEPSEEK_API_KEY", saved.KEY]] as const) {
        if (v === undefined) Deno.env.delete(k);
        else Deno.env.set(k, v);
      }
    }
  });
});

Deno.test("openPager gives null when the pager program does not exist, so output goes straight out", async () => {
  const saved = Deno.env.get("PAGER");
  Deno.env.set("PAGER", "/nonexistent/pager-program");
  try {
    assert.equal(await openPager(), null);
  } finally {
    if (saved === undefined) Deno.env.delete("PAGER");
    else Deno.env.set("PAGER", saved);
  }
});

Deno.test({
  name: "trace show at a terminal pipes its output through the pager",
  ignore: !hasTmux,
  async fn() {
    await withPagerScript(async (dir, script) => {
      const trace =
        new URL("../../../shared/fixtures/penguin-traces/02-tool-calls.jsonl", import.meta.url)
          .pathname;
      const socket = `${dir}/tmux.sock`;
      const cmd = [Deno.execPath(), ...penguinArgv(), "trace", "show", trace]
        .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
      const tmux = (...args: string[]) =>
        new Deno.Command("tmux", { args: ["-S", socket, ...args], stdout: "null", stderr: "null" })
          .output();
      await tmux(
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "40",
        `PAGER='${script}' NO_COLOR=1 ${cmd}; sleep 30`,
      );
      try {
        let paged = "";
        for (
          let i = 0;
          i < 150 && !paged.includes("[stats]") && !paged.includes("exec_command");
          i++
        ) {
          await new Promise((r) => setTimeout(r, 100));
          paged = await Deno.readTextFile(`${dir}/paged.txt`).catch(() => "");
        }
        assert.match(paged, /exec_command/, "the conversation reached the pager");
      } finally {
        await tmux("kill-server");
      }
    });
  },
});
