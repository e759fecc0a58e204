// Startup files under a relocated `XDG_CONFIG_HOME` (attack round 28 f07): the user's
// `XDG_CONFIG_HOME` points into a dotfiles workspace (`~/dotfiles/config`), where fish reads
// `fish/config.fish` and `conf.d`, a desktop session runs `autostart/*.desktop` and systemd's user
// manager loads `systemd/user`. A real `penguin run` with a scripted model: the model's command
// appends to and creates each of them and `write_file` tries one, all refused (read-only or held
// by a stand-in), the files unchanged and no stand-in left behind; since attack round 31 t03 the
// directory is hidden whole, as the home's `~/.config` is. Also: such a workspace is refused without
// `--allow-home-workspace`, the value exported only by `~/.profile` (the shell snapshot) counts,
// and the home's own `~/.config/autostart` and `~/.config/systemd/user` linked into a workspace
// are read-only there.
import assert from "node:assert/strict";
import { join } from "node:path";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

/** The model's command in a workspace whose `config` is `$XDG_CONFIG_HOME`: one rc line per attempt. */
const ATTEMPTS = [
  "echo 'touch /tmp/pwn' >> config/fish/config.fish; echo rc1=$?",
  "echo 'touch /tmp/pwn' > config/fish/conf.d/zz.fish; echo rc2=$?",
  "echo 'touch /tmp/pwn' >> config/fish/conf.d/a.fish; echo rc3=$?",
  "printf '[Desktop Entry]\\nExec=touch /tmp/pwn\\n' > config/autostart/x.desktop; echo rc4=$?",
  "mkdir -p config/systemd/user && printf '[Service]\\nExecStart=/bin/true\\n' > config/systemd/user/x.service; echo rc5=$?",
  "echo mine > config/notes.txt; echo rc6=$?",
].join("; ");

/** A dotfiles workspace `home/dotfiles` with the user's fish configuration in `config/fish`. */
async function dotfiles(base: string): Promise<{ home: string; ws: string; xdg: string }> {
  const home = join(base, "home");
  const ws = join(home, "dotfiles");
  const xdg = join(ws, "config");
  await Deno.mkdir(join(xdg, "fish", "conf.d"), { recursive: true });
  await Deno.writeTextFile(join(xdg, "fish", "config.fish"), "set -gx EDITOR vim\n");
  await Deno.writeTextFile(join(xdg, "fish", "conf.d", "a.fish"), "set -gx A 1\n");
  return { home, ws, xdg };
}

/** What the model was shown after one task with `calls` in `ws` (HOME `home`), and the exit. */
async function runTask(
  base: string,
  home: string,
  ws: string,
  calls: ReturnType<typeof item.toolCall>[],
  extra: { args?: string[]; env?: Record<string, string> } = {},
): Promise<{ code: number; stderr: string; body: string }> {
  const server = await startModelServer({ turns: [turn.of(...calls), turn.text("done")] });
  try {
    const root = join(base, "data");
    await addServerModel(root, server);
    const r = await runCli(
      ["--root", root, "run", "--workspace", ws, ...extra.args ?? [], "-m", "go"],
      { env: { HOME: home, PENGUIN_RUN_DIR: join(base, "run"), ...extra.env } },
    );
    const body = server.requests.length > 1 ? JSON.stringify(server.requests[1]!.body) : "";
    return { code: r.code, stderr: r.stderr, body };
  } finally {
    await server.close();
  }
}

/** Every attempt of {@linkcode ATTEMPTS} on the user's files failed, and nothing of them remains. */
async function assertHeld(xdg: string, body: string): Promise<void> {
  // The directory is hidden whole, as the home's `~/.config` is (round 31 t03): a file no
  // program starts cannot be made there either.
  for (const n of [1, 2, 3, 4, 5, 6]) {
    assert.ok(!body.includes(`rc${n}=0`), `attempt ${n} succeeded: ${body.slice(-3000)}`);
    assert.ok(body.includes(`rc${n}=`), `attempt ${n} did not run: ${body.slice(-3000)}`);
  }
  assert.ok(/Refusing to write[^"]*\\"config\/autostart\/y.desktop/.test(body), body.slice(-3000));
  assert.equal(await Deno.readTextFile(join(xdg, "fish", "config.fish")), "set -gx EDITOR vim\n");
  assert.equal(await Deno.readTextFile(join(xdg, "fish", "conf.d", "a.fish")), "set -gx A 1\n");
  assert.deepEqual(
    (await Array.fromAsync(Deno.readDir(join(xdg, "fish", "conf.d")))).map((e) => e.name),
    ["a.fish"],
  );
  // The stand-ins that held the missing ones are gone with the session.
  const left = (await Array.fromAsync(Deno.readDir(xdg))).map((e) => e.name).sort();
  assert.deepEqual(left, ["fish"]);
}

const CALLS = () => [
  item.toolCall("exec_command", { cmd: ATTEMPTS }, { id: "c1" }),
  item.toolCall("write_file", { file_path: "config/autostart/y.desktop", content: "x" }, {
    id: "c2",
  }),
];

Deno.test("run: fish, autostart and systemd files under an XDG_CONFIG_HOME in the workspace are read-only", async () => {
  const base = await visibleTempDir("penguin-xdg-startup-");
  try {
    const { home, ws, xdg } = await dotfiles(base);
    const r = await runTask(base, home, ws, CALLS(), {
      args: ["--allow-home-workspace"],
      env: { XDG_CONFIG_HOME: xdg },
    });
    assert.equal(r.code, 0, r.stderr);
    await assertHeld(xdg, r.body);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: a workspace holding the XDG_CONFIG_HOME fish configuration is refused without the flag", async () => {
  const base = await visibleTempDir("penguin-xdg-refused-");
  try {
    const { home, ws, xdg } = await dotfiles(base);
    const r = await runTask(base, home, ws, CALLS(), { env: { XDG_CONFIG_HOME: xdg } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /\$XDG_CONFIG_HOME\/fish/);
    assert.equal(r.body, "");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: an XDG_CONFIG_HOME exported only by ~/.profile keeps its startup files read-only", async () => {
  const base = await visibleTempDir("penguin-xdg-profile-");
  try {
    const { home, ws, xdg } = await dotfiles(base);
    await Deno.writeTextFile(
      join(home, ".profile"),
      "export XDG_CONFIG_HOME=$HOME/dotfiles/config\n",
    );
    // Refused without the flag, as with the variable set (the value is read from the file).
    const refused = await runTask(base, home, ws, CALLS(), { env: { XDG_CONFIG_HOME: "" } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /\$XDG_CONFIG_HOME\/fish/);
    const r = await runTask(base, home, ws, CALLS(), {
      args: ["--allow-home-workspace"],
      env: { XDG_CONFIG_HOME: "" },
    });
    assert.equal(r.code, 0, r.stderr);
    await assertHeld(xdg, r.body);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("run: the home's ~/.config/autostart and systemd/user linked into the workspace are read-only", async () => {
  const base = await visibleTempDir("penguin-xdg-autostart-");
  try {
    const home = join(base, "home");
    const ws = join(base, "dots");
    await Deno.mkdir(join(ws, "autostart"), { recursive: true });
    await Deno.mkdir(join(ws, "units"));
    await Deno.mkdir(join(home, ".config", "systemd"), { recursive: true });
    await Deno.writeTextFile(join(ws, "autostart", "a.desktop"), "[Desktop Entry]\n");
    await Deno.symlink(join(ws, "autostart"), join(home, ".config", "autostart"));
    await Deno.symlink(join(ws, "units"), join(home, ".config", "systemd", "user"));
    const cmd = [
      "echo 'Exec=touch /tmp/pwn' >> autostart/a.desktop; echo rc1=$?",
      "echo x > autostart/x.desktop; echo rc2=$?",
      "echo x > units/x.service; echo rc3=$?",
      "echo mine > notes.txt; echo rc4=$?",
    ].join("; ");
    const r = await runTask(base, home, ws, [
      item.toolCall("exec_command", { cmd }, { id: "c1" }),
      item.toolCall("write_file", { file_path: "units/y.service", content: "x" }, { id: "c2" }),
    ]);
    assert.equal(r.code, 0, r.stderr);
    for (const n of [1, 2, 3]) {
      assert.ok(!r.body.includes(`rc${n}=0`), `attempt ${n} succeeded: ${r.body.slice(-3000)}`);
    }
    assert.ok(r.body.includes("rc4=0"), r.body.slice(-3000));
    assert.ok(/Refusing to write[^"]*\\"units\/y.service/.test(r.body), r.body.slice(-3000));
    assert.equal(await Deno.readTextFile(join(ws, "autostart", "a.desktop")), "[Desktop Entry]\n");
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(join(ws, "autostart")))).map((e) => e.name),
      ["a.desktop"],
    );
    assert.deepEqual(await Array.fromAsync(Deno.readDir(join(ws, "units"))), []);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
