/**
 * Credential stores a tool keeps where its own environment variable says, outside the home
 * (`CARGO_HOME`, `DOCKER_CONFIG`, `GNUPGHOME`, `KUBECONFIG`, `AWS_SHARED_CREDENTIALS_FILE`, …):
 * the home rule hides them only at their usual place under the home, and with the variable set
 * elsewhere a command read all eight tokens (attack round 30 o10). Each variable set to an
 * absolute path names what to hide there: the whole directory, a file in it, or the file itself.
 *
 * @module
 */
import { isAbsolute, join, normalize } from "node:path";
import { inside } from "./_paths.ts";

/** How a variable's value names what to hide. */
type Store =
  | { kind: "dir" }
  | { kind: "in"; names: readonly string[] }
  | { kind: "file" }
  | { kind: "files" };

/** Each variable and what it names. */
export const CREDENTIAL_VARS: Readonly<Record<string, Store>> = {
  // cargo's registry tokens may sit in its config too (`[registries.x] token`); the home shows
  // only `bin`, `env`, `registry` and `git` of `~/.cargo` (attack round 31 t02).
  CARGO_HOME: { kind: "in", names: ["credentials", "credentials.toml", "config", "config.toml"] },
  // Whole: its TLS client keys (`key.pem`) lie beside `config.json` (t02).
  DOCKER_CONFIG: { kind: "dir" },
  DOCKER_CERT_PATH: { kind: "dir" },
  HF_HOME: { kind: "in", names: ["token", "stored_tokens"] },
  HF_TOKEN_PATH: { kind: "file" },
  GH_CONFIG_DIR: { kind: "in", names: ["hosts.yml"] },
  KAGGLE_CONFIG_DIR: { kind: "in", names: ["kaggle.json"] },
  PULUMI_HOME: { kind: "in", names: ["credentials.json"] },
  POETRY_CONFIG_DIR: { kind: "in", names: ["auth.toml"] },
  COMPOSER_HOME: { kind: "in", names: ["auth.json"] },
  GRADLE_USER_HOME: { kind: "in", names: ["gradle.properties"] },
  GNUPGHOME: { kind: "dir" },
  CLOUDSDK_CONFIG: { kind: "dir" },
  AZURE_CONFIG_DIR: { kind: "dir" },
  PASSWORD_STORE_DIR: { kind: "dir" },
  KUBECONFIG: { kind: "files" },
  AWS_SHARED_CREDENTIALS_FILE: { kind: "file" },
  AWS_CONFIG_FILE: { kind: "file" },
  AWS_WEB_IDENTITY_TOKEN_FILE: { kind: "file" },
  AZURE_FEDERATED_TOKEN_FILE: { kind: "file" },
  NPM_CONFIG_USERCONFIG: { kind: "file" },
  // npm reads its configuration variables in lower case too (t02).
  npm_config_userconfig: { kind: "file" },
  PIP_CONFIG_FILE: { kind: "file" },
  NETRC: { kind: "file" },
  RCLONE_CONFIG: { kind: "file" },
  TF_CLI_CONFIG_FILE: { kind: "file" },
  GOOGLE_APPLICATION_CREDENTIALS: { kind: "file" },
  CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: { kind: "file" },
  DATABRICKS_CONFIG_FILE: { kind: "file" },
  OCI_CLI_CONFIG_FILE: { kind: "file" },
  REGISTRY_AUTH_FILE: { kind: "file" },
  HELM_REGISTRY_CONFIG: { kind: "file" },
  BUNDLE_USER_CONFIG: { kind: "file" },
  SOPS_AGE_KEY_FILE: { kind: "file" },
  ANSIBLE_VAULT_PASSWORD_FILE: { kind: "file" },
  // A shell history moved elsewhere: the commands typed, tokens with them.
  HISTFILE: { kind: "file" },
  // A Kerberos ticket cache (`FILE:` and `DIR:` forms; a bare path is a file).
  KRB5CCNAME: { kind: "file" },
};

/** Directories never hidden for a variable, nor one holding them (what is inside them may be). */
const SYSTEM_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/proc", "/sys", "/dev"];

/** The paths the variables of `env` name (lexical; whether or not they exist). */
export function relocatedStorePaths(env: Record<string, string | undefined>): string[] {
  const out = new Set<string>();
  // Inside a system directory too (the rust image's `CARGO_HOME=/usr/local/cargo`, a service's
  // `/etc/app/kubeconfig`: attack round 31 t01); never a system directory or one holding it.
  const usable = (v: string) => {
    if (!isAbsolute(v) || v.includes("\0")) return undefined;
    const p = normalize(v).replace(/(.)\/+$/, "$1");
    return p === "/" || SYSTEM_DIRS.some((s) => inside(s, p)) ? undefined : p;
  };
  for (const [name, store] of Object.entries(CREDENTIAL_VARS)) {
    const v = env[name];
    if (!v) continue;
    const values = store.kind === "files"
      ? v.split(":")
      : name === "KRB5CCNAME"
      ? [v.replace(/^(FILE|DIR)::?/, "")]
      : [v];
    for (const raw of values) {
      const p = usable(raw);
      if (p === undefined) continue;
      if (store.kind === "in") { for (const n of store.names) out.add(join(p, n)); }
      else out.add(p);
    }
  }
  return [...out];
}

/** penguin's own values of the variables (read one by one, as the permission set allows). */
export function ownStoreEnv(): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.keys(CREDENTIAL_VARS).map((name) => {
      try {
        return [name, Deno.env.get(name)];
      } catch {
        return [name, undefined];
      }
    }),
  );
}
