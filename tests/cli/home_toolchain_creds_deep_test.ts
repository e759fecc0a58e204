// Credential files by name deep inside the shown toolchains (issue 26 item 4, red team Z21 and
// X38): real `penguin run`s with the scripted model. In a hidden home (the workspace outside
// it) a `.netrc` four levels down `~/.cache/pip` and a `settings-security.xml` six levels down
// `~/.m2/repository` are hidden from the model's commands; in a sealed home (`--workspace $HOME
// --allow-home-workspace`), where the toolchains lie in the workspace, they are hidden from
// commands and refused by `read_file`. Commands print what they read reversed, so masking plays
// no part; the toolchains' other files still read.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";
import { reverse, sealedHomeRun } from "./_sealed_home.ts";

const PLANTED: Record<string, string> = {
  ".cache/pip/a/b/c/.netrc": "machine pypi login u password DeepNetrc4Kq2Zx9",
  ".m2/repository/org/acme/lib/1.0/x/settings-security.xml": "<master>DeepM2Key6Qw8Er</master>",
  ".cache/pip/.netrc": "machine pypi login u password TopNetrc1Mn3Bv5",
};
// A toolchain's own code named for what it handles stays readable (Python's `netrc` module).
const OK: Record<string, string> = {
  ".cache/pip/a/b/c/wheel-ok.txt": "DeepWheelOk7Hj9",
  ".pyenv/versions/3.12.1/lib/python3.12/netrc.py": "NetrcModuleOk5Tg",
};

const secretOf = (text: string) => /[A-Za-z0-9]{14,}/.exec(text)![0];

async function plant(home: string): Promise<void> {
  for (const [rel, text] of Object.entries({ ...PLANTED, ...OK })) {
    await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text + "\n");
  }
}

/** A command reading every planted file reversed, and `read_file` calls on each. */
function calls(home: string): ReturnType<typeof item.toolCall>[] {
  const all = [...Object.keys(PLANTED), ...Object.keys(OK)];
  const cmd = all.map((rel) => `rev ~/${rel} 2>&1`).join("; ");
  return [
    item.toolCall("exec_command", { cmd }, { id: "c0" }),
    ...Object.keys(PLANTED).map((rel, i) =>
      item.toolCall("read_file", { file_path: join(home, rel) }, { id: `r${i}` })
    ),
  ];
}

/** Asserts no planted secret reached the model and each `read_file` was refused by `refusal`. */
function assertHidden(body: string, refusal: RegExp): void {
  for (const text of Object.values(OK)) assert.ok(body.includes(reverse(text)), body.slice(-3000));
  for (const [rel, text] of Object.entries(PLANTED)) {
    const secret = secretOf(text);
    assert.ok(!body.includes(reverse(secret)), `~/${rel} was read by a command`);
    assert.ok(!body.includes(secret), `~/${rel} was read by read_file`);
  }
  const refusals = body.match(refusal) ?? [];
  assert.equal(refusals.length, Object.keys(PLANTED).length, body.slice(-3000));
}

Deno.test("run: credential files deep in a hidden home's toolchains are hidden", async () => {
  const base = await visibleTempDir("penguin-tcred-hidden-");
  try {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(ws, { recursive: true });
    await plant(home);
    const server = await startModelServer({ turns: [turn.of(...calls(home)), turn.text("done")] });
    try {
      const root = join(base, "data");
      await addServerModel(root, server);
      const r = await runCli(["--root", root, "run", "--workspace", ws, "-m", "go"], {
        env: { HOME: home },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(server.requests.length, 2);
      assertHidden(JSON.stringify(server.requests[1]!.body), /\\", outside the workspace/g);
    } finally {
      await server.close();
    }
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: credential files in a sealed home's toolchains are hidden and refused", async () => {
  const body = await sealedHomeRun("penguin-tcred-sealed-", async (home) => {
    await Deno.writeTextFile(join(home, ".bashrc"), "# rc\n");
    await plant(home);
  }, calls);
  assertHidden(body, /in the home directory's toolchains holds the user's credentials/g);
});

Deno.test("run: a hidden directory below a sealed home's hidden one shows nothing of it", async () => {
  // A credential directory in `~/.cache/pip` and `~/.config/gcloud` are hidden in their own
  // right; the directories above them are under read-only mounts already, so they are not
  // bound writable over the hidden `~/.cache` and `~/.config` (which would show them whole).
  const others = {
    ".cache/other/tok": "CacheOther2Rt5Yu",
    ".config/gh/hosts.yml": "GhHosts3Op7Iu",
  };
  const body = await sealedHomeRun("penguin-tcred-pins-", async (home) => {
    await Deno.writeTextFile(join(home, ".bashrc"), "# rc\n");
    await Deno.mkdir(join(home, ".cache/pip/x/credentials"), { recursive: true });
    await Deno.writeTextFile(join(home, ".cache/pip/x/credentials/tok"), "PipCredDir8Lk4Jh\n");
    await Deno.mkdir(join(home, ".config/gcloud"), { recursive: true });
    for (const [rel, text] of Object.entries(others)) {
      await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
      await Deno.writeTextFile(join(home, rel), text + "\n");
    }
    await Deno.writeTextFile(join(home, ".cache/pip/ok.txt"), "PipOk9Zx1Cv\n");
  }, () => [
    item.toolCall("exec_command", {
      cmd: "cd ~ && for f in .cache/pip/ok.txt .cache/pip/x/credentials/tok " +
        `${Object.keys(others).join(" ")}; do rev $f 2>&1; done`,
    }, { id: "c0" }),
  ]);
  assert.ok(body.includes(reverse("PipOk9Zx1Cv")), body.slice(-3000));
  for (const secret of ["PipCredDir8Lk4Jh", ...Object.values(others)]) {
    assert.ok(!body.includes(reverse(secret)), `${secret} was read`);
  }
});
