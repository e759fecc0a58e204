import assert from "node:assert/strict";
import { renderCallResult } from "../../lib/mcp/mod.ts";

Deno.test("every content block type renders the way PenguinHarness renders it", () => {
  const r = renderCallResult({
    content: [
      { type: "text", text: "one" },
      { type: "image", data: "AAAA", mimeType: "image/gif" },
      { type: "audio", data: "BBBB", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///a.txt", name: "a", description: "the a file" },
      { type: "resource", resource: { uri: "mem://t", text: "inline text" } },
      { type: "resource", resource: { uri: "mem://b", blob: "CCCC" } },
      { type: "hologram" },
    ],
  });
  assert.deepEqual(r, {
    text: [
      "one",
      "[audio content: audio/wav]",
      "[resource: file:///a.txt] the a file",
      "inline text",
      "[resource: mem://b (binary)]",
      "[unsupported content type: hologram]",
    ].join("\n"),
    images: ["data:image/gif;base64,AAAA"],
    isError: false,
  });
});

Deno.test("structuredContent shows only when there is no text, and isError without text says so", () => {
  assert.equal(
    renderCallResult({ content: [], structuredContent: { a: 1 } }).text,
    '{\n  "a": 1\n}',
  );
  assert.equal(
    renderCallResult({ content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } }).text,
    "t",
  );
  assert.deepEqual(renderCallResult({ content: [], isError: true }), {
    text: "[tool reported an error with no message]",
    images: [],
    isError: true,
  });
  assert.equal(
    renderCallResult({ isError: true, content: [{ type: "text", text: "nope" }] }).text,
    "nope",
  );
});
