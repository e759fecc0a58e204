// Bounded memory where penguin reads what the model or an archive supplies,
// measured on real processes: the sandboxed tool host of a `penguin run`
// whose model edits a 12 GiB sparse file or replaces 7.8 million matches,
// `penguin skills install` / `penguin agent import` given a gzip bomb, `agent
// import` of a snapshot holding 500 MiB of zeros (just under its limit), and
// `penguin agent snapshot` of a state holding a 1 TiB sparse file, and
// `penguin skills list` of a 24 MiB SKILL.md, and 24 read_image calls of 4.7 MB PNGs in one
// response (each peak ≤ 300 MB).
import assert from "node:assert/strict";
import { HISTORY_IMAGE_NOTE } from "../../lib/agent/_image_window.ts";
import { join } from "node:path";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, mcpAddArgs, runCli, runCliOk } from "../support/cli.ts";
import { makeRoot, withRoot } from "../support/roots.ts";
import { toolOutputsById } from "../agent/_subagent_support.ts";
import { writeTarGz } from "../support/tar_stream.ts";
import { filesUnder } from "../support/files_under.ts";
import {
  CAN_MEASURE_PEAK,
  descendantsWithArg,
  peakRss,
  runCliPeak,
} from "../support/peak_memory.ts";

const MB = 1000 * 1000;
/** The most a process reading hostile input may hold at its peak. */
const PEAK_LIMIT = 300 * MB;

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

/** A turn with the one call `c_edit`: edit_file of "a" into "b" in `file`, with `extra` arguments. */
const editAToB = (file: string, extra: Record<string, unknown> = {}) =>
  turn.of(item.toolCall("edit_file", {
    file_path: file,
    old_string: "a",
    new_string: "b",
    ...extra,
  }, { id: "c_edit" }));

Deno.test({
  name:
    "edit_file and read_file on a 12 GiB sparse file: refused or read in part, tool host peak ≤ 300 MB",
  ignore: !SANDBOX,
  async fn() {
    const peaks: number[][] = [];
    const seen = { root: "" };
    const measure = () => {
      const hosts = descendantsWithArg("__tool-host", seen.root);
      peaks.push(hosts.map((pid) => peakRss(pid) ?? 0));
    };
    const server = await startModelServer({
      handler: (_req, index) => {
        if (index === 0) {
          return editAToB("big.txt");
        }
        measure();
        if (index === 1) {
          return turn.of(item.toolCall("read_file", { file_path: "big.txt" }, { id: "c_read" }));
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    seen.root = sb.root;
    try {
      const big = join(sb.workspace, "big.txt");
      {
        using f = await Deno.open(big, { write: true, create: true });
        await f.truncate(12 * 1024 ** 3);
      }
      const r = await runCli(inRoot(sb, "run", "-m", "Edit big.txt."));
      assert.equal(r.code, 0, r.stderr);
      const outputs = toolOutputsById(server.requests);
      assert.match(
        outputs.get("c_edit")!,
        /^Cannot edit "big\.txt": it is 12 GiB; edit_file reads files up to 16 MiB\./,
      );
      assert.match(outputs.get("c_read")!, /binary file/);
      assert.equal(peaks.length, 2);
      for (const seenPeaks of peaks) {
        assert.equal(seenPeaks.length, 1, "one tool host of this run was alive");
        assert.ok(
          seenPeaks[0]! > 0 && seenPeaks[0]! <= PEAK_LIMIT,
          `tool host peak ${seenPeaks[0]! / MB} MB`,
        );
      }
      assert.equal((await Deno.stat(big)).size, 12 * 1024 ** 3);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name:
    "four read_file calls of 9 MiB of empty lines with a huge limit: cut to the output, tool host peak ≤ 300 MB",
  ignore: !SANDBOX,
  async fn() {
    const peaks: number[] = [];
    const seen = { root: "" };
    const files = [1, 2, 3, 4].map((i) => `empty${i}.txt`);
    const server = await startModelServer({
      handler: (_req, index) => {
        if (index === 0) {
          return turn.of(
            ...files.map((f, i) =>
              item.toolCall("read_file", { file_path: f, limit: 100_000_000 }, { id: `c_read${i}` })
            ),
          );
        }
        for (const pid of descendantsWithArg("__tool-host", seen.root)) {
          peaks.push(peakRss(pid) ?? 0);
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    seen.root = sb.root;
    try {
      const lines = 9 * 1024 * 1024;
      for (const f of files) {
        await Deno.writeFile(join(sb.workspace, f), new Uint8Array(lines).fill(0x0a));
      }
      const r = await runCli(inRoot(sb, "run", "-m", "Read them."));
      assert.equal(r.code, 0, r.stderr);
      assert.ok(peaks.length >= 1, "a tool host of this run was alive");
      for (const peak of peaks) {
        assert.ok(peak > 0 && peak <= PEAK_LIMIT, `tool host peak ${peak / MB} MB`);
      }
      const outputs = toolOutputsById(server.requests);
      for (let i = 0; i < files.length; i++) {
        const out = outputs.get(`c_read${i}`)!;
        assert.match(out, /^ {5}1\t\n {5}2\t\n/);
        assert.match(out, /\[file has more than \d+ lines; showing 1-\d+ \(output limit reached\)/);
      }
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name:
    "edit_file replace_all of 7.8 million one-line matches: written whole, summarized, tool host peak ≤ 300 MB",
  ignore: !SANDBOX,
  async fn() {
    const peaks: number[] = [];
    const seen = { root: "" };
    const server = await startModelServer({
      handler: (_req, index) => {
        if (index === 0) {
          return editAToB("many.txt", { replace_all: true });
        }
        for (const pid of descendantsWithArg("__tool-host", seen.root)) {
          peaks.push(peakRss(pid) ?? 0);
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    seen.root = sb.root;
    try {
      // 15 MiB of "a\n": the result has the same size, so the growth check lets it through.
      const size = 15 * 1024 * 1024;
      const many = join(sb.workspace, "many.txt");
      await Deno.writeFile(many, new TextEncoder().encode("a\n".repeat(size / 2)));
      const r = await runCli(inRoot(sb, "run", "-m", "Replace every a."));
      assert.equal(r.code, 0, r.stderr);
      // A tool host of this run was alive (one that is still winding down may be seen too).
      assert.ok(peaks.length >= 1, "a tool host of this run was alive");
      for (const peak of peaks) {
        assert.ok(peak > 0 && peak <= PEAK_LIMIT, `tool host peak ${peak / MB} MB`);
      }
      const output = toolOutputsById(server.requests).get("c_edit")!;
      assert.match(output, /^Replaced 7864320 occurrences in "many\.txt"\.\n\(no diff shown/);
      const after = await Deno.readFile(many);
      assert.equal(after.length, size);
      assert.equal(new TextDecoder().decode(after.subarray(0, 6)), "b\nb\nb\n");
      assert.ok(!after.includes(0x61), "every a was replaced");
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

/** The PNG chunk `type` holding `data`, with its length and CRC. */
function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const name = new TextEncoder().encode(type);
  let c = ~0;
  for (const part of [name, data]) {
    for (const b of part) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
  }
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(name, 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, ~c >>> 0);
  return out;
}

/** A real RGB PNG of `w` × `h` random pixels: it does not compress, so it is about 3 × w × h bytes. */
async function noisePng(w: number, h: number): Promise<Uint8Array> {
  const raw = new Uint8Array(h * (1 + w * 3)); // each scanline: filter 0, then its pixels
  for (let y = 0; y < h; y++) {
    crypto.getRandomValues(raw.subarray(y * (1 + w * 3) + 1, (y + 1) * (1 + w * 3)));
  }
  const deflated = new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"));
  const idat = new Uint8Array(await new Response(deflated).arrayBuffer());
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, w);
  new DataView(ihdr.buffer).setUint32(4, h);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
    pngChunk("IEND", new Uint8Array()),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (png.set(p, at), at + p.length), 0);
  return png;
}

// Attack round 19: read_image read at most 5 MiB a call, but nothing bounded a response's calls
// together; 24 of them took penguin to 675–774 MB and the tool host to 510–534 MB.
Deno.test({
  name:
    "24 read_image calls of 4.7 MB PNGs in one response: 4 images sent, the rest a note, peaks ≤ 300 MB",
  ignore: !SANDBOX || !CAN_MEASURE_PEAK,
  async fn() {
    const CALLS = 24, FILES = 8;
    const hostPeaks: number[] = [];
    const seen = { root: "" };
    const server = await startModelServer({
      handler: (_req, index) => {
        if (index === 0) {
          return turn.of(
            ...Array.from(
              { length: CALLS },
              (_, i) =>
                item.toolCall("read_image", { source: `i${i % FILES}.png` }, { id: `c${i}` }),
            ),
          );
        }
        for (const pid of descendantsWithArg("__tool-host", seen.root)) {
          hostPeaks.push(peakRss(pid) ?? 0);
        }
        return turn.text("done");
      },
    });
    const sb = await makeRoot(server, { visible: true });
    seen.root = sb.root;
    try {
      const png = await noisePng(1024, 1600);
      assert.ok(png.length > 4.6 * MB && png.length < 5 * 1024 * 1024, `${png.length} bytes`);
      for (let i = 0; i < FILES; i++) await Deno.writeFile(join(sb.workspace, `i${i}.png`), png);
      const r = await runCliPeak(inRoot(sb, "run", "-m", "Look at the images."), sb.base);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
      assert.ok(hostPeaks.length >= 1, "a tool host of this run was alive");
      for (const peak of hostPeaks) {
        assert.ok(peak > 0 && peak <= PEAK_LIMIT, `tool host peak ${peak / MB} MB`);
      }
      // Four images fit in the 20 MiB the images of a response may be together; the others
      // answer the note, and the request carries those four alone.
      const outputs = [...toolOutputsById(server.requests).values()];
      assert.equal(outputs.length, CALLS);
      const omitted = outputs.filter((o) =>
        o.includes("[image omitted: the images of this response passed 20 MiB; read fewer at once]")
      );
      assert.equal(omitted.length, CALLS - 4, outputs.join("\n"));
      const body = JSON.stringify(server.requests[1]!.body);
      assert.equal(body.match(/data:image\/png;base64,/g)?.length, 4);
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

// Each request resends the history: past 20 MiB of images, older tool outputs go without theirs.
Deno.test({
  name:
    "read_image over two responses: the next request keeps the newest 20 MiB of images, the trace all",
  ignore: !SANDBOX,
  async fn() {
    const server = await startModelServer({
      turns: [0, 1].map((t) =>
        turn.of(
          ...[0, 1, 2, 3].map((i) =>
            item.toolCall("read_image", { source: `i${i}.png` }, { id: `c${t}${i}` })
          ),
        )
      ).concat([turn.text("done")]),
    });
    const sb = await makeRoot(server, { visible: true });
    try {
      const png = await noisePng(1024, 1600);
      for (let i = 0; i < 4; i++) await Deno.writeFile(join(sb.workspace, `i${i}.png`), png);
      const r = await runCli(inRoot(sb, "run", "-m", "Look at the images."));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 3);
      const images = (body: unknown) =>
        JSON.stringify(body).match(/data:image\/png;base64,/g)?.length ?? 0;
      assert.deepEqual(server.requests.map((q) => images(q.body)), [0, 4, 4]);
      const outputs = toolOutputsById([server.requests[2]!]);
      for (let i = 0; i < 4; i++) {
        assert.ok(outputs.get(`c0${i}`)!.endsWith(HISTORY_IMAGE_NOTE), outputs.get(`c0${i}`));
        assert.doesNotMatch(outputs.get(`c1${i}`)!, /image omitted/);
      }
      let traced = 0;
      for (const f of await filesUnder(sb.root)) {
        if (f.endsWith(".jsonl")) traced += images(await Deno.readTextFile(f));
      }
      assert.equal(traced, 8, "the trace keeps every image");
    } finally {
      await server.close();
      await sb.cleanup();
    }
  },
});

/** Write a gzip file of `zeros` zero bytes (about 1 KB per MB) at `path`, streaming. */
async function gzipBomb(path: string, zeros: number): Promise<void> {
  const block = new Uint8Array(4 * 1024 * 1024);
  let sent = 0;
  const source = new ReadableStream<BufferSource>({
    pull(c) {
      if (sent >= zeros) return c.close();
      c.enqueue(block.subarray(0, Math.min(block.length, zeros - sent)));
      sent += block.length;
    },
  });
  using file = await Deno.open(path, { write: true, createNew: true });
  await source.pipeThrough(new CompressionStream("gzip")).pipeTo(file.writable, {
    preventClose: true,
  });
}

let bombAt: Promise<string> | undefined;

/** A 2 MB gzip file that unpacks to 2 GiB of zeros, made once for this file's tests. */
function bomb(): Promise<string> {
  return bombAt ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "penguin-bomb-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    const path = join(dir, "bomb.tar.gz");
    await gzipBomb(path, 2 * 1024 ** 3);
    return path;
  })();
}

Deno.test({
  name: "skills install of a gzip bomb is refused, naming the limit, with penguin's peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const archive = await bomb();
    assert.ok((await Deno.stat(archive)).size < 3 * MB);
    await withRoot(async (root) => {
      const r = await runCliPeak(["--root", root, "skills", "install", archive], root);
      assert.equal(r.code, 2, r.stderr); // a usage error: the archive given is not one
      assert.match(r.stderr, /bomb\.tar\.gz": more than 64 MiB once unpacked/);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
    });
  },
});

Deno.test({
  name: "agent import of a gzip bomb is refused, naming the limit, with penguin's peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    const archive = await bomb();
    await withRoot(async (root) => {
      const r = await runCliPeak(["--root", root, "agent", "import", archive, "--yes"], root);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /bomb\.tar\.gz": it unpacks to more than 512 MiB/);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
    });
  },
});

Deno.test({
  name:
    "agent snapshot of a state holding a 1 TiB sparse file is refused from its size, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      await runCliOk(mcpAddArgs(root, "x", "--no-test", "--", "true"));
      const state = join(root, "default_project", "agents", "default_agent", "agent_state");
      {
        using f = await Deno.open(join(state, "big.md"), { write: true, createNew: true });
        await f.truncate(2 ** 40);
      }
      const r = await runCliPeak(["--root", root, "agent", "snapshot"], root);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /more than 20000 files or 512 MiB/);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
    });
  },
});

Deno.test({
  name:
    "agent import of a 500 MiB file of zeros in a small snapshot streams it to disk, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      const archive = join(root, "zeros.tar.gz");
      const size = 500 * 1024 * 1024;
      await writeTarGz(archive, [
        { name: "agent_state/system_config.yaml", data: 'version: 99\nsystem_prompt: "p"\n' },
        { name: "agent_state/zeros.bin", zeros: size },
      ]);
      assert.ok((await Deno.stat(archive)).size < 2 * MB);
      const r = await runCliPeak(["--root", root, "agent", "import", archive, "--yes"], root);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Imported snapshot v99 into agent default_agent \(2 files\)/);
      const agent = join(root, "default_project", "agents", "default_agent");
      assert.equal((await Deno.stat(join(agent, "agent_state", "zeros.bin"))).size, size);
      const left = (await Array.fromAsync(Deno.readDir(agent))).map((e) => e.name)
        .filter((n) => n.startsWith("."));
      assert.deepEqual(left.filter((n) => n !== ".import.lock"), [], "no unpack or stage left");
    });
  },
});

Deno.test({
  name:
    "skills list reads only the head of a 24 MiB SKILL.md of CRLF lines: frontmatter shown, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    await withRoot(async (root) => {
      // Placed as an older install or a snapshot might have left it (installs now refuse it).
      const skill = join(
        root,
        "default_project",
        "agents",
        "default_agent",
        "agent_state",
        "skills",
        "big",
      );
      await Deno.mkdir(skill, { recursive: true });
      const head = "---\r\nname: big\r\ndescription: a large skill\r\n---\r\n";
      const body = new Uint8Array(24 * 1024 * 1024);
      body.set(new TextEncoder().encode(head));
      for (let i = head.length; i + 3 <= body.length; i += 3) body.set([0x78, 0x0d, 0x0a], i);
      await Deno.writeFile(join(skill, "SKILL.md"), body);
      const r = await runCliPeak(["--root", root, "skills", "list", "--json"], root);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).skills[0].description, "a large skill");
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
    });
  },
});

Deno.test({
  name:
    "agent import of a snapshot of 50,000 directories is refused, naming the entry limit, peak ≤ 300 MB",
  ignore: !CAN_MEASURE_PEAK,
  async fn() {
    // Attack round 25 bounded C13: only files were counted; 500,000 directories in a 4.4 MB
    // archive took an import 100 s and 350 MB.
    await withRoot(async (root) => {
      const archive = join(root, "dirs.tar.gz");
      await writeTarGz(archive, [
        { name: "agent_state/", data: "", type: "5" },
        { name: "agent_state/system_config.yaml", data: 'version: 99\nsystem_prompt: "p"\n' },
        ...Array.from({ length: 50_000 }, (_, i) => ({
          name: `agent_state/d${i}/`,
          data: "",
          type: "5",
        })),
      ]);
      const r = await runCliPeak(["--root", root, "agent", "import", archive, "--yes"], root);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /it holds more than 40000 entries \(files and directories\)/);
      assert.ok(r.peakBytes <= PEAK_LIMIT, `penguin peak ${r.peakBytes / MB} MB`);
      const agent = join(root, "default_project", "agents", "default_agent");
      const left = (await Array.fromAsync(Deno.readDir(agent))).map((e) => e.name)
        .filter((n) => n.startsWith(".") && n !== ".import.lock");
      assert.deepEqual(left, [], "no unpack left");
    });
  },
});
