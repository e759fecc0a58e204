// The XDG directories and credential stores a user moves in startup files the shell snapshot's
// `bash -l` never runs are hidden too (lib/sandbox/_startup_values.ts): `XDG_CONFIG_HOME` in
// `~/.zshenv` and `XDG_DATA_HOME` below `~/.bashrc`'s interactive guard moved a gh token and a
// keyring where nothing hid them (attack round 30 o03); fish's `config.fish` and systemd's
// `environment.d` likewise.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import { assignmentsIn, expandValue, startupValues } from "../../lib/sandbox/_startup_values.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { putFile as put, shellOutput, visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

Deno.test("assignmentsIn: sh, fish and pam_env forms; never a comment", () => {
  const text = [
    'export XDG_CONFIG_HOME="$HOME/dot/config"',
    "case $- in *i*) ;; *) return;; esac; XDG_DATA_HOME=~/data",
    ": ${XDG_STATE_HOME:=/srv/state}",
    "set -gx CARGO_HOME '/opt/cargo'",
    "XDG_CACHE_HOME DEFAULT=@{HOME}/cache",
    "# export GNUPGHOME=/nope",
    "  typeset -x ZDOTDIR=/etc/zdot",
  ].join("\n");
  assert.deepEqual(assignmentsIn(text), [
    ["XDG_CONFIG_HOME", "$HOME/dot/config"],
    ["XDG_DATA_HOME", "~/data"],
    ["XDG_STATE_HOME", "/srv/state"],
    ["CARGO_HOME", "/opt/cargo"],
    ["XDG_CACHE_HOME", "@{HOME}/cache"],
    ["ZDOTDIR", "/etc/zdot"],
  ]);
});

Deno.test("expandValue: the home and defaults expanded; anything else left out", () => {
  assert.equal(expandValue("$HOME/dot/config", "/home/a"), "/home/a/dot/config");
  assert.equal(expandValue("${HOME}/x", "/home/a"), "/home/a/x");
  assert.equal(expandValue("@{HOME}/cache", "/home/a"), "/home/a/cache");
  assert.equal(expandValue("~/data", "/home/a"), "/home/a/data");
  assert.equal(expandValue("${XDG_CONFIG_HOME:-/srv/cfg}", "/home/a"), "/srv/cfg");
  assert.equal(expandValue("$PROJECT/cfg", "/home/a"), undefined);
  assert.equal(expandValue("`pwd`/cfg", "/home/a"), undefined);
  assert.equal(expandValue("", "/home/a"), undefined);
});

Deno.test({
  name: "what ~/.zshenv, ~/.bashrc past its guard, fish and environment.d move is hidden",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-startup-values-");
    try {
      const home = join(base, "home");
      const ws = join(base, "ws");
      await Deno.mkdir(ws, { recursive: true });
      const [cfg, data, cargo, state] = ["zcfg", "bdata", "cargo", "state"].map((d) =>
        join(base, d)
      );
      await put(join(cfg!, "gh", "hosts.yml"), "oauth_token: startupsecret1\n");
      await put(join(data!, "keyrings", "login.keyring"), "startupsecret2\n");
      await put(join(cargo!, "credentials.toml"), "token = 'startupsecret3'\n");
      await put(join(state!, "zsh", "history"), "startupsecret4\n");
      await put(join(home, ".zshenv"), `export XDG_CONFIG_HOME=${cfg}\n`);
      await put(
        join(home, ".bashrc"),
        `case $- in *i*) ;; *) return;; esac\nexport XDG_DATA_HOME=${data}\n`,
      );
      await put(join(home, ".config", "fish", "config.fish"), `set -gx CARGO_HOME ${cargo}\n`);
      await put(join(home, ".config", "environment.d", "10-xdg.conf"), `XDG_STATE_HOME=${state}\n`);
      const policy = createPolicy({
        workspace: ws,
        home,
        hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: home },
      });
      const out = await shellOutput(
        policy,
        `cat ${cfg}/gh/hosts.yml ${data}/keyrings/login.keyring ${cargo}/credentials.toml ` +
          `${state}/zsh/history 2>/dev/null; echo mine > here.txt && cat here.txt`,
      );
      assert.doesNotMatch(out, /startupsecret/, out);
      assert.match(out, /mine/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("assignmentsIn: the other spellings of round 32 u05, u14", () => {
  const text = [
    "export -- CARGO_HOME=/a",
    'KUBECONFIG+=":/b"',
    'GNUPGHOME="/c"/gpg',
    "export \\",
    "XDG_DATA_HOME=/d",
    "setenv XDG_STATE_HOME /e",
    "SETUVAR --export XDG_CONFIG_HOME:/f\\x2fg",
    '$env.XDG_CACHE_HOME = "/h"',
    "$HF_HOME = '/i'",
    "set-env PULUMI_HOME /j",
    "set E:COMPOSER_HOME = /k",
    ". ~/.bash_aliases; source ~/.config/sh/*.sh",
  ].join("\n");
  const got = assignmentsIn(text);
  for (
    const [name, value] of [
      ["CARGO_HOME", "/a"],
      ["KUBECONFIG", ":/b"],
      ["GNUPGHOME", "/c/gpg"],
      ["XDG_DATA_HOME", "/d"],
      ["XDG_STATE_HOME", "/e"],
      ["XDG_CONFIG_HOME", "/f/g"],
      ["XDG_CACHE_HOME", "/h"],
      ["HF_HOME", "/i"],
      ["PULUMI_HOME", "/j"],
      ["COMPOSER_HOME", "/k"],
    ]
  ) {
    assert.ok(
      got.some(([n, v]) => n === name && v === value),
      `${name}=${value}: ${JSON.stringify(got)}`,
    );
  }
});

Deno.test("startupValues follows sourced files, globs and fish's files (round 32 u05, u14)", async () => {
  const home = await Deno.makeTempDir({ prefix: "penguin-startup-follow-" });
  try {
    await put(
      join(home, ".bashrc"),
      ". ~/.bash_aliases\nfor f in ~/.config/sh/*.sh; do :; done\nsource ~/.config/sh/*.sh\n",
    );
    await put(join(home, ".bash_aliases"), "export CARGO_HOME=/srv/a-cargo\n");
    await put(join(home, ".config", "sh", "env.sh"), "export KUBECONFIG=/srv/b-kube\n");
    await put(join(home, ".config", "fish", "conf.d", "x.fish"), "set -gx GNUPGHOME /srv/c-gpg\n");
    await put(
      join(home, ".config", "fish", "fish_variables"),
      "SETUVAR --export XDG_CONFIG_HOME:/srv/d\\x2dcfg\n",
    );
    const got = startupValues(home, ["CARGO_HOME", "KUBECONFIG", "GNUPGHOME", "XDG_CONFIG_HOME"]);
    assert.deepEqual(
      got.map((e) => Object.entries(e)[0]!.join("=")).sort(),
      [
        "CARGO_HOME=/srv/a-cargo",
        "GNUPGHOME=/srv/c-gpg",
        "KUBECONFIG=/srv/b-kube",
        "XDG_CONFIG_HOME=/srv/d-cfg",
      ],
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
