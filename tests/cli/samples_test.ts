// samples/: traces penguin wrote itself (scripts/make_samples.ts), committed so the offline
// commands work on a fresh clone. They must stay valid and regenerable.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { parseTraceFileName } from "../../lib/trace/paths.ts";
import { makeSamples, type SampleName, SAMPLES } from "../../scripts/make_samples.ts";
import { REPO, runCli } from "../support/cli.ts";

const SAMPLES_DIR = join(REPO, "samples");
const NAMES = Object.keys(SAMPLES) as SampleName[];

interface FileShape {
  /** `main` or `subagent`, then the file index. */
  file: string;
  /** The record kinds in order. */
  kinds: string[];
}

const kindOf = (m: OmniMessage) => m.type === "session_meta" ? m.type : String(m.payload.type);

/** A sample directory's structure without ids, times or paths. */
async function shapeOf(dir: string): Promise<FileShape[]> {
  const out: FileShape[] = [];
  for await (const e of Deno.readDir(dir)) {
    const parsed = parseTraceFileName(e.name);
    assert.ok(parsed, `${dir}/${e.name} is named <session_id>_<NNN>.jsonl`);
    const records = (await readTraceFile(join(dir, e.name))).records.map((r) => r.message);
    const head = records[0]!;
    const source = head.type === "session_meta" && head.payload.source === "subagent"
      ? "subagent"
      : "main";
    out.push({ file: `${source} _${parsed.index}`, kinds: records.map(kindOf) });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

async function heads(dir: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const e of Deno.readDir(dir)) {
    const first = (await readTraceFile(join(dir, e.name))).records[0]!.message;
    if (first.type === "session_meta") out.push(first.payload);
  }
  return out;
}

Deno.test("the committed samples are valid traces of the kinds samples/README.md lists", async () => {
  const r = await runCli(["trace", "validate", "--strict", "samples"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^6 file\(s\), \d+ record\(s\), 0 problem\(s\)$/m);
  const readme = await Deno.readTextFile(join(SAMPLES_DIR, "README.md"));
  for (const name of NAMES) assert.ok(readme.includes(`\`${name}/\``), `README lists ${name}/`);

  const shapes = Object.fromEntries(
    await Promise.all(NAMES.map(async (n) => [n, await shapeOf(join(SAMPLES_DIR, n))] as const)),
  ) as Record<SampleName, FileShape[]>;
  const calls = (s: FileShape[]) => s.flatMap((f) => f.kinds).filter((k) => k === "tool_call");
  // plain: two tasks with tool calls
  assert.deepEqual(shapes.plain.map((f) => f.file), ["main _1"]);
  assert.ok(calls(shapes.plain).length >= 4);
  assert.equal(
    (await readTraceFile(join(SAMPLES_DIR, "plain", await firstFile("plain")))).records
      .filter((r) =>
        r.message.type === "model_msg" && r.message.payload.type === "text" &&
        r.message.payload.role === "user"
      ).length,
    2,
  );
  // fork: lineage pointing at the plain session
  const [forkHead] = await heads(join(SAMPLES_DIR, "fork"));
  const [plainHead] = await heads(join(SAMPLES_DIR, "plain"));
  assert.equal((forkHead!.lineage as { kind: string }).kind, "fork");
  assert.equal(
    (forkHead!.lineage as { parent_session_id: string }).parent_session_id,
    plainHead!.session_id,
  );
  // subagents: a parent and its child
  assert.deepEqual(shapes.subagents.map((f) => f.file), ["main _1", "subagent _1"]);
  assert.ok(shapes.subagents[0]!.kinds.includes("subagent"));
  // compaction: a compaction, then the session goes on in the next file
  assert.deepEqual(shapes.compaction.map((f) => f.file), ["main _1", "main _2"]);
  assert.ok(shapes.compaction[0]!.kinds.includes("compaction_end"));
  // small enough to read
  for (const name of NAMES) {
    for await (const e of Deno.readDir(join(SAMPLES_DIR, name))) {
      const size = (await Deno.stat(join(SAMPLES_DIR, name, e.name))).size;
      assert.ok(size < 24_000, `${name}/${e.name} is ${size} bytes`);
    }
  }
});

async function firstFile(name: string): Promise<string> {
  for await (const e of Deno.readDir(join(SAMPLES_DIR, name))) return e.name;
  throw new Error(`samples/${name} is empty`);
}

Deno.test("scripts/make_samples.ts regenerates samples with the committed files and records", async () => {
  const out = await Deno.makeTempDir({ prefix: "penguin-samples-test-" });
  try {
    await makeSamples(out);
    // The same records of each kind in each file; the order is not compared, since a
    // subagent's pointer and its parent's token usage may land either way round.
    const counted = (shapes: FileShape[]) =>
      shapes.map((f) => ({ file: f.file, kinds: [...f.kinds].sort() }));
    for (const name of NAMES) {
      assert.deepEqual(
        counted(await shapeOf(join(out, name))),
        counted(await shapeOf(join(SAMPLES_DIR, name))),
        `samples/${name} matches a fresh run; rerun scripts/make_samples.ts if the format changed`,
      );
    }
    const r = await runCli(["trace", "validate", "--strict", out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
