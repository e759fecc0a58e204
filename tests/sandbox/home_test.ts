// The home directory's rule (lib/sandbox/home.ts) with real sandboxed commands: the home is
// hidden but its toolchains, links in the home are followed safely, a policy can show more,
// a home in a writable root is refused without the flag and sealed with it, and the file
// tools agree.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  createPolicy,
  resolvePlan,
  type SandboxPolicy,
  spawnSandboxed,
} from "../../lib/sandbox/mod.ts";
import { applyWorkspacePolicy, loadWorkspacePolicy } from "../../lib/sandbox/workspace_policy.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { accountHome } from "../../lib/sandbox/home.ts";
import { rememberDataRoot } from "../../lib/sandbox/_data_roots.ts";
import { privateRunDir } from "../../lib/sandbox/_standin_registry.ts";
import { resolveWorkspacePath } from "../../lib/tools/workspace_path.ts";
import { collect, exists, visibleTempDir } from "./_helpers.ts";

async function withBase(fn: (base: string) => Promise<void>): Promise<void> {
  const base = await visibleTempDir("penguin-home-test-");
  try {
    await fn(base);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

async function put(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

function policyOf(
  ws: string,
  home: string,
  more: Partial<Parameters<typeof createPolicy>[0]> = {},
) {
  return createPolicy({
    workspace: ws,
    home,
    hostEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
    ...more,
  });
}

async function sh(policy: SandboxPolicy, shell: string): Promise<string> {
  return (await collect(await spawnSandboxed({ shell, policy, stdin: "null" }))).out;
}

Deno.test("a linked toolchain directory is shown at its home path, its credentials are not", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await put(join(base, "gems", "specs", "a.txt"), "gem-spec-visible\n");
    await put(join(base, "gems", "credentials"), "gem-cred-SECRET\n");
    await Deno.mkdir(home);
    await Deno.symlink(join(base, "gems"), join(home, ".gem"));
    await put(join(home, "notes.txt"), "home-notes-SECRET\n");
    const policy = policyOf(ws, home);
    const plan = await resolvePlan(policy, ws);
    // (The account's own home from /etc/passwd is hidden too, its toolchains shown: not these.)
    const ours = (plan.reveals ?? []).filter((r) => r.target.startsWith(base + "/"));
    assert.deepEqual(ours, [{
      source: join(base, "gems"),
      target: join(home, ".gem"),
      kind: "dir",
    }]);
    const out = await sh(
      policy,
      `cat ~/.gem/specs/a.txt; cat ~/.gem/credentials ${base}/gems/credentials ~/notes.txt 2>&1`,
    );
    assert.match(out, /gem-spec-visible/);
    assert.doesNotMatch(out, /SECRET/);
  });
});

Deno.test("a toolchain link that leads into a secret or the workspace is not shown", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await put(join(home, ".ssh", "id_rsa"), "ssh-key-SECRET\n");
    await Deno.mkdir(join(home, ".local"), { recursive: true });
    await Deno.symlink(join(home, ".ssh"), join(home, ".local", "bin"));
    await Deno.mkdir(ws);
    await Deno.symlink(ws, join(home, ".deno"));
    const plan = await resolvePlan(policyOf(ws, home), ws);
    assert.deepEqual((plan.reveals ?? []).filter((r) => r.target.startsWith(base + "/")), []);
    const out = await sh(policyOf(ws, home), `cat ~/.local/bin/id_rsa ~/.ssh/id_rsa 2>&1`);
    assert.doesNotMatch(out, /SECRET/);
  });
});

Deno.test("HOME set to / or unset does not hide / and refuses no workspace", async () => {
  await withBase(async (base) => {
    const ws = join(base, "ws");
    await put(join(ws, "f.txt"), "visible\n");
    for (const home of ["/", ""]) {
      const policy = policyOf(ws, home);
      const plan = await resolvePlan(policy, ws);
      assert.ok(!plan.hideDirs.includes("/"), `HOME=${JSON.stringify(home)}`);
      assert.match(await sh(policy, "cat f.txt"), /visible/);
    }
  });
});

Deno.test("penguin.jsonc home_readable shows more of the home read-only; secrets and paths outside it are refused", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await put(join(home, ".gitconfig"), "[user]\n\tname = visible-user\n");
    await put(join(home, "sdk", "lib.txt"), "sdk-visible\n");
    await put(join(home, ".aws", "credentials"), "aws-SECRET\n");
    await put(join(ws, "penguin.jsonc"), '{ "home_readable": ["~/.gitconfig", "~/sdk"] }\n');
    const protectedPaths = [join(home, ".aws"), join(home, ".config")];
    const loaded = await loadWorkspacePolicy(ws, { home, protectedPaths });
    assert.deepEqual(loaded?.homeReadable, [join(home, ".gitconfig"), join(home, "sdk")]);
    const policy = policyOf(ws, home, { homeReadable: loaded!.homeReadable });
    const out = await sh(
      policy,
      `git config --global user.name; cat ~/sdk/lib.txt; echo x > ~/sdk/lib.txt; ` +
        `cat ~/.aws/credentials 2>&1`,
    );
    assert.match(out, /visible-user/);
    assert.match(out, /sdk-visible/);
    assert.doesNotMatch(out, /SECRET/);
    assert.equal(await Deno.readTextFile(join(home, "sdk", "lib.txt")), "sdk-visible\n");
    for (
      const [entry, why] of [
        ['"~/.aws"', /lies inside .*\.aws/],
        ['"~/.config/gh"', /lies inside .*\.config/],
        ['"/etc"', /is not in the home directory/],
        ['"rel/dir"', /is relative/],
        ['"~"', /whole home directory/],
      ] as const
    ) {
      await Deno.writeTextFile(join(ws, "penguin.jsonc"), `{ "home_readable": [${entry}] }\n`);
      await assert.rejects(loadWorkspacePolicy(ws, { home, protectedPaths }), why);
    }
  });
});

Deno.test("a workspace that is or contains HOME is refused without the flag, with the reason and the flag", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".bashrc"), "# rc\n");
    for (const ws of [home, base]) {
      const err = await resolvePlan(policyOf(ws, home), ws).then(() => undefined, (e) => e);
      assert.ok(err instanceof PenguinError, `workspace ${ws}`);
      assert.match(err.message, /home directory/);
      assert.match(err.message, /--allow-home-workspace/);
    }
    // In read-only mode too: the flag is the user's say.
    const ro = policyOf(home, home, { mode: "read-only" });
    await assert.rejects(resolvePlan(ro, home), /--allow-home-workspace/);
  });
});

Deno.test("with the flag, a home workspace keeps its startup files, loaded directories and credentials from commands", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".bashrc"), "# rc\n");
    await put(join(home, ".gitconfig"), "[user]\n\tname = u\n");
    await put(join(home, ".local", "bin", "tool"), "tool\n");
    await put(join(home, ".local", "share", "notes"), "notes\n");
    await put(join(home, ".netrc"), "netrc-SECRET\n");
    await put(join(home, "proj", "a.txt"), "a\n");
    const policy = policyOf(home, home, { allowHomeWorkspace: true });
    const out = await sh(
      policy,
      [
        "echo evil >> ~/.bashrc",
        "echo evil > ~/.gitconfig",
        "rm -f ~/.bashrc",
        "echo evil > ~/.profile",
        "mv ~/proj ~/proj2",
        "echo evil > ~/.local/bin/tool",
        "echo evil > ~/.local/share/notes",
        "echo ok > ~/proj/b.txt",
        "cat ~/.netrc",
        "echo end",
      ].join("; ") + " 2>&1",
    );
    assert.match(out, /end/);
    assert.doesNotMatch(out, /SECRET/);
    assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "# rc\n");
    assert.equal(await Deno.readTextFile(join(home, ".gitconfig")), "[user]\n\tname = u\n");
    assert.equal(await exists(join(home, ".profile")), false);
    assert.equal(await exists(join(home, "proj2")), false);
    assert.equal(await Deno.readTextFile(join(home, ".local", "bin", "tool")), "tool\n");
    // Every dot-entry of the home is the user's configuration: hidden, or shown read-only.
    assert.equal(await Deno.readTextFile(join(home, ".local", "share", "notes")), "notes\n");
    assert.equal(await Deno.readTextFile(join(home, "proj", "b.txt")), "ok\n");
  });
});

Deno.test("a startup file the home links into the workspace (a dotfiles repository) is read-only", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "dotfiles");
    await put(join(ws, "shell", "bashrc"), "# dotfiles rc\n");
    await Deno.mkdir(home);
    await Deno.symlink(join(ws, "shell", "bashrc"), join(home, ".bashrc"));
    const out = await sh(
      policyOf(ws, home),
      "echo evil >> shell/bashrc; echo ok > shell/other; echo end",
    );
    assert.match(out, /end/);
    assert.equal(await Deno.readTextFile(join(ws, "shell", "bashrc")), "# dotfiles rc\n");
    assert.equal(await Deno.readTextFile(join(ws, "shell", "other")), "ok\n");
  });
});

Deno.test("the file tools refuse a home workspace's startup files and credentials, as the sandbox does", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".bashrc"), "# rc\n");
    await put(join(home, ".aws", "credentials"), "aws\n");
    await put(join(home, "proj", "a.txt"), "a\n");
    const roots = { workspace: home, home };
    for (
      const [path, verb, why] of [
        [".bashrc", "write", /top of the home directory/],
        [".profile", "write", /top of the home directory/],
        [".local/bin/git", "write", /read-only to the model/],
        [".aws/credentials", "read", /credentials/],
      ] as const
    ) {
      const r = await resolveWorkspacePath(path, roots, verb);
      assert.equal(r.ok, false, path);
      if (!r.ok) assert.match(r.message, why);
    }
    assert.equal((await resolveWorkspacePath("proj/b.txt", roots, "write")).ok, true);
    assert.equal((await resolveWorkspacePath(".bashrc", roots, "read")).ok, true);
  });
});

Deno.test("home_readable widens, so it applies only from a trusted penguin.jsonc", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await put(join(home, "sdk", "lib.txt"), "sdk\n");
    await put(join(ws, "penguin.jsonc"), '{\n  "home_readable": ["~/sdk"]\n}\n');
    const loaded = await loadWorkspacePolicy(ws, { home, protectedPaths: [] });
    const flags = { sandbox: "workspace-write", network: false } as const;
    const untrusted = applyWorkspacePolicy(flags, loaded, "untrusted");
    assert.deepEqual(untrusted.homeReadable, []);
    assert.match(
      untrusted.notes.join("\n"),
      /line 2, column 21: "home_readable".*ignored.*penguin trust/,
    );
    const changed = applyWorkspacePolicy(flags, loaded, "changed");
    assert.deepEqual(changed.homeReadable, []);
    const trusted = applyWorkspacePolicy(flags, loaded, "trusted");
    assert.deepEqual(trusted.homeReadable, [join(home, "sdk")]);
  });
});

Deno.test("a sealed home: missing loaded directories cannot be made, dot-entries are hidden or read-only", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    // Sealed as the workspace (H4/H7/H8/H9) and as a directory the workspace holds (H11).
    for (const ws of [home, base]) {
      await put(join(home, ".bashrc"), "# rc\n");
      await put(join(home, ".local", "share", "x"), "x\n");
      await Deno.mkdir(join(home, "go"), { recursive: true });
      await Deno.mkdir(join(home, ".ipython"), { recursive: true });
      await Deno.mkdir(join(home, ".gradle"), { recursive: true });
      await put(join(home, ".cargo", "bin", "cargo"), "cargo-visible\n");
      for (
        const rel of [".yarnrc.yml", ".fly/config.yml", ".bundle/config", ".ollama/id_ed25519"]
      ) {
        await put(join(home, rel), `${rel}-SECRET\n`);
      }
      await Deno.mkdir(join(home, "proj"), { recursive: true });
      const policy = policyOf(ws, home, { allowHomeWorkspace: true });
      const made = [
        ".local/bin/git",
        ".local/lib/python3.11/site-packages/evil.pth",
        ".ipython/profile_default/startup/00-x.py",
        ".gradle/init.d/x.gradle",
        ".gradle/init.gradle",
        ".local/share/nvim/site/plugin/x.lua",
        ".vim/plugin/x.vim",
        ".vimrc",
        ".inputrc",
        ".config/autostart/x.desktop",
        "go/bin/go",
      ];
      const out = await sh(
        policy,
        [
          ...made.map((rel) => `mkdir -p "$(dirname ~/${rel})"; echo evil > ~/${rel}`),
          "mv ~/go ~/go2; mkdir -p ~/go/bin; echo evil > ~/go/bin/go",
          "cat ~/.yarnrc.yml ~/.fly/config.yml ~/.bundle/config ~/.ollama/id_ed25519",
          "ls -a ~/.ipython ~/.fly",
          "cat ~/.cargo/bin/cargo",
          "echo ok > ~/proj/b.txt",
          "echo end",
        ].join("; ") + " 2>&1",
      );
      assert.match(out, /end/);
      assert.match(out, /cargo-visible/);
      assert.doesNotMatch(out, /SECRET/);
      for (const rel of made) assert.equal(await exists(join(home, rel)), false, `${ws}: ${rel}`);
      assert.equal(await exists(join(home, "go2")), false);
      assert.equal(await Deno.readTextFile(join(home, "proj", "b.txt")), "ok\n");
      // The stand-ins are gone once the command has ended.
      assert.deepEqual(await Array.fromAsync(Deno.readDir(join(home, "go"))), []);
      // The file tools agree.
      const roots = { workspace: ws, home };
      const rel = (p: string) => ws === home ? p : `home/${p}`;
      for (const p of [".local/bin/git", ".local/lib/python3.11/site-packages/x.pth", ".vimrc"]) {
        assert.equal((await resolveWorkspacePath(rel(p), roots, "write")).ok, false, p);
      }
      for (const p of [".yarnrc.yml", ".fly/config.yml"]) {
        const r = await resolveWorkspacePath(rel(p), roots, "read");
        assert.equal(r.ok, false, p);
        if (!r.ok) assert.match(r.message, /user's configuration|user's credentials/);
      }
      assert.equal((await resolveWorkspacePath(rel(".bashrc"), roots, "read")).ok, true);
    }
  });
});

Deno.test("files the home's startup files source are read-only to commands and file tools", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(
      join(home, ".bashrc"),
      '. ~/dotfiles/aliases.sh\n[ -f "$HOME/dotfiles/local.sh" ] && source "$HOME/dotfiles/local.sh"\n' +
        "if true; then . ${HOME}/dotfiles/more.sh; fi # . ~/dotfiles/commented.sh\n",
    );
    await put(join(home, "dotfiles", "aliases.sh"), "alias ll='ls -l'\n");
    await put(join(home, "dotfiles", "more.sh"), "# more\n");
    await put(join(home, "dotfiles", "other.sh"), "# other\n");
    // A sealed home, and a dotfiles workspace of a hidden home.
    for (const ws of [home, join(home, "dotfiles")]) {
      const policy = policyOf(ws, home, { allowHomeWorkspace: true });
      const out = await sh(
        policy,
        "cd ~/dotfiles; echo evil >> aliases.sh; echo evil > local.sh; echo evil >> more.sh; " +
          "mv aliases.sh a2; echo ok >> other.sh; echo end",
      );
      assert.match(out, /end/);
      assert.equal(
        await Deno.readTextFile(join(home, "dotfiles", "aliases.sh")),
        "alias ll='ls -l'\n",
      );
      assert.equal(await Deno.readTextFile(join(home, "dotfiles", "more.sh")), "# more\n");
      assert.equal(await exists(join(home, "dotfiles", "local.sh")), false, ws);
      assert.equal(await exists(join(home, "dotfiles", "a2")), false, ws);
      assert.match(await Deno.readTextFile(join(home, "dotfiles", "other.sh")), /ok/);
      const roots = { workspace: ws, home };
      const p = (name: string) => ws === home ? `dotfiles/${name}` : name;
      for (const name of ["aliases.sh", "local.sh", "more.sh"]) {
        const r = await resolveWorkspacePath(p(name), roots, "write");
        assert.equal(r.ok, false, name);
        if (!r.ok) assert.match(r.message, /sourced by a shell startup file/);
      }
      assert.equal((await resolveWorkspacePath(p("other.sh"), roots, "write")).ok, true);
    }
  });
});

Deno.test("credentials inside shown toolchain directories stay hidden", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    await put(
      join(home, ".local", "share", "uv", "credentials", "credentials.toml"),
      "uv-SECRET\n",
    );
    await put(join(home, ".local", "share", "uv", "python", "v"), "uv-visible\n");
    await put(
      join(home, ".dotnet", "corefx", "cryptography", "x509stores", "my", "c.pfx"),
      "pfx-SECRET\n",
    );
    await put(join(home, ".dotnet", "sdk", "v"), "dotnet-visible\n");
    const out = await sh(
      policyOf(ws, home),
      "cat ~/.local/share/uv/python/v ~/.dotnet/sdk/v; grep -ra SECRET ~ 2>&1; " +
        "cat ~/.local/share/uv/credentials/credentials.toml 2>&1",
    );
    assert.match(out, /uv-visible/);
    assert.match(out, /dotnet-visible/);
    assert.doesNotMatch(out, /SECRET/);
  });
});

Deno.test("the account's home from /etc/passwd is hidden when HOME is / or another directory", async () => {
  const account = await accountHome();
  const real = account ? await Deno.realPath(account).catch(() => undefined) : undefined;
  if (real === undefined) return; // no account home here to hide
  await withBase(async (base) => {
    const ws = join(base, "ws");
    await put(join(ws, "f.txt"), "visible\n");
    const canary = join(real, `.penguin-home-test-${crypto.randomUUID()}`);
    const made = await Deno.writeTextFile(canary, "canary-SECRET\n").then(() => true, () => false);
    try {
      for (const home of ["/", "", join(base, "other")]) {
        if (home.startsWith(base)) await Deno.mkdir(home, { recursive: true });
        const policy = policyOf(ws, home);
        const plan = await resolvePlan(policy, ws);
        assert.ok(plan.hideDirs.includes(real), `HOME=${JSON.stringify(home)}`);
        const out = await sh(policy, `cat f.txt; cat ${canary} 2>&1`);
        assert.match(out, /visible/);
        assert.doesNotMatch(out, /SECRET/);
        if (made) assert.doesNotMatch(await sh(policy, `ls -a ${real}`), /penguin-home-test/);
      }
    } finally {
      if (made) await Deno.remove(canary);
    }
  });
});

/** Credential files a version manager keeps per installed version, inside shown toolchains. */
const PER_VERSION_CREDENTIALS = [
  ".nvm/versions/node/v20.11.0/etc/npmrc",
  ".volta/tools/image/node/20.11.0/etc/npmrc",
  ".asdf/installs/nodejs/20.11.0/etc/npmrc",
  ".local/share/mise/installs/node/20.11.0/etc/npmrc",
  ".fnm/node-versions/v20.11.0/installation/etc/npmrc",
  ".local/share/pnpm/global/5/.npmrc",
  ".pyenv/versions/3.11.7/pip.conf",
  ".pyenv/versions/3.11.7/envs/venv1/pip.conf",
  ".local/share/uv/python/cpython-3.12.1-linux-x86_64-gnu/pip.conf",
  ".rbenv/versions/3.2.0/etc/gemrc",
];

Deno.test("per-version credentials in shown toolchains (global npmrc, pip.conf, gemrc) stay hidden", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await Deno.mkdir(ws);
    for (const rel of PER_VERSION_CREDENTIALS) {
      await put(join(home, rel), `token=cred-SECRET ${rel}\n`);
      await put(join(home, rel, "..", "visible.txt"), `shown ${rel}\n`);
    }
    const out = await sh(
      policyOf(ws, home),
      PER_VERSION_CREDENTIALS.map((rel) => `cat ~/${rel} ~/${dirname(rel)}/visible.txt`).join(
        "; ",
      ) +
        " 2>&1; grep -ra SECRET ~ 2>&1; echo end",
    );
    assert.match(out, /end/);
    for (const rel of PER_VERSION_CREDENTIALS) assert.match(out, new RegExp(`shown ${rel}`));
    assert.doesNotMatch(out, /SECRET/);
  });
});

Deno.test("a sealed home hides container registry logins and per-version toolchain credentials; the file tools refuse them", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".bashrc"), "# rc\n");
    const secrets = [
      ".local/share/containers/auth.json",
      ".yarnrc.yml",
      ".bunfig.toml",
      ".pip/pip.conf",
      ".m2/settings-security.xml",
      ...PER_VERSION_CREDENTIALS,
    ];
    for (const rel of secrets) await put(join(home, rel), `{"auth":"reg-SECRET"}\n`);
    await put(join(home, ".nvm", "versions", "node", "v20.11.0", "bin", "node"), "node-visible\n");
    const policy = policyOf(home, home, { allowHomeWorkspace: true });
    const out = await sh(
      policy,
      `cat ~/.nvm/versions/node/v20.11.0/bin/node; ${
        secrets.map((rel) => `cat ~/${rel}`).join("; ")
      } 2>&1; grep -ra SECRET ~ 2>&1; echo end`,
    );
    assert.match(out, /end/);
    assert.match(out, /node-visible/);
    assert.doesNotMatch(out, /SECRET/);
    const roots = { workspace: home, home };
    for (const rel of secrets) {
      const r = await resolveWorkspacePath(rel, roots, "read");
      assert.equal(r.ok, false, rel);
      if (!r.ok) assert.match(r.message, /credentials|configuration/, rel);
    }
    assert.equal(
      (await resolveWorkspacePath(".nvm/versions/node/v20.11.0/bin/node", roots, "read")).ok,
      true,
    );
  });
});

Deno.test("podman's registry logins in the runtime directory ($XDG_RUNTIME_DIR/containers) are hidden", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    const runtime = join(base, "run-user");
    await Deno.mkdir(ws);
    await Deno.mkdir(home);
    await put(join(runtime, "containers", "auth.json"), `{"auths":{"r":{"auth":"rt-SECRET"}}}\n`);
    await put(join(runtime, "other.txt"), "runtime-visible\n");
    const policy = createPolicy({
      workspace: ws,
      home,
      hostEnv: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        XDG_RUNTIME_DIR: runtime,
      },
    });
    const out = await sh(
      policy,
      `cat ${runtime}/other.txt; grep -ra SECRET ${runtime} 2>&1; echo end`,
    );
    assert.match(out, /runtime-visible/);
    assert.match(out, /end/);
    assert.doesNotMatch(out, /SECRET/);
  });
});

Deno.test("a linked startup file deep in a dotfiles workspace cannot be replaced by moving its directory", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "dotfiles");
    await put(join(ws, "shell", "bash", "bashrc"), "# dotfiles rc\n");
    await Deno.mkdir(home);
    await Deno.symlink(join(ws, "shell", "bash", "bashrc"), join(home, ".bashrc"));
    const out = await sh(
      policyOf(ws, home),
      "mv shell/bash shell/b2; mv shell s2; mkdir -p shell/bash; echo 'echo PWNED' > shell/bash/bashrc; echo end",
    );
    assert.match(out, /end/);
    assert.equal(await Deno.readTextFile(join(home, ".bashrc")), "# dotfiles rc\n");
    assert.equal(await exists(join(ws, "s2")), false);
    assert.equal(await exists(join(ws, "shell", "b2")), false);
  });
});

Deno.test("a sealed home hides where its linked dot-entries and sourced files really lie, and pins their directories", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(
      join(home, "dotfiles", "sub", "bashrc"),
      "export TOK=TokLinkedRcZZ\n. ~/env/deep/tok.sh\n",
    );
    await put(join(home, "dotfiles", "vim", "vimrc"), "let g:tok='TokLinkedDirZZ'\n");
    await put(join(home, "env", "deep", "tok.sh"), "export T2=TokSourcedZZ\n");
    await Deno.symlink("dotfiles/sub/bashrc", join(home, ".bashrc"));
    await Deno.symlink("dotfiles/vim", join(home, ".vim"));
    const out = await sh(
      policyOf(home, home, { allowHomeWorkspace: true }),
      "cat ~/dotfiles/sub/bashrc ~/.bashrc ~/dotfiles/vim/vimrc ~/env/deep/tok.sh 2>&1; " +
        "mv ~/dotfiles/sub ~/dotfiles/s2; mv ~/env/deep ~/env/d2; " +
        "mkdir -p ~/dotfiles/sub ~/env/deep; echo 'echo PWNED' > ~/dotfiles/sub/bashrc; " +
        "echo 'echo PWNED' > ~/env/deep/tok.sh; echo end",
    );
    assert.match(out, /end/);
    assert.doesNotMatch(out, /TokLinkedRcZZ|TokLinkedDirZZ|TokSourcedZZ/);
    assert.match(await Deno.readTextFile(join(home, ".bashrc")), /TokLinkedRcZZ/);
    assert.equal(
      await Deno.readTextFile(join(home, "env", "deep", "tok.sh")),
      "export T2=TokSourcedZZ\n",
    );
    assert.equal(await exists(join(home, "dotfiles", "s2")), false);
    assert.equal(await exists(join(home, "env", "d2")), false);
  });
});

Deno.test("a sealed home hides the other names (hard links) of its hidden files, and keeps those of read-only ones read-only (red team Y8b)", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".profile"), "export TOK=TokHardProfileZZ\n");
    await put(join(home, ".netrc"), "machine x password TokHardNetrcZZ\n");
    await put(join(home, "dotfiles", "loaded.sh"), "# loaded\n");
    await put(join(home, ".bashrc"), ". ~/dotfiles/loaded.sh\n");
    await Deno.mkdir(join(home, "proj", "deep"), { recursive: true });
    await Deno.link(join(home, ".profile"), join(home, "dotfiles", "profile"));
    await Deno.link(join(home, ".netrc"), join(home, "proj", "deep", "n"));
    const ws = join(base, "ws");
    await put(join(ws, "rc.sh"), "# rc\n");
    await Deno.symlink(join(ws, "rc.sh"), join(home, ".zshrc"));
    await Deno.link(join(ws, "rc.sh"), join(ws, "rc2.sh"));
    const out = await sh(
      policyOf(home, home, { allowHomeWorkspace: true }),
      "cat ~/dotfiles/profile ~/proj/deep/n 2>&1; mv ~/proj/deep ~/proj/d2; echo end",
    );
    assert.match(out, /end/);
    assert.doesNotMatch(out, /TokHard/);
    assert.equal(await exists(join(home, "proj", "d2")), false);
    // A dotfiles workspace of a hidden home: the other name of a linked startup file is read-only.
    await sh(policyOf(ws, home), "echo evil >> rc2.sh; echo end");
    assert.equal(await Deno.readTextFile(join(ws, "rc.sh")), "# rc\n");
  });
});

Deno.test("a sealed home: second names of a secret directory's files are hidden, of a read-only PATH directory's programs read-only (red team final6 X1–X3, X36, X37)", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    await put(join(home, ".ssh", "id_ed25519"), "TokSshKeyZZ\n");
    await put(join(home, ".aws", "credentials"), "TokAwsZZ\n");
    await put(join(home, "bin", "deploy"), "#!/bin/sh\necho deploy\n");
    await put(join(home, ".local", "bin", "mytool"), "#!/bin/sh\necho tool\n");
    await Deno.mkdir(join(home, "proj", "bk"), { recursive: true });
    await Deno.link(join(home, ".ssh", "id_ed25519"), join(home, "proj", "bk", "key"));
    await Deno.link(join(home, ".aws", "credentials"), join(home, "proj", "bk", "aws"));
    await Deno.link(join(home, "bin", "deploy"), join(home, "proj", "deploy"));
    await Deno.link(join(home, ".local", "bin", "mytool"), join(home, "proj", "mytool"));
    const policy = policyOf(home, home, {
      allowHomeWorkspace: true,
      hostEnv: { PATH: `${join(home, ".local", "bin")}:/usr/bin:/bin`, HOME: home },
    });
    const out = await sh(
      policy,
      "cat ~/proj/bk/key ~/proj/bk/aws 2>&1; echo 'echo PWNED' >> ~/proj/deploy; " +
        "echo 'echo PWNED' >> ~/proj/mytool; echo end",
    );
    assert.match(out, /end/);
    assert.doesNotMatch(out, /TokSshKeyZZ|TokAwsZZ/);
    assert.doesNotMatch(await Deno.readTextFile(join(home, "bin", "deploy")), /PWNED/);
    assert.doesNotMatch(await Deno.readTextFile(join(home, ".local", "bin", "mytool")), /PWNED/);
  });
});

Deno.test("a toolchain path linking out of the home never leads into what plans hide elsewhere (round 24 concgit 1)", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    const otherRoot = join(base, "other-data-root");
    await put(
      join(otherRoot, "default_project", ".project_config.toml"),
      'api_key = "root-SECRET"\n',
    );
    await rememberDataRoot(otherRoot);
    await Deno.mkdir(ws);
    await Deno.mkdir(join(home, "go"), { recursive: true });
    const account = await accountHome();
    const accountDir = account === undefined ? undefined : await firstDirIn(account);
    const targets = [
      join(otherRoot, "default_project"),
      otherRoot,
      await privateRunDir(),
      ...accountDir !== undefined && account !== home ? [accountDir] : [],
    ];
    // A session whose workspace is ~/go made the link, at any time before.
    const policy = policyOf(ws, home);
    for (const to of targets) {
      await Deno.remove(join(home, "go", "bin")).catch(() => {});
      await Deno.symlink(to, join(home, "go", "bin"));
      const plan = await resolvePlan(policy, ws);
      const reveal = plan.reveals?.find((r) => r.target === join(home, "go", "bin"));
      assert.equal(reveal, undefined, `${to}: ${JSON.stringify(reveal)}`);
    }
    const out = await sh(policy, `cat ~/go/bin/.project_config.toml 2>&1; ls ~/go/bin 2>&1`);
    assert.doesNotMatch(out, /SECRET/);
  });
});

/** A directory in `dir` (the first listed), if any. */
async function firstDirIn(dir: string): Promise<string | undefined> {
  try {
    for await (const e of Deno.readDir(dir)) if (e.isDirectory) return join(dir, e.name);
  } catch {
    // unreadable: none
  }
  return undefined;
}

Deno.test("a toolchain path linking elsewhere in the home is not shown; one linking out of it is (round 23 break 4)", async () => {
  await withBase(async (base) => {
    const home = join(base, "home");
    const ws = join(base, "ws");
    await put(join(home, ".bashrc"), "export TOKEN=bashrc-SECRET\n");
    await put(join(home, "projC", ".env"), "API_KEY=projC-SECRET\n");
    await put(join(base, "opt", "gobin", "tool"), "tool-visible\n");
    await Deno.mkdir(ws);
    await Deno.mkdir(join(home, "go"));
    // A session whose workspace is ~/go made these links (no race: they stay).
    const policy = policyOf(ws, home);
    for (
      const [to, shownAs] of [
        ["../.bashrc", undefined],
        ["../projC", undefined],
        [join(base, "opt", "gobin"), join(base, "opt", "gobin")],
      ] as const
    ) {
      await Deno.remove(join(home, "go", "bin")).catch(() => {});
      await Deno.symlink(to, join(home, "go", "bin"));
      const plan = await resolvePlan(policy, ws);
      const reveal = plan.reveals?.find((r) => r.target === join(home, "go", "bin"));
      assert.equal(reveal?.source, shownAs, `${to}: ${JSON.stringify(plan.reveals)}`);
      const out = await sh(policy, `cat ~/go/bin ~/go/bin/.env ~/go/bin/tool 2>&1`);
      assert.doesNotMatch(out, /SECRET/);
      if (shownAs) assert.match(out, /tool-visible/);
    }
  });
});
