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

Deno.test("an image whose mimeType is no image/<subtype>, or holds a secret, is refused with a note (red team A9)", () => {
  const V = "Vx6btVgIX3axkJnUZscjGfWPVUZW";
  const mask = (t: string) => t.replaceAll(V, "[redacted:vault:ATK_V]");
  const r = renderCallResult({
    content: [
      { type: "image", data: "AAAA", mimeType: "image/png" },
      { type: "image", data: "BBBB", mimeType: `image/${V}` },
      { type: "image", data: "CCCC", mimeType: `image/${V.toLowerCase()}` },
      { type: "image", data: "DDDD", mimeType: "image/png;x=1" },
      { type: "image", data: "EEEE", mimeType: `image/${"a".repeat(41)}` },
      { type: "image", data: "FFFF", mimeType: "image/svg+xml" },
    ],
  }, (t) => mask(t).replaceAll(V.toLowerCase(), "[redacted:vault:ATK_L]"));
  assert.deepEqual(r.images, ["data:image/png;base64,AAAA", "data:image/svg+xml;base64,FFFF"]);
  assert.equal(
    r.text,
    Array(4).fill("[image refused: its mimeType is not image/<subtype>]").join("\n"),
  );
  assert.ok(!JSON.stringify(r).toLowerCase().includes(V.toLowerCase()));
});

Deno.test("an image whose base64 data spells a secret, whole or in part, is refused with a note (red team A10)", () => {
  const V = "VxWXWjDlRXEEk9tq2lm7rv4w";
  const mask = (t: string) => t.replaceAll(V.slice(4, 16), "[redacted:vault:ATK_V]");
  const r = renderCallResult({
    content: [
      { type: "image", data: V, mimeType: "image/png" },
      { type: "image", data: `AAAA${V}AAAA`, mimeType: "image/png" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ],
  }, mask);
  assert.deepEqual(r.images, ["data:image/png;base64,iVBORw0KGgo="]);
  assert.equal(r.text, Array(2).fill("[image refused: its data holds a secret]").join("\n"));
  assert.ok(!JSON.stringify(r).includes(V.slice(4, 16)));
});

Deno.test("an image's base64 broken by whitespace is checked joined; data not base64 is refused (round 23 B8)", () => {
  const V = "VxWXWjDlRXEEk9tq2lm7rv4w";
  const mask = (t: string) => t.replaceAll(V.slice(4, 16), "[redacted:vault:ATK_V]");
  // A newline every 8 characters, a space every 6: each piece alone holds no secret.
  const wrapped = V.match(/.{1,8}/g)!.join("\n");
  const spaced = `AAAA${V}AAAA`.match(/.{1,6}/g)!.join(" ");
  const r = renderCallResult({
    content: [
      { type: "image", data: wrapped, mimeType: "image/png" },
      { type: "image", data: spaced, mimeType: "image/png" },
      { type: "image", data: "iVBO\r\nRw0K\tGgo=", mimeType: "image/png" },
      { type: "image", data: "iVBORw0K-_go", mimeType: "image/png" },
      { type: "image", data: "iVB=ORw0", mimeType: "image/png" },
    ],
  }, mask);
  assert.deepEqual(r.images, ["data:image/png;base64,iVBORw0KGgo="]);
  assert.equal(
    r.text,
    [
      "[image refused: its data holds a secret]",
      "[image refused: its data holds a secret]",
      "[image refused: its data is not base64]",
      "[image refused: its data is not base64]",
    ].join("\n"),
  );
  assert.ok(!JSON.stringify(r).includes(V.slice(4, 16)));
});
