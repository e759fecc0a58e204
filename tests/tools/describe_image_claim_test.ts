// describe_image claims what its request to the vision model holds while in flight: the data URL as
// JSON text, as encoded bytes and as the runtime's copy it sends, three times the URL's length,
// together with the image's own claim, before the image is read (attack round 24 bounded R11:
// claimed only once read, twelve subagents describing at once still reached 347–361 MB).
import assert from "node:assert/strict";
import { createDescribeImageTool } from "../../lib/tools/describe_image.ts";
import type { FileToolContext, Tool } from "../../lib/tools/tool.ts";

Deno.test("describe_image claims three times the image's data URL while its request is in flight", async () => {
  const url = `data:image/png;base64,${"A".repeat(4000)}`;
  const readImage = {
    async *run() {
      yield { type: "images", images: [url] };
      yield { type: "result", status: "completed" };
    },
  } as unknown as Tool<FileToolContext>;
  const asked: string[] = [];
  const tool = createDescribeImageTool({
    readImage,
    describer: {
      modelId: "v",
      async *describe(imageUrl) {
        asked.push(imageUrl);
        yield "a square";
        return undefined;
      },
    },
  });
  const claims: [number, boolean | undefined][] = [];
  const ctx = {
    signal: new AbortController().signal,
    claimImage: (n: number, inFlight?: boolean) => {
      claims.push([n, inFlight]);
      return Promise.resolve(true);
    },
  } as unknown as FileToolContext;
  let text = "";
  for await (const ev of tool.run({ source: "pic.png" }, ctx)) {
    if (ev.type === "delta") text += ev.text;
  }
  assert.deepEqual(asked, [url]);
  assert.match(text, /a square/);
  assert.deepEqual(claims, [[3 * url.length, true]]);
});

/** A read_image that claims the image's size before it reads it, as the real one does. */
function claimingReader(size: number, url: string) {
  const reads: number[] = [];
  const readImage = {
    async *run(_args: unknown, ctx: FileToolContext) {
      const claim = ctx.claimImage ? await ctx.claimImage(size) : true;
      if (claim !== true) {
        yield { type: "delta", text: `refused: ${claim}` };
        yield { type: "result", status: "failed" };
        return;
      }
      reads.push(size);
      yield { type: "images", images: [url] };
      yield { type: "result", status: "completed" };
    },
  } as unknown as Tool<FileToolContext>;
  return { readImage, reads };
}

Deno.test("describe_image claims the request's share with the image's, before the image is read", async () => {
  const size = 3000;
  const url = `data:image/png;base64,${"A".repeat(4000)}`;
  const run = async (room: number) => {
    const { readImage, reads } = claimingReader(size, url);
    const asked: string[] = [];
    const tool = createDescribeImageTool({
      readImage,
      describer: {
        modelId: "v",
        async *describe(imageUrl) {
          asked.push(imageUrl);
          yield "a square";
          return undefined;
        },
      },
    });
    // The process's room for images: a claim past it is refused.
    let left = room;
    const claims: [number, boolean | undefined][] = [];
    const ctx = {
      signal: new AbortController().signal,
      claimImage: (n: number, inFlight?: boolean) => {
        claims.push([n, inFlight]);
        if (n > left) return Promise.resolve("process" as const);
        left -= n;
        return Promise.resolve(true as const);
      },
    } as unknown as FileToolContext;
    let text = "";
    for await (const ev of tool.run({ source: "pic.png" }, ctx)) {
      if (ev.type === "delta") text += ev.text;
    }
    return { reads, asked, claims, text };
  };
  // Room for the image but not for the request: refused before the image is read.
  const tight = await run(size + 100);
  assert.deepEqual(tight.reads, [], "the image is not read");
  assert.deepEqual(tight.asked, []);
  assert.equal(tight.claims.length, 1);
  assert.ok(tight.claims[0]![0] >= 3 * url.length, `claimed ${tight.claims[0]![0]}`);
  assert.match(tight.text, /refused: process/);
  // Room for both: the request's share, then the image's; nothing more once read.
  const roomy = await run(1_000_000);
  assert.deepEqual(roomy.reads, [size]);
  assert.deepEqual(roomy.asked, [url]);
  assert.deepEqual(roomy.claims.map(([, f]) => f), [true, undefined]);
  assert.equal(roomy.claims[1]![0], size);
  assert.ok(roomy.claims[0]![0] >= 3 * url.length);
});
