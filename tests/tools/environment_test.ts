import assert from "node:assert/strict";
import { join } from "node:path";
import { modelMsg, toolCall, userText } from "../../lib/protocol/builders.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { executeTool, type ResponseImages } from "../../lib/tools/environment.ts";
import {
  imageDataBytes,
  PROCESS_IMAGES_MAX_BYTES,
  PROCESS_IMAGES_NOTE,
  RESPONSE_IMAGES_NOTE,
} from "../../lib/protocol/image_data.ts";
import { holdImages, imagesHeldBesides } from "../../lib/tools/image_ledger.ts";
import type { ArchiveWriter } from "../../lib/tools/_archive.ts";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import type { Secret } from "../../lib/tools/secret_mask.ts";
import type { ToolContext } from "../../lib/tools/context.ts";
import type { Tool, ToolDefinition, ToolEvent } from "../../lib/tools/tool.ts";
import { type Run, run, withDirs } from "./_support.ts";

function def(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name: "fake",
    description: "a test tool",
    parameters: { type: "object", properties: {} },
    permission: "r",
    timeoutMs: 0,
    maxOutputLength: 0,
    callDescription: false,
    ...overrides,
  };
}

function fake(
  body: (args: Record<string, unknown>, ctx: ToolContext) => AsyncIterable<ToolEvent>,
  overrides: Partial<ToolDefinition> = {},
): Tool {
  return { definition: def(overrides), run: body };
}

/** Resolves when the signal fires (never rejects). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function sha16(text: string): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 16);
}

/** The call ended failed with exactly `output`. */
function assertFailed(r: Run, output: string): void {
  assert.equal(r.output, output);
  assert.equal(r.status, "failed");
}

Deno.test("executeTool streams start, the tool's deltas, stop and the complete output in order", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: "hello " };
      yield { type: "delta", text: "world" };
    });
    const r = await run(tool, {}, d);
    assert.deepEqual(r.partials.map((p) => [p.event_type, p.output]), [
      ["start", ""],
      ["delta", "hello "],
      ["delta", "world"],
      ["stop", ""],
    ]);
    assert.equal(r.output, "hello world");
    assert.equal(r.status, "completed");
  });
});

Deno.test("an unknown tool becomes a failed 'Unknown tool: <name>' output", async () => {
  await withDirs(async (d) => {
    const r = await run(undefined, {}, d, { name: "no_such_tool" });
    assertFailed(r, "Unknown tool: no_such_tool");
    assert.equal(r.items.length, 4);
  });
});

Deno.test("empty, invalid and non-object argument JSON are failed outputs and the tool never runs", async () => {
  await withDirs(async (d) => {
    let ran = false;
    const tool = fake(async function* () {
      ran = true;
      yield { type: "delta", text: "ran" };
    });
    const empty = await run(tool, "  ", d);
    assert.equal(
      empty.output,
      'Tool call "fake" failed: the arguments field is empty. Re-issue the call with a complete JSON object.',
    );
    assert.equal(empty.status, "failed");
    const bad = await run(tool, '{"a": ', d);
    assert.match(
      bad.output,
      /^Tool call "fake" failed: the arguments are not valid JSON \(.+\)\. Re-issue the call with one complete, valid JSON object\.$/,
    );
    assert.equal(bad.status, "failed");
    const arr = await run(tool, "[1]", d);
    assert.match(
      arr.output,
      /^Tool call "fake" failed: the arguments are an array, not a JSON object\./,
    );
    assert.equal(ran, false);
  });
});

Deno.test("a tool that yields nothing gets '[no output]'", async () => {
  await withDirs(async (d) => {
    const r = await run(fake(async function* () {}), {}, d);
    assert.equal(r.output, "[no output]");
    assert.equal(r.status, "completed");
  });
});

Deno.test("output over maxOutputLength keeps the head, adds notes and archives the full text (0600 in 0700)", async () => {
  await withDirs(async (d) => {
    const parts = ["a".repeat(30), "b".repeat(30), "c".repeat(60)];
    const tool = fake(async function* () {
      for (const text of parts) yield { type: "delta", text };
    }, { name: "big/tool", maxOutputLength: 50 });
    const r = await run(tool, {}, d, { id: "call_trunc" });
    const dir = join(d.scratch, "truncated-tool-output");
    const file = join(dir, `big_tool-${await sha16("call_trunc")}.log`);
    assert.equal(
      r.output,
      `${"a".repeat(30)}${
        "b".repeat(20)
      }\n[output truncated: exceeded 50 chars]\n[output archived: ${file}]`,
    );
    assert.equal(r.status, "completed");
    assert.equal(await Deno.readTextFile(file), parts.join(""));
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
  });
});

Deno.test("truncation without a scratchpad notes the cut but archives nothing", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: "x".repeat(20) };
    }, { maxOutputLength: 5 });
    const r = await run(tool, {}, { ws: d.ws });
    assert.equal(r.output, "xxxxx\n[output truncated: exceeded 5 chars]");
  });
});

Deno.test("an archive over its size limit keeps a UTF-8-safe head and tail around a gap marker", async () => {
  await withDirs(async (d) => {
    const text = "HEAD-" + "企鹅🐧".repeat(200) + "-TAIL";
    const tool = fake(async function* () {
      for (let i = 0; i < text.length; i += 7) yield { type: "delta", text: text.slice(i, i + 7) };
    }, { maxOutputLength: 10 });
    const r = await run(tool, {}, d, { archiveLimitBytes: 120, id: "call_ht" });
    const file = join(d.scratch, "truncated-tool-output", `fake-${await sha16("call_ht")}.log`);
    assert.ok(r.output.endsWith(`\n[output archived (1 MiB limit; head and tail kept): ${file}]`));
    const bytes = await Deno.readFile(file);
    assert.ok(bytes.length <= 120);
    const archived = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    assert.ok(archived.startsWith("HEAD-企鹅"));
    assert.ok(archived.endsWith("🐧-TAIL"));
    assert.ok(archived.includes("\n[archive middle truncated]\n"));
    assert.ok(!archived.includes("\uFFFD"));
  });
});

Deno.test("an archive write failure is noted and warned but never changes the status", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(
      join(d.root, "scratch"),
      "a file where the scratchpad's parent should be",
    );
    const warnings: string[] = [];
    const tool = fake(async function* () {
      yield { type: "delta", text: "0123456789" };
    }, { maxOutputLength: 4 });
    const r = await run(tool, {}, d, { warn: (l) => warnings.push(l) });
    assert.match(
      r.output,
      /^0123\n\[output truncated: exceeded 4 chars\]\n\[output archive failed: (ENOTDIR|ENOENT|EEXIST)\]$/,
    );
    assert.equal(r.status, "completed");
    assert.match(
      warnings[0]!,
      /^\[penguin\] tool "fake" truncated output archive write failed \([A-Z]+\)\.$/,
    );
  });
});

Deno.test("close-out notes come in order: truncation, archive, tool note; the tool's status is kept", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: "line\n".repeat(10) };
      yield { type: "result", status: "failed", note: "[exit code: 2]" };
    }, { maxOutputLength: 12 });
    const r = await run(tool, {}, { ws: d.ws });
    assertFailed(r, "line\nline\nli\n[output truncated: exceeded 12 chars]\n[exit code: 2]");
  });
});

Deno.test("a timeout aborts the tool and ends the call failed with the timeout note", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* (_args, ctx) {
      yield { type: "delta", text: "started" };
      await aborted(ctx.signal);
      yield { type: "result", status: "completed" };
    }, { timeoutMs: 20 });
    const r = await run(tool, {}, d);
    assertFailed(r, "started\n[tool timeout: exceeded 20ms]");
  });
});

Deno.test("a tool that ignores the abort is abandoned after the grace period", async () => {
  await withDirs(async (d) => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const tool = fake(async function* () {
      await stuck;
      yield { type: "delta", text: "too late" };
    }, { timeoutMs: 10 });
    try {
      const r = await run(tool, {}, d, { abortGraceMs: 10 });
      assertFailed(r, "[tool timeout: exceeded 10ms]");
    } finally {
      release();
    }
  });
});

Deno.test("a user abort wins over everything: aborted with the interruption note, output so far kept", async () => {
  await withDirs(async (d) => {
    const ac = new AbortController();
    const tool = fake(async function* (_args, ctx) {
      yield { type: "delta", text: "partial" };
      ac.abort();
      await aborted(ctx.signal);
      throw new DOMException("The operation was aborted.", "AbortError");
    }, { timeoutMs: 60_000 });
    const r = await run(tool, {}, d, { signal: ac.signal });
    assert.equal(r.output, "partial\n[interrupted: tool aborted by user]");
    assert.equal(r.status, "aborted");
  });
});

Deno.test("a signal aborted before the call starts still yields a complete aborted output", async () => {
  await withDirs(async (d) => {
    const ac = new AbortController();
    ac.abort();
    let sawAbort = false;
    const tool = fake(async function* (_args, ctx) {
      sawAbort = ctx.signal.aborted;
      yield* [];
    });
    const r = await run(tool, {}, d, { signal: ac.signal });
    assert.equal(sawAbort, true);
    assert.equal(r.output, "[interrupted: tool aborted by user]");
    assert.equal(r.status, "aborted");
  });
});

Deno.test("a thrown error becomes '[tool error] <message>' after the output so far", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: "before" };
      throw new Error("disk on fire");
    });
    const r = await run(tool, {}, d);
    assertFailed(r, "before\n[tool error] disk on fire");
  });
});

Deno.test("a timeout outranks the error the aborted tool throws", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* (_args, ctx) {
      await aborted(ctx.signal);
      yield* [];
      throw new Error("interrupted read");
    }, { timeoutMs: 15 });
    const r = await run(tool, {}, d);
    assertFailed(r, "[tool timeout: exceeded 15ms]");
  });
});

Deno.test("images arrive in one delta before stop, only when the call completes", async () => {
  await withDirs(async (d) => {
    const img = "data:image/png;base64,iVBORw0KGgo=";
    const ok = await run(
      fake(async function* () {
        yield { type: "delta", text: "image/png, 8 B" };
        yield { type: "images", images: [img] };
      }),
      {},
      d,
    );
    assert.deepEqual(ok.final.images, [img]);
    const withImages = ok.partials.filter((p) => p.images);
    assert.equal(withImages.length, 1);
    assert.equal(ok.partials.indexOf(withImages[0]!), ok.partials.length - 2);
    const failed = await run(
      fake(async function* () {
        yield { type: "images", images: [img] };
        yield { type: "result", status: "failed" };
      }),
      {},
      d,
    );
    assert.equal(failed.final.images, undefined);
    assert.equal(failed.output, "[no output]");
  });
});

// Attack round 19: the images of one response's calls are bounded together, not only per call.
Deno.test("the images of one response pass 20 MiB together: later ones are a note, not sent", async () => {
  await withDirs(async (d) => {
    // 9 MiB of image data each: two fit in the response's 20 MiB, the third does not.
    const img = `data:image/png;base64,${"A".repeat(12 * 1024 * 1024)}`;
    const tool = fake(async function* (_args, ctx) {
      assert.equal(ctx.responseId, "r1");
      yield { type: "delta", text: "image/png, 9.00 MB" };
      yield { type: "images", images: [img] };
    });
    const response: ResponseImages = { id: "r1", bytes: 0 };
    const outs = [];
    for (let i = 0; i < 3; i++) outs.push(await run(tool, {}, d, { responseImages: response }));
    assert.deepEqual(outs.map((o) => o.final.images?.length ?? 0), [1, 1, 0]);
    assert.equal(response.bytes, 18 * 1024 * 1024);
    assert.equal(outs[2]!.status, "completed");
    assert.equal(outs[2]!.output, `image/png, 9.00 MB\n${RESPONSE_IMAGES_NOTE}`);
    assert.ok(outs[2]!.partials.every((p) => p.images === undefined));
    // Another response starts afresh; a call outside any response is not bounded.
    holdImages(response, 0); // its calls are done (the tool phase lets go when they all are)
    const fresh: ResponseImages = { id: "r1", bytes: 0 };
    const next = await run(tool, {}, d, { responseImages: fresh });
    assert.equal(next.final.images?.length, 1);
    assert.equal(imageDataBytes(img), 9 * 1024 * 1024);
    holdImages(fresh, 0);
  });
});

// Attack round 20 (bounded repro02): each subagent had its own response and window bounds.
Deno.test("an image past what the process's other conversations leave is a note, until they let go", async () => {
  await withDirs(async (d) => {
    const img = `data:image/png;base64,${"A".repeat(12 * 1024 * 1024)}`; // 9 MiB
    const tool = fake(async function* () {
      yield { type: "delta", text: "image/png, 9.00 MB" };
      yield { type: "images", images: [img] };
    });
    const other = {}; // another conversation: its window and running response
    holdImages(other, PROCESS_IMAGES_MAX_BYTES - 8 * 1024 * 1024);
    try {
      const response: ResponseImages = { id: "p1", bytes: 0 };
      const refused = await run(tool, {}, d, { responseImages: response });
      assert.equal(refused.final.images, undefined);
      assert.equal(refused.output, `image/png, 9.00 MB\n${PROCESS_IMAGES_NOTE}`);
      assert.equal(response.bytes, 0);
      holdImages(other, 0);
      const kept = await run(tool, {}, d, { responseImages: response });
      assert.equal(kept.final.images?.length, 1);
      // What this response holds now counts for every other conversation.
      assert.equal(imagesHeldBesides(other), 9 * 1024 * 1024);
      holdImages(response, 0);
      assert.equal(imagesHeldBesides(other), 0);
    } finally {
      holdImages(other, 0);
    }
  });
});

Deno.test("origin-tagged messages pass through untouched; untagged ones are dropped", async () => {
  await withDirs(async (d) => {
    const child: OmniMessage = modelMsg(userText("hi", "parent_agent"), ["session-child"]);
    const stray: OmniMessage = modelMsg(userText("stray"));
    const r = await run(
      fake(async function* () {
        yield { type: "forward", message: child };
        yield { type: "forward", message: stray };
        yield { type: "delta", text: "done" };
      }),
      {},
      d,
    );
    const forwarded = r.items.filter((i) => i.type === "forwarded");
    assert.equal(forwarded.length, 1);
    assert.equal(forwarded[0]!.type === "forwarded" && forwarded[0]!.message, child);
    assert.equal(r.output, "done");
  });
});

Deno.test("truncation never splits a surrogate pair", async () => {
  await withDirs(async (d) => {
    const r = await run(
      fake(async function* () {
        yield { type: "delta", text: "ab🐧cd" };
      }, { maxOutputLength: 3 }),
      {},
      { ws: d.ws },
    );
    assert.equal(r.output, "ab\n[output truncated: exceeded 3 chars]");
  });
});

Deno.test("maxOutputLength <= 0 lifts the tool's own cap", async () => {
  await withDirs(async (d) => {
    const big = "z".repeat(100_000);
    const r = await run(
      fake(async function* () {
        yield { type: "delta", text: big };
      }, { maxOutputLength: 0 }),
      {},
      d,
    );
    assert.equal(r.output, big);
  });
});

Deno.test("held output stops at 8 Mi characters whatever maxOutputLength says (0 too); the rest is archived", async () => {
  const HELD_OUTPUT_LIMIT = 8 * 1024 * 1024; // documented in docs/security.md, Bounded reads
  await withDirs(async (d) => {
    const chunk = "y".repeat(1024 * 1024);
    const chunks = HELD_OUTPUT_LIMIT / chunk.length + 1;
    const cases: [number, string][] = [[0, "call_0"], [-1, "call_neg"], [1e12, "call_big"]];
    for (const [max, id] of cases) {
      const r = await run(
        fake(async function* () {
          for (let i = 0; i < chunks; i++) yield { type: "delta", text: chunk };
        }, { maxOutputLength: max }),
        {},
        d,
        { id },
      );
      const file = join(
        d.scratch,
        "truncated-tool-output",
        `fake-${await sha16(id)}.log`,
      );
      const notes = `\n[output truncated: exceeded ${HELD_OUTPUT_LIMIT} chars]\n` +
        `[output archived (8 MiB limit; head and tail kept): ${file}]`;
      assert.equal(r.output.length, HELD_OUTPUT_LIMIT + notes.length, `maxOutputLength ${max}`);
      assert.ok(r.output.endsWith(notes), r.output.slice(HELD_OUTPUT_LIMIT));
      assert.equal(r.status, "completed");
      assert.ok((await Deno.stat(file)).size > 0, "the rest is in the archive");
    }
  });
});

Deno.test("a consumer that stops early lets the tool clean up", async () => {
  await withDirs(async (d) => {
    let cleaned = false;
    const tool = fake(async function* () {
      try {
        yield { type: "delta", text: "one" };
        yield { type: "delta", text: "two" };
      } finally {
        cleaned = true;
      }
    });
    const gen = executeTool(tool, toolCall("fake", "{}", "call_early"), {
      workspace: d.ws,
      sessionId: "s",
    });
    for await (const item of gen) {
      if (item.type === "partial_tool_call_output" && item.event_type === "delta") break;
    }
    await Promise.resolve();
    assert.equal(cleaned, true);
  });
});

Deno.test("the tool receives the session facts and its own call id", async () => {
  await withDirs(async (d) => {
    let seen: ToolContext | undefined;
    await run(
      fake(async function* (_a, ctx) {
        seen = ctx;
        yield* [];
      }),
      {},
      d,
      { id: "call_ctx" },
    );
    assert.equal(seen?.workspace, d.ws);
    assert.equal(seen?.scratchpad, d.scratch);
    assert.equal(seen?.sessionId, "session-test");
    assert.equal(seen?.toolCallId, "call_ctx");
  });
});

Deno.test("the archive is exact up to 8 MiB − 1 byte and head-and-tail beyond", async () => {
  await withDirs(async (d) => {
    const limit = 8 * 1024 * 1024 - 1;
    const emit = (n: number) =>
      fake(async function* () {
        const chunk = "0123456789abcdef".repeat(4096); // 64 KiB
        let left = n;
        while (left > 0) {
          yield { type: "delta", text: chunk.slice(0, Math.min(left, chunk.length)) };
          left -= chunk.length;
        }
      }, { maxOutputLength: 10 });
    const exact = await run(emit(limit), {}, d, { id: "call_exact" });
    const exactFile = join(
      d.scratch,
      "truncated-tool-output",
      `fake-${await sha16("call_exact")}.log`,
    );
    assert.ok(exact.output.endsWith(`\n[output archived: ${exactFile}]`));
    const data = await Deno.readFile(exactFile);
    assert.equal(data.length, limit);
    assert.equal(new TextDecoder().decode(data.subarray(0, 20)), "0123456789abcdef0123");
    const over = await run(emit(limit + 1), {}, d, { id: "call_over" });
    const overFile = join(
      d.scratch,
      "truncated-tool-output",
      `fake-${await sha16("call_over")}.log`,
    );
    assert.ok(
      over.output.endsWith(`\n[output archived (8 MiB limit; head and tail kept): ${overFile}]`),
    );
    const cut = await Deno.readTextFile(overFile);
    assert.ok(new TextEncoder().encode(cut).length <= limit);
    assert.ok(cut.includes("\n[archive middle truncated]\n"));
  });
});

const TOKEN = "tok-4e1d9c0b7a65f3";
const API_KEY = "sk-proj-Zx9QwErTyUiOpAsDfGh";
const KEY_SECRET: Secret = { kind: "api_key", name: "OPENAI_API_KEY", value: API_KEY };

/** Every 6-char window of `secret` (any of them in an output is a leak). */
function assertNoPiece(text: string, secret: string): void {
  for (let i = 0; i + 6 <= secret.length; i++) {
    assert.ok(!text.includes(secret.slice(i, i + 6)), `no piece of the secret in ${text}`);
  }
}

Deno.test("a vault value and an API key split over two and three deltas are masked in every delta and the output", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: `token=${TOKEN.slice(0, 4)}` };
      yield { type: "delta", text: TOKEN.slice(4, 9) };
      yield { type: "delta", text: `${TOKEN.slice(9)}\nkey=${API_KEY.slice(0, 12)}` };
      yield { type: "delta", text: `${API_KEY.slice(12)} end` };
    });
    const r = await run(tool, {}, d, {
      ctx: { vault: { MY_TOKEN: TOKEN }, secrets: [KEY_SECRET] },
    });
    assert.equal(
      r.output,
      "token=[redacted:vault:MY_TOKEN]\nkey=[redacted:api_key:OPENAI_API_KEY] end",
    );
    for (const p of r.partials) {
      assertNoPiece(p.output, TOKEN);
      assertNoPiece(p.output, API_KEY);
    }
  });
});

Deno.test("a secret prefix held back at the end of the output is released unchanged", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: "ends with tok-4e" };
    });
    const r = await run(tool, {}, d, { ctx: { vault: { MY_TOKEN: TOKEN } } });
    assert.equal(r.output, "ends with tok-4e");
  });
});

Deno.test("vault values of the sandbox policy are masked as well as the context's", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      yield { type: "delta", text: `a=${TOKEN} b=other-secret-value` };
    });
    const sandbox = createPolicy({ workspace: d.ws, vault: { POLICY_KEY: "other-secret-value" } });
    const r = await run(tool, {}, d, { ctx: { vault: { MY_TOKEN: TOKEN }, sandbox } });
    assert.equal(r.output, "a=[redacted:vault:MY_TOKEN] b=[redacted:vault:POLICY_KEY]");
  });
});

Deno.test("truncation counts the masked text and the archive holds masked text only", async () => {
  await withDirs(async (d) => {
    const tool = fake(async function* () {
      for (let i = 0; i < 20; i++) {
        yield { type: "delta", text: `${TOKEN.slice(0, 7)}` };
        yield { type: "delta", text: `${TOKEN.slice(7)} ` };
      }
      yield { type: "delta", text: API_KEY };
    }, { maxOutputLength: 30 });
    const r = await run(tool, {}, d, {
      id: "call_masked_archive",
      ctx: { vault: { MY_TOKEN: TOKEN }, secrets: [KEY_SECRET] },
    });
    const file = join(
      d.scratch,
      "truncated-tool-output",
      `fake-${await sha16("call_masked_archive")}.log`,
    );
    const archived = await Deno.readTextFile(file);
    assert.equal(
      archived,
      "[redacted:vault:MY_TOKEN] ".repeat(20) + "[redacted:api_key:OPENAI_API_KEY]",
    );
    assertNoPiece(archived, TOKEN);
    assertNoPiece(archived, API_KEY);
    assert.equal(
      r.output,
      `[redacted:vault:MY_TOKEN] [red\n[output truncated: exceeded 30 chars]\n[output archived: ${file}]`,
    );
  });
});

Deno.test("the tool's note and a thrown error message are masked", async () => {
  await withDirs(async (d) => {
    const noted = fake(async function* () {
      yield { type: "result", status: "failed", note: `[exit code: 1] ${TOKEN}` };
    });
    const a = await run(noted, {}, d, { ctx: { vault: { MY_TOKEN: TOKEN } } });
    assert.equal(a.output, "[exit code: 1] [redacted:vault:MY_TOKEN]");
    const thrower = fake(async function* () {
      yield { type: "delta", text: "before" };
      throw new Error(`cannot use ${API_KEY}`);
    });
    const b = await run(thrower, {}, d, { ctx: { secrets: [KEY_SECRET] } });
    assert.equal(b.output, "before\n[tool error] cannot use [redacted:api_key:OPENAI_API_KEY]");
  });
});

Deno.test("truncated output goes to the archive file as it arrives; memory holds none of it", async () => {
  await withDirs(async (d) => {
    const limit = 64 * 1024;
    const chunk = "0123456789abcdef".repeat(256); // 4 KiB
    const chunks = 200; // 800 KiB, far over the archive limit
    const file = join(d.scratch, "truncated-tool-output", `fake-${await sha16("call_stream")}.log`);
    let writer: ArchiveWriter | undefined;
    const sizesOnDisk: number[] = [];
    const held: number[] = [];
    const tool = fake(async function* () {
      for (let i = 0; i < chunks; i++) {
        yield { type: "delta", text: chunk };
        // Back here, executeTool has handled chunk i: before the limit it must be on disk already.
        if (writer) {
          sizesOnDisk.push(await Deno.stat(file).then((st) => st.size, () => 0));
          held.push(writer.heldBytes);
        }
      }
    }, { maxOutputLength: 10 });
    const r = await run(tool, {}, d, {
      id: "call_stream",
      archiveLimitBytes: limit,
      onArchive: (w) => (writer = w),
    });
    assert.ok(r.output.endsWith(`(1 MiB limit; head and tail kept): ${file}]`));
    // Chunk 0 made the archive start. Up to the limit (16 chunks) each chunk is in the file, or
    // among the at most limit/8 bytes still being written, before the tool produces the next one.
    for (let i = 0; i < 16; i++) {
      assert.ok(sizesOnDisk[i]! >= (i + 1) * chunk.length - limit / 8, `chunk ${i} on disk`);
    }
    // Past the limit the file keeps its head and, past the limit, the tail's ring; memory holds
    // only the writer's blocks (an eighth of the limit and one block), never the tail.
    assert.ok(sizesOnDisk.slice(20).every((n) => n <= limit + limit / 2));
    assert.ok(held.every((n) => n <= limit / 4), `held ${Math.max(...held)} bytes`);
    const archived = await Deno.readTextFile(file);
    assert.ok(new TextEncoder().encode(archived).length <= limit);
    assert.ok(archived.startsWith(chunk.repeat(3)));
    assert.ok(archived.includes("\n[archive middle truncated]\n"));
    assert.ok(archived.endsWith(chunk.repeat(3)));
  });
});
