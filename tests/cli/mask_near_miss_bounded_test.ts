// `sessions import --from claude` and `trace export --format md` of a session whose texts are all
// 7–15-character pieces of a vault value (red team F6-2: 20 MB took the export to 351 MB and 30×
// the time of the same export without a vault). Every piece of 8+ characters is masked, and the
// masking costs no more than a bounded margin of memory over the same commands with no vault.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { rootTest } from "../support/root_test.ts";
import { assertNoPieceOf, readAll, setVault } from "../support/secrets.ts";

const MB = 1000 * 1000;
/**
 * What masking may add to the peak over the same command with no vault (measured with the
 * flags of `deno task penguin`: 3–4 MB; before the fix of F6-2: 44 MB on import, 49 MB on export).
 */
const MARGIN = 24 * MB;
const VALUE = "Vq7sK2pLx9Zr4TmW8nBy3HcJ6dFg5";

/** Texts of `bytes` characters: pieces of VALUE of 7 to 15 characters, space-separated. */
function nearMisses(bytes: number, from: number): string {
  const parts: string[] = [];
  let n = 0;
  for (let j = from; n < bytes; j++) {
    const k = 7 + (j % 9);
    const s0 = j % (VALUE.length - k);
    parts.push(VALUE.slice(s0, s0 + k));
    n += k + 1;
  }
  return parts.join(" ");
}

/** A Claude Code session of ~`bytes` whose prompts, answers and commands are near-misses. */
async function writeClaude(path: string, bytes: number): Promise<void> {
  const base = {
    sessionId: "aaaaaaaa-2222-3333-4444-777777777777",
    cwd: "/tmp",
    isSidechain: false,
  };
  const lines: string[] = [];
  let size = 0;
  let parent: string | null = null;
  for (let i = 0; size < bytes; i++) {
    const uuid = `u-${i}`;
    const text = nearMisses(4000, i * 500);
    const message = i % 2 === 0 ? { role: "user", content: text } : {
      id: `m${i}`,
      role: "assistant",
      content: [{ type: "text", text }, {
        type: "tool_use",
        id: `t${i}`,
        name: "Bash",
        input: { command: "echo " + text.slice(0, 200) },
      }],
    };
    const line = JSON.stringify({
      ...base,
      type: i % 2 === 0 ? "user" : "assistant",
      uuid,
      parentUuid: parent,
      timestamp: "2026-12-01T10:00:00.000Z",
      message,
    });
    lines.push(line);
    size += line.length + 1;
    parent = uuid;
  }
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
}

Deno.test(rootTest(
  "import and md export of near-miss pieces of a vault value: all masked, within a memory margin",
  !CAN_MEASURE_PEAK,
  async (root) => {
    const dir = await Deno.makeTempDir({ dir: join(root, "..") });
    try {
      const file = join(dir, "claude.jsonl");
      await writeClaude(file, 5 * MB);
      const ws = join(dir, "ws");
      await Deno.mkdir(ws);
      const plain = join(dir, "plain-root");
      await setVault(root, "TOKEN", VALUE);
      const peaks: Record<string, number> = {};
      for (const [name, r] of [["vault", root], ["none", plain]] as const) {
        const imp = await runCliPeak(
          ["--root", r, "sessions", "import", file, "--from", "claude", "--workspace", ws],
          dir,
        );
        assert.equal(imp.code, 0, imp.stderr);
        const out = join(dir, `${name}.md`);
        const exp = await runCliPeak(
          ["--root", r, "trace", "export", "--format", "md", "-o", out, "latest"],
          dir,
        );
        assert.equal(exp.code, 0, exp.stderr);
        peaks[`import ${name}`] = imp.peakBytes;
        peaks[`export ${name}`] = exp.peakBytes;
      }
      const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
      assertNoPieceOf(await readAll(traces), [VALUE], "the imported trace");
      const md = await Deno.readTextFile(join(dir, "vault.md"));
      assertNoPieceOf(md, [VALUE], "the export");
      assert.ok(md.includes("[redacted:vault:TOKEN]"));
      const control = await Deno.readTextFile(join(dir, "none.md"));
      assert.ok(control.includes(VALUE.slice(0, 8)), "without a vault the pieces stay");
      const shown = JSON.stringify(Object.fromEntries(
        Object.entries(peaks).map(([k, v]) => [k, `${Math.round(v / MB)} MB`]),
      ));
      assert.ok(peaks["import vault"]! <= peaks["import none"]! + MARGIN, shown);
      assert.ok(peaks["export vault"]! <= peaks["export none"]! + MARGIN, shown);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
));
