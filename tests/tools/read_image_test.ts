// read_image: real PNG/JPEG bytes built here, sniffing, size caps, confinement, URLs on 127.0.0.1.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createReadImageTool } from "../../lib/tools/read_image.ts";
import { formatBytes, MAX_IMAGE_BYTES, sniffImage } from "../../lib/tools/mod.ts";
import { run, withDirs } from "./_support.ts";

const tool = createReadImageTool();

function crc32(bytes: Uint8Array): number {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const u32 = (n: number) => new Uint8Array([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const t = new TextEncoder().encode(type);
  return concat([u32(data.length), t, data, u32(crc32(concat([t, data])))]);
}

/** A real RGB PNG of one colour (zlib-compressed scanlines, CRCs). */
async function makePng(
  w: number,
  h: number,
  rgb: [number, number, number],
): Promise<Uint8Array<ArrayBuffer>> {
  const raw = new Uint8Array(h * (1 + w * 3));
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) raw.set(rgb, y * (1 + w * 3) + 1 + x * 3);
  }
  const deflated = new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"));
  const idat = new Uint8Array(await new Response(deflated).arrayBuffer());
  const ihdr = concat([u32(w), u32(h), new Uint8Array([8, 2, 0, 0, 0])]);
  return concat([
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
    pngChunk("IEND", new Uint8Array()),
  ]);
}

/** A real baseline 8×8 grey JPEG: one block, DC 0, end-of-block, one-code Huffman tables. */
function makeJpeg(): Uint8Array {
  const seg = (marker: number, body: number[]) => [
    0xff,
    marker,
    (body.length + 2) >> 8,
    (body.length + 2) & 255,
    ...body,
  ];
  const oneCode = (tableClass: number) => [tableClass, 1, ...new Array(15).fill(0), 0x00];
  return new Uint8Array([
    0xff,
    0xd8,
    ...seg(0xdb, [0x00, ...new Array(64).fill(1)]),
    ...seg(0xc0, [8, 0, 8, 0, 8, 1, 1, 0x11, 0]),
    ...seg(0xc4, oneCode(0x00)),
    ...seg(0xc4, oneCode(0x10)),
    ...seg(0xda, [1, 1, 0x00, 0, 63, 0]),
    0x3f,
    0xff,
    0xd9,
  ]);
}

function decodeDataUrl(url: string): { mime: string; bytes: Uint8Array } {
  const m = url.match(/^data:([^;]+);base64,(.*)$/);
  assert.ok(m, url.slice(0, 40));
  return { mime: m[1]!, bytes: Uint8Array.fromBase64(m[2]!) };
}

Deno.test("read_image returns a PNG and a JPEG from the workspace as data URLs", async () => {
  await withDirs(async (d) => {
    const png = await makePng(16, 8, [200, 30, 30]);
    const jpeg = makeJpeg();
    await Deno.writeFile(join(d.ws, "shot.png"), png);
    await Deno.mkdir(join(d.ws, "img"));
    await Deno.writeFile(join(d.ws, "img", "photo.bin"), jpeg); // the name does not matter
    for (
      const [source, bytes, mime] of [
        ["shot.png", png, "image/png"],
        [join(d.ws, "img", "photo.bin"), jpeg, "image/jpeg"],
      ] as const
    ) {
      const r = await run(tool, { source }, d);
      assert.equal(r.status, "completed");
      assert.equal(r.output, `${mime}, ${bytes.length} B`);
      assert.equal(r.final.images?.length, 1);
      const got = decodeDataUrl(r.final.images![0]!);
      assert.equal(got.mime, mime);
      assert.deepEqual(got.bytes, bytes);
    }
  });
});

Deno.test("read_image refuses files that are not PNG, JPEG, GIF or WebP whatever their name", async () => {
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "fake.png"), "<html>not an image</html>");
    const r = await run(tool, { source: "fake.png" }, d);
    assert.equal(r.status, "failed");
    assert.match(r.output, /not a PNG, JPEG, GIF or WebP image/);
    assert.equal(r.final.images, undefined);
    await Deno.writeFile(join(d.ws, "empty.png"), new Uint8Array());
    const e = await run(tool, { source: "empty.png" }, d);
    assert.equal(e.status, "failed");
    assert.match(e.output, /empty/);
  });
});

Deno.test("read_image refuses a file over 5 MiB, directories, missing files and paths outside", async () => {
  await withDirs(async (d) => {
    const big = new Uint8Array(MAX_IMAGE_BYTES + 1);
    big.set(await makePng(1, 1, [0, 0, 0]));
    await Deno.writeFile(join(d.ws, "big.png"), big);
    const r = await run(tool, { source: "big.png" }, d);
    assert.equal(r.status, "failed");
    assert.match(r.output, /over the 5 MB limit/);

    await Deno.mkdir(join(d.ws, "dir"));
    const dir = await run(tool, { source: "dir" }, d);
    assert.match(dir.output, /not a regular file/);
    const missing = await run(tool, { source: "nope.png" }, d);
    assert.match(missing.output, /^Image not found: "nope.png"/);

    await Deno.writeFile(join(d.outside, "secret.png"), await makePng(2, 2, [1, 2, 3]));
    for (const source of ["../outside/secret.png", join(d.outside, "secret.png")]) {
      const out = await run(tool, { source }, d);
      assert.equal(out.status, "failed");
      assert.match(out.output, /outside the workspace/);
      assert.equal(out.final.images, undefined);
    }
  });
});

Deno.test("read_image fetches URLs with a 5 MiB cap and checks the bytes, not the Content-Type", async () => {
  const png = await makePng(4, 4, [0, 128, 255]);
  const big = new Uint8Array(MAX_IMAGE_BYTES + 1);
  big.set(png);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/pic") return new Response(png, { headers: { "content-type": "image/png" } });
    if (path === "/lying") {
      return new Response("<html></html>", { headers: { "content-type": "image/png" } });
    }
    if (path === "/declared-big") return new Response(big); // Content-Length set
    if (path === "/streamed-big") {
      let sent = 0;
      return new Response(
        new ReadableStream({
          pull(c) {
            if (sent > MAX_IMAGE_BYTES) return c.close();
            const part = new Uint8Array(1024 * 1024);
            if (sent === 0) part.set(png);
            sent += part.length;
            c.enqueue(part);
          },
        }),
      );
    }
    return new Response("gone", { status: 404, statusText: "Not Found" });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  try {
    await withDirs(async (d) => {
      const ok = await run(tool, { source: `${base}/pic` }, d);
      assert.equal(ok.status, "completed");
      assert.equal(ok.output, `image/png, ${png.length} B`);
      assert.deepEqual(decodeDataUrl(ok.final.images![0]!).bytes, png);

      const lying = await run(tool, { source: `${base}/lying` }, d);
      assert.equal(lying.status, "failed");
      assert.match(
        lying.output,
        /not a PNG, JPEG, GIF or WebP image \(the server called it image\/png\)/,
      );

      const declared = await run(tool, { source: `${base}/declared-big` }, d);
      assert.equal(declared.status, "failed");
      assert.ok(declared.output.includes(`it is ${formatBytes(big.length)}, over the 5 MB limit`));

      const streamed = await run(tool, { source: `${base}/streamed-big` }, d);
      assert.equal(streamed.status, "failed");
      assert.match(streamed.output, /more than 5 MB, over the 5 MB limit/);

      const missing = await run(tool, { source: `${base}/missing` }, d);
      assert.equal(missing.status, "failed");
      assert.match(missing.output, /HTTP 404 Not Found/);

      const ftp = await run(tool, { source: "ftp://127.0.0.1/x.png" }, d);
      assert.match(ftp.output, /only http\(s\) URLs/);
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("sniffing recognises the four formats by their magic bytes only", async () => {
  const ascii = (s: string) => new TextEncoder().encode(s);
  assert.equal(sniffImage(await makePng(1, 1, [0, 0, 0])), "image/png");
  assert.equal(sniffImage(makeJpeg()), "image/jpeg");
  assert.equal(sniffImage(ascii("GIF89a\x01\x00\x01\x00")), "image/gif");
  assert.equal(sniffImage(ascii("GIF87a....")), "image/gif");
  assert.equal(sniffImage(ascii("RIFF\x10\x00\x00\x00WEBPVP8 ")), "image/webp");
  assert.equal(sniffImage(ascii("RIFF\x10\x00\x00\x00WAVEfmt ")), undefined);
  assert.equal(sniffImage(ascii("\x89PNG")), undefined, "a truncated signature is not enough");
  assert.equal(sniffImage(new Uint8Array()), undefined);
  assert.equal(formatBytes(812), "812 B");
  assert.equal(formatBytes(12_595), "12.3 KB");
});
