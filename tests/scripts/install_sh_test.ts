// install.sh, run by dash (`sh`, so a bashism fails) against fake release assets
// served from a loopback HTTP server.
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

/** The release target of this machine, as install.sh should detect it. */
const HOST_TARGET = `${Deno.build.arch}-${
  Deno.build.os === "darwin" ? "apple-darwin" : "unknown-linux-gnu"
}`;

/** A POSIX shell that is not bash: dash where it exists, else sh. */
const SH = (() => {
  for (const p of ["/usr/bin/dash", "/bin/dash"]) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // Not here.
    }
  }
  return "/bin/sh";
})();

/** How the fake release server answers a request for the binary. */
type BinaryMode = "ok" | "cut";

interface Release {
  /** The version served under /releases/download/v<version>/ and by /releases/latest. */
  version: string;
  /** The bytes of penguin-<HOST_TARGET>. */
  binary: Uint8Array;
  /** The SHA256SUMS text. */
  sums: string;
  binaryMode?: BinaryMode;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fake binary: not text, larger than one read, different each call. */
function fakeBinary(): Uint8Array {
  const bytes = new Uint8Array(200_000);
  crypto.getRandomValues(bytes.subarray(0, 65536));
  bytes.set(new TextEncoder().encode("\x7fELF fake penguin"), 0);
  return bytes;
}

/** SHA256SUMS in `sha256sum` format for `binary` under the host target's asset name, plus another platform's line. */
async function sumsFor(binary: Uint8Array, target = HOST_TARGET): Promise<string> {
  const other = "0".repeat(64);
  return `${other}  penguin-some-other-target\n${await sha256Hex(binary)}  penguin-${target}\n`;
}

/** Serve `release` on 127.0.0.1 until `fn` returns; `fn` gets the download base URL. */
async function withRelease<T>(release: Release, fn: (base: string) => Promise<T>): Promise<T> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    const prefix = `/releases/download/v${release.version}/`;
    if (path === "/releases/latest") {
      return new Response(null, {
        status: 302,
        headers: { location: `/releases/tag/v${release.version}` },
      });
    }
    if (path === `/releases/tag/v${release.version}`) return new Response("release page\n");
    if (path === `${prefix}SHA256SUMS`) return new Response(release.sums);
    if (path === `${prefix}penguin-${HOST_TARGET}`) {
      if (release.binaryMode === "cut") {
        // Half the body of the announced length, then the response ends.
        const half = release.binary.subarray(0, release.binary.length / 2);
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(half);
            c.close();
          },
        });
        return new Response(body, {
          headers: { "content-length": String(release.binary.length) },
        });
      }
      return new Response(release.binary as Uint8Array<ArrayBuffer>);
    }
    return new Response("not found\n", { status: 404 });
  });
  try {
    return await fn(`http://127.0.0.1:${server.addr.port}/releases/download`);
  } finally {
    await server.shutdown();
  }
}

interface Installed {
  code: number;
  stdout: string;
  stderr: string;
  /** The install directory. */
  dir: string;
  /** Its entries after the run (absent directory: none). */
  entries: string[];
  /** Entries left in TMPDIR. */
  tmpLeft: string[];
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return [];
    throw e;
  }
}

/** Run install.sh in `work` (HOME, TMPDIR and the install dir below it) with `env` on top. */
async function install(
  work: string,
  env: Record<string, string>,
  path = Deno.env.get("PATH") ?? "/usr/bin:/bin",
): Promise<Installed> {
  const home = join(work, "home");
  const tmp = join(work, "tmp");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(tmp, { recursive: true });
  const dir = env.PENGUIN_INSTALL_DIR ?? join(home, ".local/bin");
  const out = await new Deno.Command(SH, {
    args: [join(REPO, "install.sh")],
    env: { PATH: path, HOME: home, TMPDIR: tmp, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    dir,
    entries: await entriesOf(dir),
    tmpLeft: await entriesOf(tmp),
  };
}

/** The run was refused with one error line matching `reason`, and left nothing behind. */
function assertRefused(r: Installed, reason: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("penguin install: error: "));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(errors[0]!, reason);
  assert.deepEqual(r.entries, [], "nothing in the install directory");
  assert.deepEqual(r.tmpLeft, [], "nothing left in TMPDIR");
}

async function goodRelease(version = "1.2.3"): Promise<Release> {
  const binary = fakeBinary();
  return { version, binary, sums: await sumsFor(binary) };
}

async function assertInstalled(r: Installed, binary: Uint8Array): Promise<void> {
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.entries, ["penguin"], "only penguin in the install directory");
  const installed = join(r.dir, "penguin");
  assert.deepEqual(await Deno.readFile(installed), binary);
  assert.equal((await Deno.stat(installed)).mode! & 0o777, 0o755);
  assert.deepEqual(r.tmpLeft, [], "nothing left in TMPDIR");
}

Deno.test("install.sh installs the served binary, verified and executable, into ~/.local/bin", async () => {
  const release = await goodRelease();
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "1.2.3" });
      await assertInstalled(r, release.binary);
      assert.equal(r.dir, join(work, "home/.local/bin"));
      assert.match(r.stderr, new RegExp(`installed penguin 1\\.2\\.3 \\(${HOST_TARGET}\\)`));
      assert.match(r.stderr, /is not on your PATH/);
    }));
});

Deno.test("install.sh replaces an installed penguin in PENGUIN_INSTALL_DIR; v-prefixed version", async () => {
  const release = await goodRelease();
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const dir = join(work, "bin");
      await Deno.mkdir(dir);
      await Deno.writeTextFile(join(dir, "penguin"), "old penguin\n");
      const r = await install(work, {
        PENGUIN_DOWNLOAD_BASE: base,
        PENGUIN_VERSION: "v1.2.3",
        PENGUIN_INSTALL_DIR: dir,
      }, `${dir}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`);
      await assertInstalled(r, release.binary);
      assert.doesNotMatch(r.stderr, /is not on your PATH/);
    }));
});

Deno.test("install.sh without PENGUIN_VERSION installs the release <base>/../latest redirects to", async () => {
  const release = await goodRelease("2.0.1");
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base });
      await assertInstalled(r, release.binary);
      assert.match(r.stderr, /installed penguin 2\.0\.1 /);
    }));
});

Deno.test("install.sh works with wget and shasum when curl and sha256sum are missing (latest too)", async () => {
  const release = await goodRelease("3.1.4");
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const tools = join(work, "tools");
      await Deno.mkdir(tools);
      const needed = [
        "uname",
        "mkdir",
        "mktemp",
        "chmod",
        "mv",
        "rm",
        "awk",
        "sed",
        "tr",
        "tail",
        "wget",
        "shasum",
      ];
      for (const tool of needed) {
        const found = ["/usr/bin", "/bin"].map((d) => join(d, tool)).find((p) => {
          try {
            return Deno.statSync(p).isFile;
          } catch {
            return false;
          }
        });
        if (found === undefined) {
          console.log(`skipped: ${tool} is not installed`);
          return;
        }
        await Deno.symlink(found, join(tools, tool));
      }
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base }, tools);
      await assertInstalled(r, release.binary);
      assert.match(r.stderr, /installed penguin 3\.1\.4 /);
    }));
});

Deno.test("install.sh refuses a binary whose checksum does not match: nothing installed, no temp file", async () => {
  const release = await goodRelease();
  release.sums = await sumsFor(fakeBinary());
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "1.2.3" });
      assertRefused(r, new RegExp(`checksum mismatch for penguin-${HOST_TARGET}`));
      assert.deepEqual(await entriesOf(join(work, "home/.local")), ["bin"]);
    }));
});

Deno.test("install.sh refuses an unknown architecture before downloading anything", async () => {
  const release = await goodRelease();
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const fake = join(work, "fakebin");
      await Deno.mkdir(fake);
      await Deno.writeTextFile(
        join(fake, "uname"),
        '#!/bin/sh\ncase "$1" in -s) echo Linux ;; -m) echo riscv64 ;; *) echo Linux ;; esac\n',
      );
      await Deno.chmod(join(fake, "uname"), 0o755);
      const r = await install(
        work,
        { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "1.2.3" },
        `${fake}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      );
      assertRefused(r, /unsupported platform: Linux riscv64/);
    }));
});

Deno.test("install.sh refuses an interrupted download and leaves no partial file", async () => {
  const release = { ...await goodRelease(), binaryMode: "cut" as const };
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "1.2.3" });
      assertRefused(r, new RegExp(`download failed: .*/v1\\.2\\.3/penguin-${HOST_TARGET}$`));
    }));
});

Deno.test("install.sh refuses a release with no asset for this platform", async () => {
  const release = await goodRelease();
  release.sums = await sumsFor(release.binary, "sparc-unknown-linux-gnu");
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "1.2.3" });
      assertRefused(r, new RegExp(`release v1\\.2\\.3 has no penguin-${HOST_TARGET}`));
    }));
});

Deno.test("install.sh refuses a version that was not released (SHA256SUMS not found)", async () => {
  const release = await goodRelease();
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const r = await install(work, { PENGUIN_DOWNLOAD_BASE: base, PENGUIN_VERSION: "9.9.9" });
      assertRefused(
        r,
        /download failed: .*\/v9\.9\.9\/SHA256SUMS \(is 9\.9\.9 a released version\?\)/,
      );
    }));
});

Deno.test("install.sh refuses an install directory it cannot create", async () => {
  const release = await goodRelease();
  await withRelease(release, (base) =>
    withTempDir("penguin-install-", async (work) => {
      const file = join(work, "a-file");
      await Deno.writeTextFile(file, "not a directory\n");
      const r = await install(work, {
        PENGUIN_DOWNLOAD_BASE: base,
        PENGUIN_VERSION: "1.2.3",
        PENGUIN_INSTALL_DIR: join(file, "bin"),
      });
      assertRefused(r, /cannot write to the install directory .*a-file\/bin/);
      assert.equal(await Deno.readTextFile(file), "not a directory\n");
    }));
});
