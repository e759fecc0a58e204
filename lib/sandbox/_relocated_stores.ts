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
  CARGO_HOME: { kind: "in", names: ["credentials", "credentials.toml"] },
  DOCKER_CONFIG: { kind: "in", names: ["config.json"] },
  HF_HOME: { kind: "in", names: ["token", "stored_tokens"] },
  GH_CONFIG_DIR: { kind: "in", names: ["hosts.yml"] },
  GNUPGHOME: { kind: "dir" },
  CLOUDSDK_CONFIG: { kind: "dir" },
  AZURE_CONFIG_DIR: { kind: "dir" },
  PASSWORD_STORE_DIR: { kind: "dir" },
  KUBECONFIG: { kind: "files" },
  AWS_SHARED_CREDENTIALS_FILE: { kind: "file" },
  AWS_CONFIG_FILE: { kind: "file" },
  NPM_CONFIG_USERCONFIG: { kind: "file" },
  PIP_CONFIG_FILE: { kind: "file" },
  NETRC: { kind: "file" },
  RCLONE_CONFIG: { kind: "file" },
  TF_CLI_CONFIG_FILE: { kind: "file" },
  GOOGLE_APPLICATION_CREDENTIALS: { kind: "file" },
};

/** Directories never hidden for a variable, nor anything in them. */
const SYSTEM_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/proc", "/sys", "/dev"];

/** The paths the variables of `env` name (lexical; whether or not they exist). */
export function relocatedStorePaths(env: Record<string, string | undefined>): string[] {
  const out = new Set<string>();
  const usable = (v: string) => {
    if (!isAbsolute(v) || v.includes("\0")) return undefined;
    const p = normalize(v).replace(/(.)\/+$/, "$1");
    return p === "/" || SYSTEM_DIRS.some((s) => inside(p, s) || inside(s, p)) ? undefined : p;
  };
  for (const [name, store] of Object.entries(CREDENTIAL_VARS)) {
    const v = env[name];
    if (!v) continue;
    const values = store.kind === "files" ? v.split(":") : [v];
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
