// read_image claims an image's size before it reads it. The claim used to be checked against the
// call's response alone, inside the tool host: with background subagents each reading images at
// once (a response of their own each), every image was read and sent to penguin, and only there
// refused for the process-wide bound, after the bytes had crossed (attack round 22 bounded: 461 to
// 566 MB). The claim now crosses the host's wire to penguin's ledger: past what the process's
// conversations may hold, the image is not read at all, and a granted claim counts for the other
// conversations until its call has delivered. In the tool host and in a worker (sandbox off).
import assert from "node:assert/strict";
import { join } from "node:path";
import { toolCall } from "../../lib/protocol/builders.ts";
import type { PartialToolCallOutput, ToolCallOutputMessage } from "../../lib/protocol/types.ts";
import { PROCESS_IMAGES_MAX_BYTES, PROCESS_IMAGES_NOTE } from "../../lib/protocol/image_data.ts";
import { createPolicy } from "../../lib/sandbox/mod.ts";
import { executeTool, type ResponseImages } from "../../lib/tools/environment.ts";
import { holdImages, imagesHeldBesides } from "../../lib/tools/image_ledger.ts";
import {
  createDescribeImageTool,
  createReadImageTool,
  DESCRIBE_IMAGE_DEFINITION,
  READ_IMAGE_DEFINITION,
} from "../../lib/tools/mod.ts";
import type { ImageClaim } from "../../lib/tools/tool.ts";
import { confinedFileTools } from "../../lib/tools/worker/mod.ts";
import { BWRAP_USABLE } from "../sandbox/_bwrap.ts";
import { visibleTempDir } from "../sandbox/_helpers.ts";

const MiB = 1024 * 1024;

/** A 2 MiB file with a PNG signature (read_image sniffs the type, it does not decode). */
function png(): Uint8Array {
  const bytes = new Uint8Array(2 * MiB);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

for (const mode of ["workspace-write", "off"] as const) {
  Deno.test({
    name: `read_image past the process's image bound is not read (${
      mode === "off" ? "worker" : "tool host"
    }), and a granted claim counts until delivered`,
    ignore: mode !== "off" && !BWRAP_USABLE,
    async fn() {
      const ws = await visibleTempDir("penguin-image-claims-");
      const tools = confinedFileTools();
      const other = {}; // another conversation: a subagent's window and running response
      try {
        await Deno.writeFile(join(ws, "a.png"), png());
        const read = tools.factories.read_image!(READ_IMAGE_DEFINITION);
        const call = async (response: ResponseImages, id: string) => {
          const partials: PartialToolCallOutput[] = [];
          let final: ToolCallOutputMessage | undefined;
          for await (
            const item of executeTool(read, toolCall("read_image", '{"source":"a.png"}', id), {
              workspace: ws,
              sessionId: "s",
              sandbox: { ...createPolicy({ workspace: ws }), mode },
            }, { warn: () => {}, responseImages: response })
          ) {
            if (item.type === "partial_tool_call_output") partials.push(item);
            else if (item.type === "tool_call_output") final = item;
          }
          return { final: final!, partials };
        };
        // 1 MiB left of the process's bound: the 2 MiB image is refused before it is read.
        holdImages(other, PROCESS_IMAGES_MAX_BYTES - 1 * MiB);
        const response: ResponseImages = { id: "r1", bytes: 0 };
        const refused = await call(response, "c1");
        assert.equal(refused.final.output, PROCESS_IMAGES_NOTE);
        assert.equal(refused.final.images, undefined);
        assert.deepEqual([response.bytes, response.reserved ?? 0], [0, 0]);
        // Room again: read and delivered, then counted as the response's.
        holdImages(other, 0);
        const kept = await call(response, "c2");
        assert.equal(kept.final.images?.length, 1, kept.final.output);
        assert.equal(imagesHeldBesides(other), 2 * MiB);
        assert.equal(response.reserved, 0);
        holdImages(response, 0);
      } finally {
        holdImages(other, 0);
        await tools.dispose();
        await Deno.remove(ws, { recursive: true });
      }
    },
  });
}

Deno.test("a granted image claim counts for the other conversations until the call has delivered", async () => {
  const ws = await visibleTempDir("penguin-image-claims-");
  const other = {};
  try {
    const response: ResponseImages = { id: "r2", bytes: 0 };
    const claims: Promise<ImageClaim>[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let claimed!: () => void;
    const bothClaimed = new Promise<void>((resolve) => (claimed = resolve));
    // A tool that claims twice, then waits: its claims are counted while it runs.
    const tool = {
      definition: { ...READ_IMAGE_DEFINITION, name: "claimer" },
      async *run(
        _args: Record<string, unknown>,
        ctx: { claimImage?: (n: number) => Promise<ImageClaim> },
      ) {
        claims.push(ctx.claimImage!(3 * MiB), ctx.claimImage!(4 * MiB));
        await Promise.all(claims);
        claimed();
        await gate;
        yield { type: "delta" as const, text: "nothing read" };
      },
    };
    const done = (async () => {
      for await (
        const _ of executeTool(tool, toolCall("claimer", "{}", "c3"), {
          workspace: ws,
          sessionId: "s",
        }, { warn: () => {}, responseImages: response })
      ) { /* drained */ }
    })();
    await bothClaimed;
    assert.deepEqual(await Promise.all(claims), [true, true]);
    assert.equal(imagesHeldBesides(other), 7 * MiB, "claimed, not yet delivered");
    // Another conversation's claim sees that room taken.
    holdImages(other, PROCESS_IMAGES_MAX_BYTES - 8 * MiB);
    const again = await new Promise<ImageClaim>((resolve) => {
      const t = {
        definition: { ...READ_IMAGE_DEFINITION, name: "claimer2" },
        async *run(
          _a: Record<string, unknown>,
          ctx: { claimImage?: (n: number) => Promise<ImageClaim> },
        ) {
          resolve(await ctx.claimImage!(2 * MiB));
          yield { type: "delta" as const, text: "x" };
        },
      };
      (async () => {
        for await (
          const _ of executeTool(t, toolCall("claimer2", "{}", "c4"), {
            workspace: ws,
            sessionId: "s",
          }, { warn: () => {}, responseImages: { id: "r3", bytes: 0 } })
        ) { /* drained */ }
      })();
    });
    assert.equal(again, "process");
    release();
    await done;
    // The call delivered nothing: its claims are given back.
    assert.equal(response.reserved, 0);
    holdImages(other, 0);
    assert.equal(imagesHeldBesides(other), 0);
  } finally {
    holdImages(other, 0);
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("read_image of a URL claims the image before it reads the body (round 23 bounded A05)", async () => {
  const ws = await visibleTempDir("penguin-image-claims-");
  const other = {};
  const body = png();
  let served = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    served++;
    return new Response(body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": "image/png" },
    });
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/a.png`;
    const read = createReadImageTool(READ_IMAGE_DEFINITION);
    const call = async (response: ResponseImages, id: string) => {
      let final: ToolCallOutputMessage | undefined;
      for await (
        const item of executeTool(
          read,
          toolCall("read_image", JSON.stringify({ source: url }), id),
          { workspace: ws, sessionId: "s" },
          { warn: () => {}, responseImages: response },
        )
      ) if (item.type === "tool_call_output") final = item;
      return final!;
    };
    holdImages(other, PROCESS_IMAGES_MAX_BYTES - 1 * MiB);
    const response: ResponseImages = { id: "u1", bytes: 0 };
    const refused = await call(response, "u-c1");
    assert.equal(refused.output, PROCESS_IMAGES_NOTE);
    assert.equal(refused.images, undefined);
    holdImages(other, 0);
    const kept = await call(response, "u-c2");
    assert.equal(kept.images?.length, 1, kept.output);
    assert.equal(served, 2);
    holdImages(response, 0);
  } finally {
    holdImages(other, 0);
    await server.shutdown();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("describe_image holds its request's image data against the process's bound while it runs (round 23 B6)", async () => {
  const ws = await visibleTempDir("penguin-image-claims-");
  const other = {};
  try {
    await Deno.writeFile(join(ws, "a.png"), png());
    let asked = 0;
    let release!: () => void;
    const answered = new Promise<void>((resolve) => (release = resolve));
    let seen!: () => void;
    const inModel = new Promise<void>((resolve) => (seen = resolve));
    const describe = createDescribeImageTool({
      readImage: createReadImageTool(READ_IMAGE_DEFINITION),
      describer: {
        modelId: "vision",
        async *describe() {
          asked++;
          seen();
          await answered;
          yield "a picture";
          return undefined;
        },
      },
    }, DESCRIBE_IMAGE_DEFINITION);
    const run = (response: ResponseImages, id: string) =>
      (async () => {
        let final: ToolCallOutputMessage | undefined;
        for await (
          const item of executeTool(
            describe,
            toolCall("describe_image", '{"source":"a.png"}', id),
            { workspace: ws, sessionId: "s" },
            { warn: () => {}, responseImages: response },
          )
        ) if (item.type === "tool_call_output") final = item;
        return final!;
      })();
    const response: ResponseImages = { id: "d1", bytes: 0 };
    const first = run(response, "d-c1");
    await inModel;
    // The image (2 MiB) and twice its data URL: counted for the other conversations meanwhile.
    assert.ok(imagesHeldBesides(other) > 7 * MiB, `${imagesHeldBesides(other)}`);
    // A second describe of another conversation, with no room left, does not reach the model.
    holdImages(other, PROCESS_IMAGES_MAX_BYTES - imagesHeldBesides(other) - 3 * MiB);
    const refused = await run({ id: "d2", bytes: 0 }, "d-c2");
    assert.match(refused.output, /\[image omitted: the images of this session and its subagents/);
    assert.equal(asked, 1);
    release();
    const done = await first;
    assert.match(done.output, /a picture/);
    // Nothing it claimed is held once it ended (it returned no image).
    holdImages(other, 0);
    assert.equal(imagesHeldBesides(other), 0);
    holdImages(response, 0);
  } finally {
    holdImages(other, 0);
    await Deno.remove(ws, { recursive: true });
  }
});
