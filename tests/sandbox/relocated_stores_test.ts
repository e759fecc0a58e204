// Credential stores a tool keeps where its own variable says, outside the home
// (lib/sandbox/_relocated_stores.ts): with CARGO_HOME, DOCKER_CONFIG, HF_HOME, GNUPGHOME,
// KUBECONFIG, CLOUDSDK_CONFIG, GH_CONFIG_DIR and AWS_SHARED_CREDENTIALS_FILE set elsewhere, a
// command read all eight tokens (attack round 30 o10). Now hidden; the rest of those directories
// (a cargo registry cache, docker's other files) stays readable.
import assert from "node:assert/strict";
import { join } from "node:path";
import { createPolicy } from "../../lib/sandbox/policy.ts";
import { spawnSandboxed } from "../../lib/sandbox/spawn.ts";
import { relocatedStorePaths } from "../../lib/sandbox/_relocated_stores.ts";
import { BWRAP_USABLE as bwrap } from "./_bwrap.ts";
import { putFile, shellOutput, visibleTempDir } from "./_helpers.ts";
import { useTestRunDir } from "../support/run_dir.ts";

useTestRunDir();

Deno.test("each tool's variable names what to hide: a directory, a file in it, the file", () => {
  assert.deepEqual(
    relocatedStorePaths({
      CARGO_HOME: "/opt/cargo/",
      GNUPGHOME: "/srv/gpg",
      KUBECONFIG: "/k/a.yaml:/k/b.yaml",
      NETRC: "relative/netrc",
      DOCKER_CONFIG: "/",
      GOOGLE_APPLICATION_CREDENTIALS: "/etc",
    }).sort(),
    [
      "/k/a.yaml",
      "/k/b.yaml",
      "/opt/cargo/config",
      "/opt/cargo/config.toml",
      "/opt/cargo/credentials",
      "/opt/cargo/credentials.toml",
      "/srv/gpg",
    ],
  );
});

Deno.test("a store inside a system directory is hidden, never the directory (round 31 t01, t02)", () => {
  assert.deepEqual(
    relocatedStorePaths({
      CARGO_HOME: "/usr/local/cargo",
      KUBECONFIG: "/etc/app/kubeconfig",
      AWS_CONFIG_FILE: "/usr",
      DOCKER_CONFIG: "/srv/docker",
      HF_TOKEN_PATH: "/srv/hf/token",
      npm_config_userconfig: "/srv/npmrc",
      KRB5CCNAME: "FILE:/srv/krb5cc_0",
      KRB5_CONFIG: "/ignored",
      KAGGLE_CONFIG_DIR: "/srv/kaggle",
    }).sort(),
    [
      "/etc/app/kubeconfig",
      "/srv/docker",
      "/srv/hf/token",
      "/srv/kaggle/kaggle.json",
      "/srv/krb5cc_0",
      "/srv/npmrc",
      "/usr/local/cargo/config",
      "/usr/local/cargo/config.toml",
      "/usr/local/cargo/credentials",
      "/usr/local/cargo/credentials.toml",
    ],
  );
});

Deno.test({
  name: "a store in the workspace stays hidden when a command renames its directory (round 31 t09)",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-store-rename-");
    try {
      const ws = join(base, "ws");
      await Deno.mkdir(join(ws, ".cargo"), { recursive: true });
      await Deno.mkdir(join(ws, "deep", ".kube"), { recursive: true });
      await Deno.writeTextFile(join(ws, ".cargo", "credentials.toml"), "token = moved-secret-1\n");
      await Deno.writeTextFile(join(ws, "deep", ".kube", "config"), "token: moved-secret-2\n");
      const policy = createPolicy({
        workspace: ws,
        home: "",
        hostEnv: {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: ws,
          CARGO_HOME: join(ws, ".cargo"),
          KUBECONFIG: join(ws, "deep", ".kube", "config"),
        },
      });
      const run = (shell: string) => shellOutput(policy, shell);
      const moved = await run(
        "mv .cargo c2; echo rc1=$?; mv deep d2; echo rc2=$?; mv deep/.kube k2; echo rc3=$?",
      );
      assert.doesNotMatch(moved, /rc[123]=0/, moved);
      const read = await run(
        "cat c2/* d2/.kube/* k2/* .cargo/* deep/.kube/* 2>/dev/null; echo end",
      );
      assert.doesNotMatch(read, /moved-secret/, read);
      assert.match(read, /end/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "credential stores moved by their tools' variables are hidden from commands",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-relocated-stores-");
    try {
      const ws = join(base, "ws");
      await Deno.mkdir(ws);
      const put = (rel: string, text: string) => putFile(join(base, rel), text);
      await put("cargo/credentials.toml", "token = store-secret-1\n");
      await put("cargo/registry/cache.txt", "cache-ok\n");
      await put("docker/config.json", '{"auths":"store-secret-2"}\n');
      await put("hf/token", "store-secret-3\n");
      await put("gnupg/private-keys-v1.d/k.key", "store-secret-4\n");
      await put("kube/config", "token: store-secret-5\n");
      await put("gcloud/credentials.db", "store-secret-6\n");
      await put("gh/hosts.yml", "oauth_token: store-secret-7\n");
      await put("aws/credentials", "aws_secret_access_key=store-secret-8\n");
      const env = {
        CARGO_HOME: join(base, "cargo"),
        DOCKER_CONFIG: join(base, "docker"),
        HF_HOME: join(base, "hf"),
        GNUPGHOME: join(base, "gnupg"),
        KUBECONFIG: join(base, "kube", "config"),
        CLOUDSDK_CONFIG: join(base, "gcloud"),
        GH_CONFIG_DIR: join(base, "gh"),
        AWS_SHARED_CREDENTIALS_FILE: join(base, "aws", "credentials"),
      };
      const policy = createPolicy({
        workspace: ws,
        home: "",
        hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws, ...env },
      });
      let out = "";
      const child = await spawnSandboxed({
        shell: `cat $(find ${base} -type f 2>/dev/null) 2>/dev/null; echo end`,
        policy: { ...policy, hideOtherDataRoots: false },
        onOutput: (chunk) => void (out += chunk),
      });
      await child.status;
      assert.doesNotMatch(out, /store-secret/, out);
      assert.match(out, /cache-ok/);
      assert.match(out, /end/);
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test("KRB5CCNAME's DIR:: form names one cache file (round 32 x11)", () => {
  assert.deepEqual(relocatedStorePaths({ KRB5CCNAME: "DIR::/srv/krb/tkt" }), ["/srv/krb/tkt"]);
  assert.deepEqual(relocatedStorePaths({ KRB5CCNAME: "DIR:/srv/krb" }), ["/srv/krb"]);
});

Deno.test({
  name:
    "a store reached through a link in the workspace cannot be re-pointed away (round 32 u11, x08, x14)",
  ignore: !bwrap,
  fn: async () => {
    const base = await visibleTempDir("penguin-store-links-");
    try {
      const ws = join(base, "ws");
      for (const d of ["envs/dev/cargo", "sub", "tools/kube", "top/cargo"]) {
        await Deno.mkdir(join(ws, d), { recursive: true });
      }
      await Deno.writeTextFile(join(ws, "envs/dev/cargo/credentials.toml"), "linked-secret-1\n");
      await Deno.writeTextFile(join(ws, "tools/kube/config"), "linked-secret-2\n");
      await Deno.writeTextFile(join(ws, "top/cargo/credentials.toml"), "linked-secret-3\n");
      // A link below the workspace's top, and one outside it leading in.
      await Deno.symlink("../envs/dev", join(ws, "sub", "env"));
      await Deno.symlink(join(ws, "tools", "kube"), join(base, "kube-link"));
      const run = async (env: Record<string, string>, shell: string) => {
        const policy = createPolicy({
          workspace: ws,
          home: "",
          hostEnv: { PATH: Deno.env.get("PATH") ?? "", HOME: ws, ...env },
        });
        return await shellOutput(policy, shell);
      };
      const env = {
        CARGO_HOME: join(ws, "sub", "env", "cargo"),
        KUBECONFIG: join(base, "kube-link", "config"),
      };
      const moved = await run(
        env,
        "rm sub/env; echo rc1=$?; ln -sfn /tmp sub/env; echo rc2=$?; mv tools/kube tools/k2; echo rc3=$?",
      );
      assert.doesNotMatch(moved, /rc[123]=0/, moved);
      const read = await run(env, "cat envs/dev/cargo/* tools/*/config 2>/dev/null; echo end");
      assert.doesNotMatch(read, /linked-secret/, read);
      assert.match(read, /end/);
      // A link directly in the workspace cannot be kept from being re-pointed: refused.
      await Deno.symlink("top", join(ws, "env2"));
      await assert.rejects(
        () => run({ CARGO_HOME: join(ws, "env2", "cargo") }, "true"),
        /reached through the symbolic link .*env2/,
      );
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
