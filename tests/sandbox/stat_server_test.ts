// The walk's `stat` answers come from one bash the process keeps (a spawn a look cost a turn 20 to
// 35 ms): looks made at once are answered one at a time, each with its own paths, whatever their
// names hold, and a path that is gone is left out as `stat` leaves it out.
import assert from "node:assert/strict";
import { join } from "node:path";
import { statThroughServer } from "../../lib/sandbox/_stat_server.ts";
import { visibleTempDir } from "./_helpers.ts";

const TOOL = ["/usr/bin/stat", "/bin/stat"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name: "looks made at once each get their own paths' answers from the kept bash",
  ignore: Deno.build.os !== "linux" || TOOL === undefined,
  fn: async () => {
    const dir = await visibleTempDir("penguin-stat-server-");
    try {
      const names = ["plain", "with space", "new\nline", "END", "-dash", "ünï"];
      for (const n of names) await Deno.mkdir(join(dir, n));
      const looks = names.map((n) => [join(dir, n), join(dir, `${n}-gone`)]);
      const answers = await Promise.all(looks.map((paths) => statThroughServer(TOOL!, paths)));
      for (const [i, text] of answers.entries()) {
        assert.ok(text !== undefined, "the server answered");
        const records = text.split("\0").filter((r) => r !== "");
        assert.equal(records.length, 1, JSON.stringify(records));
        const m = /^(\d+) (\d+\.\d{9}) (.*)$/s.exec(records[0]!);
        assert.ok(m, records[0]);
        assert.equal(m[3], looks[i]![0]);
        assert.equal(Number(m[1]), (await Deno.stat(looks[i]![0]!)).ino);
      }
      assert.equal(await statThroughServer(TOOL!, []), "", "an empty look answers nothing");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
