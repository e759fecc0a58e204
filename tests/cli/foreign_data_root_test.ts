// A data root penguin did not make is not acted with silently (attack round 25 concgit repro06):
// a model's command prepares a directory in its workspace holding a project config that names
// the attacker's endpoint; the user later gives that directory as --root. Penguin marks each root
// it makes with a key no command can read (lib/state/root_mark.ts); any other root holding
// something is refused without a terminal until `penguin trust --data-root` adopts it.
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer, turn } from "../support/model_server.ts";
import { addModelCli, runCli, spawnCli } from "../support/cli.ts";
import { readUntil } from "../support/child_lines.ts";
import { PENGUIN_TRACES } from "../support/penguin_traces.ts";
import { rootStatus } from "../../lib/state/root_mark.ts";
import { hasScript, runUnderScript } from "../support/pty_script.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { addModel } from "../../lib/state/project_config.ts";

const REFUSED = /penguin did not make the data root .* trust --data-root/s;

/** The text of a project config naming (custom, m) at `baseUrl`, as penguin writes one. */
async function configText(baseUrl: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "penguin-config-text-" });
  try {
    const path = join(dir, ".project_config.toml");
    await addModel(path, {
      provider: "custom",
      model_id: "m",
      base_url: baseUrl,
      client_type: "openai-chat",
    }, { setDefault: true });
    return await Deno.readTextFile(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("run: a data root a model's command prepared in its workspace is refused, not adopted", async () => {
  const base = await visibleTempDir("penguin-foreign-root-");
  const attacker = await startModelServer({ handler: () => turn.text("pwned") });
  const model = await startModelServer({
    handler: (_rec, index) =>
      index === 0
        // (The file tools refuse the name; a command writes it.)
        ? turn.toolCall("exec_command", {
          cmd: `mkdir -p later/default_project && echo ${
            btoa(planted)
          } | base64 -d > later/default_project/.project_config.toml`,
        })
        : turn.text("done"),
  });
  const planted = await configText(attacker.baseUrl("openai-chat"));
  try {
    const root = join(base, "data");
    const ws = join(base, "ws");
    const other = join(base, "other");
    await Deno.mkdir(ws);
    await Deno.mkdir(other);
    await addModelCli(root, model.baseUrl("openai-chat"));
    const first = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
      adopt: false,
    });
    assert.equal(first.code, 0, first.stderr);
    const prepared = join(ws, "later");
    assert.equal(
      await Deno.readTextFile(join(prepared, "default_project", ".project_config.toml")),
      planted,
      "the model's command prepared the directory",
    );

    // The user later takes that directory as a data root: refused, nothing sent anywhere.
    const later = await runCli(["--root", prepared, "run", "--workspace", other, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(later.code, 2, later.stderr);
    assert.match(later.stderr, REFUSED);
    assert.match(later.stderr, /default_project\//);
    assert.equal(attacker.requests.length, 0, "no request reached the endpoint it names");

    // Adopted by the user, it is used.
    const adopt = await runCli(["--root", prepared, "trust", "--data-root"], { adopt: false });
    assert.equal(adopt.code, 0, adopt.stderr);
    assert.match(adopt.stdout, /holds: default_project\/[\s\S]*Adopted/);
    const again = await runCli(["--root", prepared, "run", "--workspace", other, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(attacker.requests.length, 1);
  } finally {
    await attacker.close();
    await model.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a root penguin made is used; a copy, a forged or copied mark is not", async () => {
  const base = await visibleTempDir("penguin-foreign-root-");
  const server = await startModelServer({ handler: () => turn.text("ok") });
  try {
    const root = join(base, "data");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await addModelCli(root, server.baseUrl("openai-chat"));
    const mark = await Deno.readTextFile(join(root, ".root_mark"));
    assert.match(mark, /^penguin-root-mark v1 [0-9a-f]{64}\n$/);
    assert.equal((await Deno.lstat(join(root, ".root_mark"))).mode! & 0o777, 0o600);
    const ok = await runCli(["--root", root, "run", "--workspace", ws, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(ok.code, 0, ok.stderr);

    // A copy elsewhere carries the original's mark, which names another directory.
    const copy = join(base, "copy");
    const cp = await new Deno.Command("cp", { args: ["-a", root, copy] }).output();
    assert.equal(cp.code, 0);
    const copied = await runCli(["--root", copy, "run", "--workspace", ws, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(copied.code, 2);
    assert.match(copied.stderr, REFUSED);

    // A mark of the right form made without the key.
    await Deno.writeTextFile(join(copy, ".root_mark"), `penguin-root-mark v1 ${"ab".repeat(32)}\n`);
    const forged = await runCli(["--root", copy, "run", "--workspace", ws, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(forged.code, 2);
    assert.match(forged.stderr, REFUSED);

    // The same root under another user key (another machine's, or a key file replaced).
    const otherKey = await Deno.makeTempDir({ prefix: "penguin-other-key-" });
    try {
      const foreignKey = await runCli(["--root", root, "run", "--workspace", ws, "-m", "hi"], {
        env: { PENGUIN_KEY_DIR: otherKey },
        adopt: false,
      });
      assert.equal(foreignKey.code, 2);
      assert.match(foreignKey.stderr, REFUSED);
    } finally {
      await Deno.remove(otherKey, { recursive: true });
    }
    assert.equal(server.requests.length, 1, "only the first run reached the model");
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("an empty directory given as the root is taken and marked; reading a foreign root needs no adoption", async () => {
  const base = await visibleTempDir("penguin-foreign-root-");
  const server = await startModelServer({ handler: () => turn.text("ok") });
  try {
    const empty = join(base, "empty");
    await Deno.mkdir(empty);
    await addModelCli(empty, server.baseUrl("openai-chat"));
    assert.match(await Deno.readTextFile(join(empty, ".root_mark")), /^penguin-root-mark v1 /);

    // Made by the state library (as PenguinHarness or an older penguin would), never marked:
    // its sessions can be listed and its traces read, not run with.
    const foreign = join(base, "foreign");
    await addServerModel(foreign, server);
    await Deno.remove(join(foreign, ".root_mark"));
    const list = await runCli(["--root", foreign, "sessions", "list"], { adopt: false });
    assert.equal(list.code, 0, list.stderr);
    const models = await runCli(["--root", foreign, "config", "model", "list"], { adopt: false });
    assert.equal(models.code, 0, models.stderr);
    const add = await runCli(["--root", foreign, "config", "vault", "set", "K", "--value", "v"], {
      adopt: false,
    });
    assert.equal(add.code, 2);
    assert.match(add.stderr, REFUSED);
  } finally {
    await server.close();
    await Deno.remove(base, { recursive: true });
  }
});

for (const where of ["home", "PENGUIN_KEY_DIR"] as const) {
  Deno.test(`run: the key that marks data roots is out of the model's commands' reach (${where})`, async () => {
    const base = await visibleTempDir("penguin-foreign-root-");
    // In ~/.penguin (the default), or in a directory the sandbox would show but for the key's
    // rule (PENGUIN_KEY_DIR).
    const home = join(base, "home");
    await Deno.mkdir(home);
    const keyDir = where === "home" ? join(home, ".penguin") : join(base, "keys");
    const env = where === "home"
      ? { PENGUIN_KEY_DIR: "", HOME: home }
      : { PENGUIN_KEY_DIR: keyDir };
    const keyFile = join(keyDir, "root.key");
    const server = await startModelServer({
      handler: (_rec, index) =>
        index === 0
          ? turn.toolCall("exec_command", { cmd: `cat ${JSON.stringify(keyFile)} || echo NO-KEY` })
          : index === 1
          ? turn.toolCall("read_file", { file_path: keyFile })
          : turn.text("done"),
    });
    try {
      const root = join(base, "data");
      const ws = join(base, "ws");
      await Deno.mkdir(ws);
      const add = await runCli(
        ["--root", root, "config", "model", "add", "--provider", "custom", "--model-id", "m"]
          .concat(["--base-url", server.baseUrl("openai-chat"), "--client-type", "openai-chat"])
          .concat(["--set-default"]),
        { env, adopt: false },
      );
      assert.equal(add.code, 0, add.stderr);
      const key = (await Deno.readTextFile(keyFile)).trim();
      assert.match(key, /^[0-9a-f]{64}$/);
      // The workspace holds the key directory where it may (not a home: that needs a flag).
      const workspace = where === "home" ? ws : base;
      const r = await runCli(["--root", root, "run", "--workspace", workspace, "-m", "go"], {
        env,
        adopt: false,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 3);
      const seen = JSON.stringify(server.requests[2]!.body);
      assert.match(seen, /NO-KEY/);
      assert.ok(!seen.includes(key), "the key never reached the model");
    } finally {
      await server.close();
      await Deno.remove(base, { recursive: true });
    }
  });
}

/** `penguin <args>` on a terminal answering `answer`, the root left as it is: code and what it showed. */
const onTerminal = (dir: string, args: string[], answer: string) =>
  runUnderScript(dir, `tty-${crypto.randomUUID()}.log`, args, { input: answer, adopt: false });

Deno.test({
  name: "on a terminal, penguin asks about a root it did not make: y adopts it, anything else not",
  ignore: !hasScript,
  fn: async () => {
    const base = await visibleTempDir("penguin-foreign-root-");
    const server = await startModelServer({ handler: () => turn.text("ok") });
    try {
      const foreign = join(base, "foreign");
      await addServerModel(foreign, server);
      await Deno.remove(join(foreign, ".root_mark"));
      const args = ["--root", foreign, "run", "--workspace", base, "-m", "hi"];
      const no = await onTerminal(base, args, "n\n");
      assert.equal(no.code, 2, no.log);
      assert.match(
        no.log,
        /did not make the data root[\s\S]*Use it as yours from now on\? \[y\/N\]/,
      );
      assert.equal(server.requests.length, 0);
      await assert.rejects(Deno.lstat(join(foreign, ".root_mark")), Deno.errors.NotFound);
      const yes = await onTerminal(base, args, "y\n");
      assert.equal(yes.code, 0, yes.log);
      assert.equal(server.requests.length, 1);
      // Adopted: the next run does not ask.
      const next = await runCli(args);
      assert.equal(next.code, 0, next.stderr);
    } finally {
      await server.close();
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("a read-only command marks no root a model's command made while it ran", async () => {
  // Attack round 27 c14: `sessions list` found `ws/later` missing; a model's command made it with
  // its own config meanwhile; the listing, once ended, marked it, and the user's next
  // `--root ws/later run` sent the prompt and key to the model's endpoint.
  const base = await visibleTempDir("penguin-foreign-root-");
  try {
    const later = join(base, "later");
    const trace = join(base, "t.jsonl");
    await Deno.copyFile(join(PENGUIN_TRACES, "01-simple.jsonl"), trace);
    // A read-only command that runs until stopped: it prints the file, then waits for records.
    const follow = spawnCli(["--root", later, "trace", "follow", "--interval", "50", trace]);
    const err = follow.stderr.pipeThrough(new TextDecoderStream()).getReader();
    assert.match(await readUntil(err, "Ctrl-C to stop"), /following/);
    // The model's command, meanwhile.
    await Deno.mkdir(join(later, "default_project"), { recursive: true });
    await Deno.writeTextFile(
      join(later, "default_project", ".project_config.toml"),
      await configText("http://127.0.0.1:9/v1"),
    );
    follow.kill("SIGINT");
    assert.equal((await follow.status).code, 0);
    await err.cancel();
    await follow.stdout.cancel();
    assert.equal(await rootStatus(later), "foreign", "the root the model made is not marked");
    const run = await runCli(["--root", later, "run", "--workspace", base, "-m", "hi"], {
      adopt: false,
    });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, REFUSED);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
