// Failures that explain themselves: `penguin run` as a subprocess against the
// scripted model server, a closed port, a name that does not resolve, an ftp
// URL and https against a plain-HTTP port. Each failure names its class and
// the endpoint host, says what to do, and permanent ones fail at once.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addModel } from "../../lib/state/project_config.ts";
import type { WireProtocol } from "../../lib/models/wire.ts";
import { type ScriptedTurn, startModelServer, turn } from "../support/model_server.ts";
import { inRoot, markTestRoot, penguinArgv, REPO, runCli } from "../support/cli.ts";
import { assertGoodTrace, ofKind, tracesDir } from "../agent/_support.ts";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { filesUnder } from "../support/files_under.ts";

const bwrapWorks = await (async () => {
  const r = await detectSandbox();
  return r.usable && r.kind === "bwrap";
})();

interface Root {
  root: string;
  workspace: string;
  cleanup: () => Promise<void>;
}

async function rootFor(baseUrl: string, protocol: WireProtocol = "openai-chat"): Promise<Root> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-errors-" });
  const root = join(dir, "data");
  const workspace = join(dir, "ws");
  await Deno.mkdir(workspace, { recursive: true });
  await addModel(join(root, "default_project", ".project_config.toml"), {
    provider: "custom",
    model_id: "m",
    base_url: baseUrl,
    client_type: protocol,
    api_key: "sk-test",
  }, { setDefault: true });
  await markTestRoot(root);
  return {
    root,
    workspace: await Deno.realPath(workspace),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

/** A port on 127.0.0.1 that nothing listens on. */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

function sessionOf(stderr: string): string {
  const sid = /--resume (session-\S+)/.exec(stderr)?.[1];
  assert.ok(sid, `a session id in stderr:\n${stderr}`);
  return sid;
}

/**
 * Run `penguin run` and read its stdout line by line until `until` matches a
 * line (or the process ends); then SIGINT it if it is still running.
 */
async function runUntil(
  r: Root,
  until: RegExp,
): Promise<{ code: number; stdout: string; stderr: string; matched: string | undefined }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...penguinArgv(), ...inRoot(r, "run"), "-m", "Say hello."],
    cwd: REPO,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let stdout = "";
  let matched: string | undefined;
  let buf = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    stdout += chunk;
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (matched === undefined && until.test(line)) {
        matched = line;
        try {
          child.kill("SIGINT");
        } catch {
          // already gone
        }
      }
    }
  }
  const status = await child.status;
  return { code: status.code, stdout, stderr: await stderr, matched };
}

async function run(r: Root) {
  return await runCli(inRoot(r, "run", "-m", "Say hello."));
}

Deno.test("an ftp:// base URL fails at once as a bad URL, with the fix, and is never retried", async () => {
  const r = await rootFor("ftp://example.com/v1");
  try {
    const res = await run(r);
    assert.equal(res.code, 1, res.stderr);
    assert.doesNotMatch(res.stdout, /\[retry\]/);
    assert.doesNotMatch(res.stdout, /timed out/);
    const last = lastLine(res.stdout);
    assert.match(last, /^\[abort\]: llm request error: bad endpoint URL ftp:\/\/example\.com\//);
    assert.match(last, /scheme "ftp" is not http or https/);
    assert.match(last, / — set an http:\/\/ or https:\/\/ base URL with "penguin config model add/);
    const records = await assertGoodTrace(r.root, sessionOf(res.stderr));
    const ends = ofKind(records, "request_end");
    assert.equal(ends.length, 1, "one attempt only");
    assert.equal(ends[0]!.status, "failed");
    assert.equal(ends[0]!.retry_in_ms, undefined);
    assert.match(String(ends[0]!.error_message), /^bad endpoint URL ftp:\/\/example\.com\//);
  } finally {
    await r.cleanup();
  }
});

Deno.test("https against a plain-HTTP port fails at once as a TLS failure naming the host", async () => {
  const server = await startModelServer({ turns: [turn.text("never reached over TLS")] });
  const port = new URL(server.baseUrl("openai-chat")).port;
  const r = await rootFor(`https://127.0.0.1:${port}/v1`);
  try {
    const res = await run(r);
    assert.equal(res.code, 1, res.stderr);
    assert.doesNotMatch(res.stdout, /\[retry\]/);
    const last = lastLine(res.stdout);
    assert.match(
      last,
      new RegExp(
        `^\\[abort\\]: llm request error: TLS handshake failed with 127\\.0\\.0\\.1:${port}`,
      ),
    );
    assert.match(last, / — 127\.0\.0\.1:\d+ did not complete a TLS handshake: use http:\/\//);
    const ends = ofKind(await assertGoodTrace(r.root, sessionOf(res.stderr)), "request_end");
    assert.equal(ends.length, 1);
  } finally {
    await r.cleanup();
    await server.close();
  }
});

Deno.test("a host that does not resolve is reported as a DNS failure naming the host", async () => {
  const r = await rootFor("http://nonexistent.invalid/v1");
  try {
    // A name that does not exist fails at once; a resolver that is merely
    // unreachable (offline) is retried. Either way the first line says DNS.
    const res = await runUntil(r, /^\[(abort|retry)\]/);
    assert.ok(res.matched, res.stdout + res.stderr);
    assert.match(res.matched, /DNS lookup failed for nonexistent\.invalid/);
    assert.doesNotMatch(res.stdout, /timed out/);
    if (res.matched.startsWith("[abort]")) {
      assert.match(res.matched, / — nonexistent\.invalid does not resolve: check the host name/);
    }
  } finally {
    await r.cleanup();
  }
});

Deno.test("a refused connection is retried, and the retry line names the class, the host and the wait", async () => {
  const port = closedPort();
  const r = await rootFor(`http://127.0.0.1:${port}/v1`);
  try {
    const res = await runUntil(r, /^\[retry\]/);
    assert.equal(
      res.matched,
      `[retry] connection refused by 127.0.0.1:${port}; retry #1 in 2s…`,
      res.stdout + res.stderr,
    );
    // Interrupted during the backoff.
    assert.equal(res.code, 1);
    const records = await assertGoodTrace(r.root, sessionOf(res.stderr));
    const end = ofKind(records, "request_end")[0]!;
    assert.equal(end.status, "timeout");
    assert.match(
      String(end.error_message),
      new RegExp(`^connection refused by 127\\.0\\.0\\.1:${port}: `),
    );
  } finally {
    await r.cleanup();
  }
});

function httpError(
  status: number,
  message: string,
  code?: string,
  headers?: Record<string, string>,
): ScriptedTurn {
  return {
    items: [],
    http_error: { status, message, ...(code ? { code } : {}), ...(headers ? { headers } : {}) },
  };
}

Deno.test("after the retries of an HTTP 503 the last line names the status, host, provider message and fix", async () => {
  // Retry-After: 0 from the provider makes the five retries immediate.
  const six = Array.from(
    { length: 6 },
    () => httpError(503, "The engine is overloaded", "server_overloaded", { "retry-after": "0" }),
  );
  const server = await startModelServer({ turns: six });
  const host = new URL(server.baseUrl("openai-chat")).host;
  const r = await rootFor(server.baseUrl("openai-chat"));
  try {
    const res = await run(r);
    assert.equal(res.code, 1, res.stderr);
    assert.equal(server.requests.length, 6);
    const retries = res.stdout.split("\n").filter((l) => l.startsWith("[retry]"));
    assert.equal(retries.length, 5);
    assert.equal(
      retries[0],
      `[retry] HTTP 503 from ${host}: The engine is overloaded (server_overloaded); retry #1 in 0ms…`,
    );
    assert.equal(
      lastLine(res.stdout),
      `[abort]: reconnect failed after 5 retries: HTTP 503 from ${host}: The engine is overloaded (server_overloaded)` +
        ` — ${host} is failing or overloaded: try again later, or use another model with --provider/--model-id`,
    );
    const records = await assertGoodTrace(r.root, sessionOf(res.stderr));
    assert.equal(
      ofKind(records, "abort")[0]!.reason,
      `reconnect failed after 5 retries: HTTP 503 from ${host}: The engine is overloaded (server_overloaded)`,
    );
  } finally {
    await r.cleanup();
    await server.close();
  }
});

Deno.test("HTTP 429 and 500 are retried with the provider's message on the retry line", async () => {
  const server = await startModelServer({
    turns: [
      httpError(429, "Rate limit reached for requests", "rate_limit_exceeded", {
        "retry-after": "0",
      }),
      httpError(500, "Internal upstream failure", undefined, { "retry-after": "0" }),
      turn.text("Third time lucky."),
    ],
  });
  const host = new URL(server.baseUrl("openai-chat")).host;
  const r = await rootFor(server.baseUrl("openai-chat"));
  try {
    const res = await run(r);
    assert.equal(res.code, 0, res.stderr);
    const retries = res.stdout.split("\n").filter((l) => l.startsWith("[retry]"));
    assert.deepEqual(retries, [
      `[retry] HTTP 429 from ${host}: Rate limit reached for requests (rate_limit_exceeded); retry #1 in 0ms…`,
      `[retry] HTTP 500 from ${host}: Internal upstream failure (invalid_request_error); retry #2 in 0ms…`,
    ]);
    assert.match(res.stdout, /Third time lucky\./);
  } finally {
    await r.cleanup();
    await server.close();
  }
});

for (const status of [400, 401, 403, 404]) {
  Deno.test(`HTTP ${status} fails at once with the host, the provider's message and the fix`, async () => {
    const server = await startModelServer({
      turns: [httpError(status, `scripted ${status} message`), turn.text("not reached")],
    });
    const host = new URL(server.baseUrl("openai-chat")).host;
    const r = await rootFor(server.baseUrl("openai-chat"));
    try {
      const res = await run(r);
      assert.equal(res.code, 1, res.stderr);
      assert.equal(server.requests.length, 1, "never retried");
      assert.doesNotMatch(res.stdout, /\[retry\]/);
      const last = lastLine(res.stdout);
      assert.ok(
        last.startsWith(
          `[abort]: llm request error: HTTP ${status} from ${host}: scripted ${status} message`,
        ),
        last,
      );
      const fix = status === 404
        ? "has no such endpoint or model"
        : status === 400
        ? "rejected the request: check the model id"
        : "rejected the credentials: set the provider's API key";
      assert.ok(last.includes(` — ${host} ${fix}`), last);
    } finally {
      await r.cleanup();
      await server.close();
    }
  });
}

Deno.test("an in-stream overloaded error event is retried as a stream error, not a timeout", async () => {
  const server = await startModelServer({
    turns: [turn.streamError("Overloaded", "overloaded_error"), turn.text("Back again.")],
  });
  const host = new URL(server.baseUrl("anthropic-messages")).host;
  const r = await rootFor(server.baseUrl("anthropic-messages"), "anthropic-messages");
  try {
    const res = await run(r);
    assert.equal(res.code, 0, res.stderr);
    const retries = res.stdout.split("\n").filter((l) => l.startsWith("[retry]"));
    assert.deepEqual(retries, [
      `[retry] error in the stream from ${host}: Overloaded (overloaded_error); retry #1 in 2s…`,
    ]);
    assert.match(res.stdout, /Back again\./);
  } finally {
    await r.cleanup();
    await server.close();
  }
});

Deno.test("a first run without any model prints the exact config model add line, and that line works", async () => {
  const dir = await Deno.makeTempDir({ prefix: "penguin-first-run-" });
  try {
    const root = join(dir, "data");
    // A clean environment: no provider key is set.
    const r = await runCli(["--root", root, "run", "-m", "hi"], { cwd: dir, clearEnv: true });
    assert.equal(r.code, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /config model default/);
    assert.doesNotMatch(r.stderr, /\.project_config\.toml/, "names no file that does not exist");
    const line = r.stderr.split("\n").map((l) => l.trim()).find((l) =>
      l.startsWith("penguin config model add ")
    );
    assert.equal(
      line,
      `penguin config model add --provider deepseek --model-id deepseek-v4-flash --set-default --root ${root}`,
    );
    assert.match(r.stderr, /export DEEPSEEK_API_KEY=<your key>/);
    // Running the printed line as it is makes the next run get past model selection.
    const added = await runCli(line!.split(" ").slice(1), { cwd: dir, clearEnv: true });
    assert.equal(added.code, 0, added.stderr);
    const next = await runCli(["--root", root, "run", "-m", "hi"], { cwd: dir, clearEnv: true });
    assert.equal(next.code, 2);
    assert.doesNotMatch(next.stderr, /No model is configured/);
    assert.match(next.stderr, /DEEPSEEK_API_KEY/, "now only the key is missing");

    // With a provider's key already in the environment, that provider is suggested.
    const other = join(dir, "other");
    const o = await runCli(["--root", other, "run", "-m", "hi"], {
      cwd: dir,
      clearEnv: true,
      env: { OPENAI_API_KEY: "sk-x" },
    });
    assert.equal(o.code, 2);
    assert.match(
      o.stderr,
      new RegExp(
        `^ {2}penguin config model add --provider openai --model-id \\S+ --set-default --root ${other}$`,
        "m",
      ),
    );
    assert.doesNotMatch(o.stderr, /export /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "run --workspace / fails before the first request with exit 2, naming the workspace and why",
  ignore: !bwrapWorks,
  async fn() {
    const server = await startModelServer({
      turns: [turn.toolCall("exec_command", { cmd: "echo hi" }), turn.text("done")],
    });
    const r = await rootFor(server.baseUrl("openai-chat"));
    try {
      const res = await runCli(["--root", r.root, "run", "--workspace", "/", "-m", "Say hi."]);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(server.requests.length, 0, "no request was sent");
      assert.match(
        res.stderr,
        /^penguin: Cannot use the workspace "\/": the sandbox cannot make "\/" writable: it contains the sandbox's own binary "[^"]+bwrap"/m,
      );
      assert.match(res.stderr, /--sandbox read-only/);
      assert.doesNotMatch(res.stderr, /^Session: /m, "no session was started");
      assert.deepEqual(await filesUnder(tracesDir(r.root)), [], "no trace was written");
    } finally {
      await r.cleanup();
      await server.close();
    }
  },
});

Deno.test({
  name: "a workspace whose .git is a symbolic link fails before the first request with exit 2",
  ignore: !bwrapWorks,
  async fn() {
    const server = await startModelServer({ turns: [turn.text("never")] });
    const r = await rootFor(server.baseUrl("openai-chat"));
    try {
      await Deno.mkdir(join(r.workspace, "..", "elsewhere.git"));
      await Deno.symlink(join(r.workspace, "..", "elsewhere.git"), join(r.workspace, ".git"));
      const res = await run(r);
      assert.equal(res.code, 2, res.stderr);
      assert.equal(server.requests.length, 0);
      assert.match(
        res.stderr,
        new RegExp(
          `^penguin: Cannot use the workspace "${r.workspace}": "${r.workspace}/\\.git" is a symbolic link`,
          "m",
        ),
      );
    } finally {
      await r.cleanup();
      await server.close();
    }
  },
});
