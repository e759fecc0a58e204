// describe_image claims what its request to the vision model holds while in flight: the data URL as
// JSON text, as encoded bytes and as the runtime's copy it sends, three times the URL's length
// (attack round 24 bounded R11: claimed twice, twelve subagents describing at once still reached
// 312–371 MB).
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
