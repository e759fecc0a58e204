// The direct path: bubblewrap as penguin's own child, and the signaller that reaches the command.
import assert from "node:assert/strict";
import { detectSandbox, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { SIGNALLER } from "../../lib/sandbox/_direct.ts";
import { alive, collect, readUntil, withPolicyWorkspace } from "./_helpers.ts";

const report = await detectSandbox();
const bwrap = report.kind === "bwrap" && report.usable;

/** Fields 3.. of /proc/<pid>/stat (state, ppid, pgrp, session, ...). */
function stat(pid: number): string[] {
  const line = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return line.slice(line.lastIndexOf(")") + 2).split(" ");
}

/** Run the signaller as penguin does: `bash -c SIGNALLER penguin-signal <pid> <sig>`. */
async function signaller(pid: number, sig: string): Promise<number> {
  const { code } = await new Deno.Command(report.bash!, {
    args: ["-c", SIGNALLER, "penguin-signal", String(pid), sig],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  return code;
}

Deno.test({
  name: "on the direct path penguin's own child is bubblewrap, in penguin's process group",
  ignore: !bwrap,
  fn: async () => {
    await withPolicyWorkspace(async (policy) => {
      const child = await spawnSandboxed({ shell: "echo up; read -r line", policy });
      await readUntil(child, "up");
      assert.equal((await Deno.readTextFile(`/proc/${child.pid}/comm`)).trim(), "bwrap");
      const [, ppid, pgrp] = stat(child.pid);
      assert.equal(Number(ppid), Deno.pid);
      assert.equal(
        Number(pgrp),
        Number(stat(Deno.pid)[2]),
        "no session of its own without a terminal",
      );
      await child.write("x\n");
      assert.equal((await collect(child)).code, 0);
    });
  },
});

Deno.test({
  name: "the signaller sends nothing to a process that is not penguin's child",
  ignore: !bwrap,
  fn: async () => {
    // A grandchild: its parent is the bash in between, not this process.
    const outer = new Deno.Command("bash", {
      args: ["-c", "sleep 1000 & echo $!; wait"],
      stdout: "piped",
      stdin: "null",
    }).spawn();
    const reader = outer.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) text += (await reader.read()).value ?? "";
    const grandchild = Number(text.trim());
    try {
      assert.equal(await signaller(grandchild, "TERM"), 3);
      assert.equal(await signaller(grandchild, "KILL"), 3);
      assert.ok(alive(grandchild), "the grandchild was signalled");
    } finally {
      Deno.kill(grandchild, "SIGKILL");
      outer.kill("SIGKILL");
      await outer.status;
      await reader.cancel();
    }
  },
});

Deno.test({
  name: "the signaller finds no init in a child that has none, and signals nothing",
  ignore: !bwrap,
  fn: async () => {
    const child = new Deno.Command("sleep", { args: ["1000"], stdin: "null" }).spawn();
    try {
      assert.equal(await signaller(child.pid, "TERM"), 4);
      assert.equal(await signaller(child.pid, "KILL"), 4);
      assert.ok(alive(child.pid));
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  },
});
