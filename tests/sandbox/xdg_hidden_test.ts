// The XDG base directories a user moved out of the home are hidden like the home
// (lib/sandbox/_xdg_hidden.ts): with $XDG_CONFIG_HOME, $XDG_DATA_HOME and $XDG_STATE_HOME set to
// directories elsewhere, a command read gh's token, git's credential store, a keyring and a shell
// history there (attack round 28 f14). The toolchains of the home's list that lie in them (mise's
// installs, pip's cache) stay readable, and a workspace inside one is the model's as ever.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { exists, putFile, shellOutput, visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";
import { runCli } from "../support/cli.ts";

useTestRunDir();

const put = putFile;
const run = (shell: string, policy: ReturnType<typeof createPolicy>) => shellOutput(policy, shell);

Deno.test({
  name: "relocated XDG directories are hidden, their toolchains shown, a workspace in one kept",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-xdg-hidden-");
    try {
      const home = join(base, "home");
      const cfg = join(base, "xdg", "config");
      const data = join(base, "xdg", "data");
      const state = join(base, "xdg", "state");
      const ws = join(cfg, "project");
      await Deno.mkdir(home, { recursive: true });
      await Deno.mkdir(ws, { recursive: true });
      await put(join(cfg, "gh", "hosts.yml"), "oauth_token: gho_xdgsecret1\n");
      await put(join(cfg, "git", "credentials"), "https://u:xdgsecret2@example.com\n");
      await put(join(data, "keyrings", "login.keyring"), "xdgsecret3\n");
      await put(join(state, "bash", "history"), "export TOKEN=xdgsecret4\n");
      await put(join(data, "mise", "installs", "tool", "bin", "tool"), "toolchain-ok\n");
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: home,
          XDG_CONFIG_HOME: cfg,
          XDG_DATA_HOME: data,
          XDG_STATE_HOME: state,
        },
      });
      const out = await run(
        `cat ${cfg}/gh/hosts.yml ${cfg}/git/credentials ${data}/keyrings/login.keyring ` +
          `${state}/bash/history 2>/dev/null; cat ${data}/mise/installs/tool/bin/tool; ` +
          "echo mine > here.txt && cat here.txt",
        policy,
      );
      assert.doesNotMatch(out, /xdgsecret/, out);
      assert.match(out, /toolchain-ok/);
      assert.match(out, /mine/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "the secrets inside a relocated XDG directory's shown toolchains are hidden (round 29 l06)",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-xdg-tool-secrets-");
    try {
      const home = join(base, "home");
      const ws = join(base, "ws");
      const data = join(base, "xdg", "data");
      const cache = join(base, "xdg", "cache");
      await Deno.mkdir(home, { recursive: true });
      await Deno.mkdir(ws, { recursive: true });
      const secrets = [
        join(data, "uv", "credentials", "credentials.toml"),
        join(data, "pnpm", ".npmrc"),
        join(data, "mise", "installs", "node", "20.1.0", "etc", "npmrc"),
        join(data, "mise", "installs", "python", "3.12.1", "pip.conf"),
        join(data, "uv", "tools", "ruff", "uv-receipt.toml"),
        join(cache, "pip", "pip.conf"),
        join(cache, "pip", ".netrc"),
      ];
      for (const [i, p] of secrets.entries()) await put(p, `toolsecret${i}\n`);
      await put(join(data, "mise", "installs", "node", "20.1.0", "bin", "node"), "toolchain-ok\n");
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: home,
          XDG_DATA_HOME: data,
          XDG_CACHE_HOME: cache,
        },
      });
      const out = await run(
        `cat ${secrets.join(" ")} 2>/dev/null; cat ${data}/mise/installs/node/20.1.0/bin/node`,
        policy,
      );
      assert.doesNotMatch(out, /toolsecret/, out);
      assert.match(out, /toolchain-ok/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "an XDG directory only the login shell moves is hidden too (round 29 l07)",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-xdg-login-");
    try {
      const home = join(base, "home");
      const ws = join(base, "ws");
      const data = join(base, "xdg", "data");
      await Deno.mkdir(home, { recursive: true });
      await Deno.mkdir(ws, { recursive: true });
      await put(join(data, "keyrings", "login.keyring"), "loginsecret\n");
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: home },
      });
      // What the shell snapshot found `~/.profile` exporting.
      policy.env.login = { XDG_DATA_HOME: data };
      const out = await run(`cat ${data}/keyrings/login.keyring 2>&1; echo end`, policy);
      assert.doesNotMatch(out, /loginsecret/, out);
      assert.match(out, /end/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "relocated XDG directories inside the workspace are hidden whole (round 30 o08b, 31 t03)",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-xdg-in-ws-");
    try {
      const home = join(base, "home");
      // A dotfiles repository as the workspace, the XDG directories in it.
      const ws = join(base, "dotfiles");
      const cfg = join(ws, "config");
      const data = join(ws, "data");
      await Deno.mkdir(home, { recursive: true });
      await put(join(cfg, "gh", "hosts.yml"), "oauth_token: inws-secret-1\n");
      await put(join(cfg, "gh", "config.yml"), "pager: less\n");
      await put(join(data, "keyrings", "login.keyring"), "inws-secret-2\n");
      await put(join(data, "notes.txt"), "data-ok\n");
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: home,
          XDG_CONFIG_HOME: cfg,
          XDG_DATA_HOME: data,
        },
      });
      const out = await run(
        `cat ${cfg}/gh/hosts.yml ${data}/keyrings/login.keyring 2>/dev/null; ` +
          `echo 'pager: sh -c evil' >> ${cfg}/gh/config.yml 2>/dev/null && echo wrote; ` +
          `echo edited > ${cfg}/notes.txt && cat ${cfg}/notes.txt; ` +
          `cat ${data}/notes.txt; echo mine > here.txt && cat here.txt`,
        policy,
      );
      assert.doesNotMatch(out, /inws-secret|wrote/, out);
      assert.match(out, /mine/);
      // Hidden whole, as the home's are: a list of credential directories missed eleven
      // programs' tokens (round 31 t03), and other programs' configuration there runs at the
      // user's next use of them (round 30 o11).
      assert.doesNotMatch(out, /edited|data-ok/, out);
      assert.equal(await Deno.readTextFile(join(cfg, "gh", "config.yml")), "pager: less\n");
      assert.equal(await exists(join(cfg, "notes.txt")), false);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "penguin's own XDG_DATA_HOME and XDG_STATE_HOME are hidden from a command it runs",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-xdg-hidden-cli-");
    try {
      const data = join(base, "data");
      const state = join(base, "state");
      const ws = join(base, "ws");
      await Deno.mkdir(ws);
      await put(join(data, "keyrings", "login.keyring"), "xdgsecret5\n");
      await put(join(state, "bash", "history"), "export T=xdgsecret6\n");
      const r = await runCli(
        ["sandbox", "run", "--workspace", ws, "--", "sh", "-c", `cat ${data}/*/* ${state}/*/*`],
        { cwd: ws, env: { XDG_DATA_HOME: data, XDG_STATE_HOME: state } },
      );
      assert.doesNotMatch(r.stdout + r.stderr, /xdgsecret/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
