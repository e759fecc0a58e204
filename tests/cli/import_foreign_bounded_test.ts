// `sessions import --from claude` of a large file of small lines (red team N20: 64 MiB of 209,000
// lines took the import to 472 MB and 215 s): the file is read line by line on each pass and the
// converted records go to a spool on disk as they are made, so the peak stays far under what
// holding the file, its parsed lines and its records costs, and the last line is imported.
// (Masking of spooled records: import_mask_secrets_test.ts imports a pi session.)
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { CAN_MEASURE_PEAK, runCliPeak } from "../support/peak_memory.ts";
import { readAll } from "../support/secrets.ts";
import { rootTest } from "../support/root_test.ts";
import { runCli } from "../support/cli.ts";

const MB = 1000 * 1000;
const MAX_PEAK = 160 * MB;
/** 200,000 pi entries: 299 MB when every entry was held, ~207 MB now. */
const PI_PEAK = 250 * MB;
/** 200,000 pi entries in a star: 268 MB when each branch was a loss of its own, ~157 MB now. */
const PI_STAR_PEAK = 200 * MB;
const LAST = "LAST-LINE-MARK-41c9";

/** A Claude Code session of small lines (a user prompt, then an answer with a tool call), ~`bytes`. */
async function writeClaude(path: string, bytes: number): Promise<number> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  const base = {
    sessionId: "aaaaaaaa-2222-3333-4444-555555555555",
    cwd: "/tmp",
    isSidechain: false,
  };
  let size = 0;
  let parent: string | null = null;
  let batch = "";
  let i = 0;
  for (; size < bytes; i++) {
    const uuid = `u-${i}`;
    const text = "x".repeat(40);
    const rec = i % 2 === 0
      ? {
        ...base,
        type: "user",
        uuid,
        parentUuid: parent,
        timestamp: "2026-12-01T10:00:00.000Z",
        message: { role: "user", content: text },
      }
      : {
        ...base,
        type: "assistant",
        uuid,
        parentUuid: parent,
        timestamp: "2026-12-01T10:00:01.000Z",
        message: {
          id: `m${i}`,
          role: "assistant",
          content: [{ type: "text", text }, {
            type: "tool_use",
            id: `t${i}`,
            name: "Bash",
            input: { command: "ls" },
          }],
        },
      };
    const line = JSON.stringify(rec) + "\n";
    size += line.length;
    batch += line;
    parent = uuid;
    if (batch.length > 1 << 20) {
      await f.write(enc.encode(batch));
      batch = "";
    }
  }
  const last = {
    ...base,
    type: "user",
    uuid: `u-${i}`,
    parentUuid: parent,
    timestamp: "2026-12-01T10:00:02.000Z",
    message: { role: "user", content: LAST },
  };
  batch += JSON.stringify(last) + "\n";
  await f.write(enc.encode(batch));
  return i + 1;
}

Deno.test(rootTest(
  "sessions import --from claude of 40 MB of small lines stays under a peak bound",
  !CAN_MEASURE_PEAK,
  async (root) => {
    const ws = join(root, "..", `ws-${crypto.randomUUID()}`);
    await Deno.mkdir(ws);
    const file = join(root, "..", `claude-${crypto.randomUUID()}.jsonl`);
    const lines = await writeClaude(file, 40 * MB);
    try {
      const r = await runCliPeak(
        ["--root", root, "sessions", "import", file, "--from", "claude", "--workspace", ws],
        root,
      );
      assert.equal(r.code, 0, r.stderr);
      // Every line is one text: a prompt or an answer.
      assert.ok(r.stdout.includes(` ${lines} message(s)`), r.stdout);
      const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
      const onDisk = await readAll(traces);
      assert.ok(onDisk.includes(LAST), "the last line is imported");
      assert.ok(r.peakBytes <= MAX_PEAK, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(file);
      await Deno.remove(ws, { recursive: true });
    }
  },
));

/** A Claude Code session of `count` user prompts of `chars` characters each, one a line. */
async function writeLongLines(path: string, count: number, chars: number): Promise<void> {
  using f = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  for (let i = 0; i < count; i++) {
    const rec = {
      type: "user",
      uuid: `u${i}`,
      parentUuid: i === 0 ? null : `u${i - 1}`,
      sessionId: "s1",
      timestamp: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`,
      cwd: "/tmp",
      message: { role: "user", content: (i === count - 1 ? LAST : "") + "Q".repeat(chars) },
    };
    await f.write(enc.encode(JSON.stringify(rec) + "\n"));
  }
}

for (const from of ["claude", "codex"] as const) {
  Deno.test(rootTest(
    `sessions import --from ${from} of 64 MiB in 16 Mi-character lines refuses at line 1, peak ≤ 300 MB`,
    !CAN_MEASURE_PEAK,
    async (root) => {
      // Red team R5/R6: 4 lines of 16 Mi - 400 characters took claude to 484 MB (imported), codex
      // to 385 MB (refused after reading every line).
      const file = join(root, "..", `long-${crypto.randomUUID()}.jsonl`);
      await writeLongLines(file, 4, 16 * 1024 * 1024 - 400);
      try {
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", file, "--from", from],
          root,
        );
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.match(
          r.stdout + r.stderr,
          /line 1: not parsed, too costly to parse: longer than 4 Mi characters/,
        );
        assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
      } finally {
        await Deno.remove(file);
      }
    },
  ));
}

Deno.test(rootTest(
  "sessions import --from claude of 64 MiB of lines just under 4 Mi characters imports them, peak ≤ 300 MB",
  !CAN_MEASURE_PEAK,
  async (root) => {
    const ws = join(root, "..", `ws-${crypto.randomUUID()}`);
    await Deno.mkdir(ws);
    const file = join(root, "..", `long-${crypto.randomUUID()}.jsonl`);
    await writeLongLines(file, 16, 4 * 1024 * 1024 - 400);
    try {
      const r = await runCliPeak(
        ["--root", root, "sessions", "import", file, "--from", "claude", "--workspace", ws],
        root,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.ok(r.stdout.includes(" 16 message(s)"), r.stdout);
      const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
      assert.ok((await readAll(traces)).includes(LAST), "the last line is imported");
      assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(file);
      await Deno.remove(ws, { recursive: true });
    }
  },
));

/** A Claude Code session's place beside `root`: `<dir>/<id>.jsonl` and `<dir>/<id>/subagents/`. */
async function claudeFamily(root: string): Promise<{ dir: string; subs: string; file: string }> {
  const dir = join(root, "..", `claude-${crypto.randomUUID()}`);
  const id = "aaaaaaaa-2222-3333-4444-555555555555";
  const subs = join(dir, id, "subagents");
  await Deno.mkdir(subs, { recursive: true });
  return { dir, subs, file: join(dir, `${id}.jsonl`) };
}

/** The `.meta.json` beside subagent transcript `i`, naming the Agent call `agent-call-<i>`. */
async function writeMeta(subs: string, i: number, extra: object = {}): Promise<void> {
  const meta = { toolUseId: `agent-call-${i}`, ...extra };
  await Deno.writeTextFile(join(subs, `agent-${i}.meta.json`), JSON.stringify(meta));
}

/** `sessions import <file> --from claude --workspace <dir>` into `root`. */
function importClaude(root: string, file: string, dir: string): string[] {
  return ["--root", root, "sessions", "import", file, "--from", "claude", "--workspace", dir];
}

/** A small Claude Code session whose `n` Agent calls (`agent-call-<i>`) each return an answer. */
async function writeClaudeWithAgents(path: string, n: number): Promise<void> {
  const base = {
    sessionId: "aaaaaaaa-2222-3333-4444-555555555555",
    cwd: "/tmp",
    isSidechain: false,
  };
  const lines: unknown[] = [{
    ...base,
    type: "user",
    uuid: "p-0",
    parentUuid: null,
    timestamp: "2026-12-01T10:00:00.000Z",
    message: { role: "user", content: "delegate" },
  }];
  for (let i = 0; i < n; i++) {
    lines.push({
      ...base,
      type: "assistant",
      uuid: `a-${i}`,
      parentUuid: i === 0 ? "p-0" : `r-${i - 1}`,
      timestamp: "2026-12-01T10:00:01.000Z",
      message: {
        id: `m-${i}`,
        role: "assistant",
        content: [{
          type: "tool_use",
          id: `agent-call-${i}`,
          name: "Agent",
          input: { description: "d", prompt: "sub" },
        }],
      },
    }, {
      ...base,
      type: "user",
      uuid: `r-${i}`,
      parentUuid: `a-${i}`,
      timestamp: "2026-12-01T10:00:02.000Z",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `agent-call-${i}`, content: `done ${i}` }],
      },
    });
  }
  await Deno.writeTextFile(path, lines.map((l) => JSON.stringify(l) + "\n").join(""));
}

Deno.test(rootTest(
  "sessions import --from claude of four 40 MB subagent transcripts Agent calls name: each spooled, peak ≤ 200 MB",
  !CAN_MEASURE_PEAK,
  async (root) => {
    // Attack round 22 bounded: eight named 61 MB transcripts were each converted in memory and
    // held until the family was written (759 MB).
    const { dir, subs, file } = await claudeFamily(root);
    await writeClaudeWithAgents(file, 4);
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) {
      counts.push(await writeClaude(join(subs, `agent-${i}.jsonl`), 40 * MB));
      await writeMeta(subs, i, { agentType: "general-purpose" });
    }
    try {
      const r = await runCliPeak(
        importClaude(root, file, dir),
        root,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Imported Claude Code session .* and 4 subagent session\(s\)/);
      assert.ok(r.peakBytes <= 200 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
      // Every child's trace is whole: its last line is there.
      const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
      const all = await readAll(traces);
      assert.equal(all.split(LAST).length - 1, 4, "each child's last prompt is imported");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
));

Deno.test(rootTest(
  "sessions import --from claude does not read subagent transcripts no Agent call names, peak ≤ 200 MB",
  !CAN_MEASURE_PEAK,
  async (root) => {
    // Red team round 21 bounded #1: eight 60 MB transcripts beside a session were read whole at
    // once (750 MB peak), though none was imported.
    const { dir, subs, file } = await claudeFamily(root);
    await writeClaude(file, 1 * MB);
    for (let i = 0; i < 4; i++) await writeClaude(join(subs, `agent-${i}.jsonl`), 40 * MB);
    try {
      const r = await runCliPeak(
        importClaude(root, file, dir),
        root,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Imported Claude Code session/);
      assert.ok(r.peakBytes <= 200 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
));

for (const shape of ["chain", "star"] as const) {
  Deno.test(rootTest(
    `sessions import --from pi of 200,000 small entries (${shape}) keeps only their ids while it looks for the branch`,
    !CAN_MEASURE_PEAK,
    async (root) => {
      // A star: every entry a child of the first, 199,998 branches off the imported path (attack
      // round 22 bounded: each noted as a loss of its own, 445 MB for 400,000).
      // Red team round 21 bounded #3: every parsed entry was held, several times over (400,000
      // entries, 62 MB: 486 MB peak; a Codex file of that size imports at ~130 MB).
      const ws = join(root, "..", `ws-${crypto.randomUUID()}`);
      await Deno.mkdir(ws);
      const file = join(root, "..", `pi-${crypto.randomUUID()}.jsonl`);
      const count = 200_000;
      {
        using out = await Deno.open(file, { write: true, create: true, truncate: true });
        const enc = new TextEncoder();
        const ts = "2026-12-01T10:00:00.000Z";
        let batch = JSON.stringify({
          type: "session",
          version: 3,
          id: "pi-big",
          timestamp: ts,
          cwd: "/tmp",
        }) +
          "\n";
        for (let i = 0; i < count; i++) {
          const content = i === count - 1 ? LAST : i % 2 ? [{ type: "text", text: "y" }] : "x";
          batch += JSON.stringify({
            type: "message",
            id: `e${i}`,
            parentId: i ? (shape === "chain" ? `e${i - 1}` : "e0") : null,
            timestamp: ts,
            message: { role: i % 2 ? "assistant" : "user", content, timestamp: 1 },
          }) + "\n";
          if (batch.length > 1 << 20) {
            await out.write(enc.encode(batch));
            batch = "";
          }
        }
        await out.write(enc.encode(batch));
      }
      try {
        const r = await runCliPeak(
          ["--root", root, "sessions", "import", file, "--from", "pi", "--workspace", ws],
          root,
        );
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.ok(r.stdout.includes(` ${shape === "chain" ? count : 2} message(s)`), r.stdout);
        const traces = join(root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID, "traces");
        assert.ok((await readAll(traces)).includes(LAST), "the last entry is imported");
        const bound = shape === "chain" ? PI_PEAK : PI_STAR_PEAK;
        assert.ok(r.peakBytes <= bound, `peak ${Math.round(r.peakBytes / MB)} MB`);
      } finally {
        await Deno.remove(file);
        await Deno.remove(ws, { recursive: true });
      }
    },
  ));
}

Deno.test(rootTest(
  "sessions import --from claude reads a subagent's .meta.json only up to 64 KiB",
  false,
  async (root) => {
    // Attack round 23 bounded A01: 60 MB metas beside each transcript were read whole and held.
    const { dir, subs, file } = await claudeFamily(root);
    await writeClaudeWithAgents(file, 2);
    for (let i = 0; i < 2; i++) {
      await writeClaude(join(subs, `agent-${i}.jsonl`), 4096);
      // The first one's meta is padded past 64 KiB: not read, its transcript not linked.
      const pad = i === 0 ? { pad: "x".repeat(70 * 1024) } : {};
      await writeMeta(subs, i, pad);
    }
    try {
      const r = await runCli([...importClaude(root, file, dir), "--verbose"]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.stdout.split("Imported subagent ").length - 1, 1, r.stdout);
      assert.match(r.stdout, /subagent transcript not linked to an Agent call ×1 .*agent-0\.jsonl/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
));

Deno.test(rootTest(
  "sessions import --from claude of 1000 children into a root of 1000 traces lists the root once, peak ≤ 300 MB",
  !CAN_MEASURE_PEAK,
  async (root) => {
    // Attack round 23 bounded B11: each child listed every trace of the root to choose its id, all
    // at once: 2,000 children into a root of 2,000 traces took 832 MB and 38 s.
    const { dir, subs, file } = await claudeFamily(root);
    await writeClaudeWithAgents(file, 1000);
    const child = join(dir, "child.jsonl");
    await writeClaude(child, 2000);
    for (let i = 0; i < 1000; i++) {
      await Deno.link(child, join(subs, `agent-${i}.jsonl`));
      await writeMeta(subs, i);
    }
    try {
      const args = importClaude(root, file, dir);
      const first = await runCli(args);
      assert.equal(first.code, 0, first.stderr);
      const r = await runCliPeak([...args, "--again"], root);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /and 1000 subagent session\(s\)/);
      assert.ok(r.peakBytes <= 300 * MB, `peak ${Math.round(r.peakBytes / MB)} MB`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
));
