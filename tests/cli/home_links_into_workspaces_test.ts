// Links in the home meet workspaces in it (attack round 21 concgit): a trusted `home_readable`
// entry that another session's model turned into a link is not followed to what it leads to (the
// user's ~/.bashrc, or the whole home with the data root); and with the workspace inside the home
// (`~/dotfiles`), a startup file or git configuration linking into it is read-only to commands, as
// it is for a workspace beside the home.
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectSandbox } from "../../lib/sandbox/detect.ts";
import { item, startModelServer, turn } from "../support/model_server.ts";
import { penguinArgv, penguinEnv, REPO, withoutTerminal } from "../support/cli.ts";
import { addServerModel, visibleTempDir } from "../support/roots.ts";

const SANDBOX = Deno.build.os === "linux" && (await detectSandbox()).kind === "bwrap";

async function penguin(home: string, root: string, args: string[]): Promise<string> {
  const { command, args: a } = withoutTerminal([
    Deno.execPath(),
    ...penguinArgv(),
    "--root",
    root,
    ...args,
  ]);
  const out = await new Deno.Command(command, {
    args: a,
    cwd: REPO,
    env: penguinEnv({ HOME: home }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  const text = d.decode(out.stdout) + d.decode(out.stderr);
  assert.equal(out.code, 0, text);
  return text;
}

/** A session in `ws` whose model runs `cmd`, then ends. */
async function session(home: string, root: string, ws: string, cmd: string): Promise<void> {
  const server = await startModelServer({
    turns: [
      turn.of(item.toolCall("exec_command", { cmd, yield_time_ms: 20000 }, { id: "c1" })),
      turn.text("done"),
    ],
  });
  try {
    await addServerModel(root, server, { api_key: "sk-home-links-0123456789" });
    await penguin(home, root, ["run", "--workspace", ws, "-m", "go"]);
  } finally {
    await server.close();
  }
}

Deno.test({
  name: "a trusted home_readable path another session's model made a link is not followed",
  ignore: !SANDBOX,
  async fn() {
    const base = await visibleTempDir("penguin-home-readable-link-");
    try {
      const home = join(base, "home");
      const SECRET = "BASHRC-TOKEN-q7w8e9r0";
      await Deno.mkdir(join(home, "projA", "docs"), { recursive: true });
      await Deno.mkdir(join(home, "projB"), { recursive: true });
      await Deno.writeTextFile(join(home, ".bashrc"), `export MY_TOKEN=${SECRET}\n`);
      await Deno.writeTextFile(join(home, "projA", "docs", "readme"), "shown\n");
      await Deno.writeTextFile(
        join(home, "projB", "penguin.jsonc"),
        `{"home_readable": ["~/projA/docs", "~/projA/all"]}\n`,
      );
      const rootB = join(base, "dataB");
      await penguin(home, rootB, ["trust", join(home, "projB")]);
      // Shown while it is a plain directory.
      await session(home, rootB, join(home, "projB"), "cat ~/projA/docs/readme > seen.txt 2>&1");
      assert.equal(await Deno.readTextFile(join(home, "projB", "seen.txt")), "shown\n");
      // Session A's model turns it into a link to ~/.bashrc, and another entry into one to ~.
      await session(
        home,
        join(base, "dataA"),
        join(home, "projA"),
        "mv docs docs.old && ln -s ../.bashrc docs && ln -s .. all",
      );
      await session(
        home,
        rootB,
        join(home, "projB"),
        "cat ~/projA/docs ~/projA/all/.bashrc ~/projA/all/dataB/default_project/.project_config.toml " +
          "> leak.txt 2>&1; true",
      );
      const leak = await Deno.readTextFile(join(home, "projB", "leak.txt"));
      assert.ok(!leak.includes(SECRET), leak);
      assert.ok(!leak.includes("sk-home-links"), leak);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "with the workspace inside the home, a dot-file linking into it is read-only to commands",
  ignore: !SANDBOX,
  async fn() {
    const base = await visibleTempDir("penguin-dotfiles-in-home-");
    try {
      const home = join(base, "home");
      const ws = join(home, "dotfiles");
      await Deno.mkdir(ws, { recursive: true });
      await Deno.writeTextFile(join(ws, "gitconfig"), "[user]\n\tname = U\n");
      await Deno.writeTextFile(join(ws, "shellrc"), "export EDITOR=vi\n");
      await Deno.writeTextFile(join(ws, "notes"), "mine\n");
      await Deno.symlink(join(ws, "gitconfig"), join(home, ".gitconfig"));
      await Deno.symlink(join(ws, "shellrc"), join(home, ".bashrc"));
      await session(
        home,
        join(base, "data"),
        ws,
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> gitconfig; echo evil >> shellrc; " +
          "echo more >> notes; true",
      );
      assert.equal(await Deno.readTextFile(join(ws, "gitconfig")), "[user]\n\tname = U\n");
      assert.equal(await Deno.readTextFile(join(ws, "shellrc")), "export EDITOR=vi\n");
      assert.equal(
        await Deno.readTextFile(join(ws, "notes")),
        "mine\nmore\n",
        "the rest is writable",
      );
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "what a startup directory holds that links into the workspace is read-only to commands",
  ignore: !SANDBOX,
  async fn() {
    // Attack round 22 (concgit 2–4): only the startup names themselves were looked at, not the
    // files of a real `~/.ssh`, `~/.config/git` or `~/.bashrc.d` linking into a workspace.
    const base = await visibleTempDir("penguin-startup-dir-links-");
    try {
      const home = join(base, "home");
      const ws = join(base, "ws");
      await Deno.mkdir(ws, { recursive: true });
      const links: Record<string, string> = {
        ".config/git/config": "gitcfg",
        ".ssh/config": "sshcfg",
        ".ssh/config.d/extra": "sshextra",
        ".bashrc.d/x.sh": "x.sh",
      };
      for (const [at, name] of Object.entries(links)) {
        await Deno.writeTextFile(join(ws, name), "original\n");
        await Deno.mkdir(join(home, at, ".."), { recursive: true });
        await Deno.symlink(join(ws, name), join(home, at));
      }
      await session(
        home,
        join(base, "data"),
        ws,
        Object.values(links).map((n) => `echo evil >> ${n}`).join("; ") + "; true",
      );
      for (const name of Object.values(links)) {
        assert.equal(await Deno.readTextFile(join(ws, name)), "original\n", name);
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
