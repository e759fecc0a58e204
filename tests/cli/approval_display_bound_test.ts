// The approval display of an `edit_file` reads the file's current text for its diff context on the
// host, outside any sandbox, while the model's background commands may change the file at any
// moment. It must read with a bound taken from the file it opened, not from an earlier look at the
// path: a command swapping a huge file in between took penguin to 690 MB (attack round 28 h03).
// Here a child process swaps a small file and a 2 MiB one back and forth (rename(2) exchange) while
// the display is asked for many times: the 2 MiB text never reaches the display.
import assert from "node:assert/strict";
import { join } from "node:path";
import { approvalDetails } from "../../lib/cli/_approval_display.ts";
import type { ToolCallMessage } from "../../lib/protocol/messages.ts";
import { visibleTempDir } from "../support/roots.ts";

/** renameat2(RENAME_EXCHANGE) in a loop until stdin closes; prints "swapping" once started. */
const SWAPPER = `
import ctypes, os, platform, select, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": 316, "aarch64": 276}[platform.machine()]
print("swapping", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    libc.syscall(nr, -100, b"f", -100, b"big", 2)
`;

Deno.test({
  name: "the edit diff never reads more than its bound of a file swapped under it",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const ws = await visibleTempDir("penguin-approval-bound-");
    await Deno.writeTextFile(join(ws, "f"), "hello OLDSTR world\n");
    await Deno.writeTextFile(join(ws, "big"), "A".repeat(2 * 1024 * 1024) + "OLDSTR\n");
    const swapper = new Deno.Command("python3", {
      args: ["-c", SWAPPER],
      cwd: ws,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    try {
      const reader = swapper.stdout.pipeThrough(new TextDecoderStream()).getReader();
      assert.match((await reader.read()).value ?? "", /swapping/);
      reader.releaseLock();
      const call: ToolCallMessage = {
        type: "tool_call",
        role: "assistant",
        tool_call_id: "c1",
        name: "edit_file",
        arguments: JSON.stringify({ file_path: "f", old_string: "OLDSTR", new_string: "NEW" }),
        stop_reason: "completed",
      };
      const ctx = { workspace: ws, mask: (t: string) => t, color: false };
      let small = 0;
      for (let i = 0; i < 400; i++) {
        const lines = await approvalDetails(call, ctx);
        const text = lines.join("\n");
        assert.doesNotMatch(text, /AAAA/, `try ${i}: the display showed the 2 MiB file`);
        if (/hello/.test(text)) small++;
      }
      assert.ok(small > 0, "the small file was shown in context at least once");
    } finally {
      await swapper.stdin.close();
      await swapper.status;
      await swapper.stdout.cancel().catch(() => {});
      await Deno.remove(ws, { recursive: true });
    }
  },
});
