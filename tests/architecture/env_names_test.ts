// Every environment variable lib/ reads by name is one penguin's permission set lets it read. Under
// that set (deno.json `permissions.penguin`: the binary, `deno task penguin`) a name outside the
// list reads as unset, silently, while the tests' -A show it: with `GIT_DISCOVERY_ACROSS_FILESYSTEM`
// unreadable the enclosing repository of a workspace on its own file system went unguarded, and
// with `XDG_RUNTIME_DIR` unreadable podman's logins there were shown to commands (attack round 24
// perms B1, B2).
import assert from "node:assert/strict";
import { libFiles } from "./_lint.ts";
import { REPO } from "../support/cli.ts";

const NAME = "[A-Z][A-Z0-9_]*";
/** Where lib/ names a variable it reads: a call or a member of something named for the env. */
const READS = [
  new RegExp(`\\b\\w*[eE]nv\\w*(?:\\.get)?\\(\\s*"(${NAME})"`, "g"), // env("X"), Deno.env.get("X")
  new RegExp(`\\b\\w*[eE]nv\\w*(?:\\?\\.)?\\[\\s*"(${NAME})"\\s*\\]`, "g"), // env["X"]
  new RegExp(`\\b\\w*[eE]nv\\w*(?:\\?\\.|\\.)(${NAME}_${NAME})\\b`, "g"), // env.X_Y
  new RegExp(`\\b\\w+_VAR\\s*=\\s*"(${NAME})"`, "g"), // const SCAN_LIMIT_VAR = "X"
];
/** Lists of names read one by one (`for (const name of STTY_ENV) Deno.env.get(name)`). */
const LISTS = /\bconst \w+_ENV\s*=\s*\[([^\]]*)\]/g;

/** The names `src` reads. */
export function namesRead(src: string): Set<string> {
  const names = new Set<string>();
  for (const re of READS) for (const m of src.matchAll(re)) names.add(m[1]!);
  for (const m of src.matchAll(LISTS)) {
    for (const s of m[1]!.matchAll(new RegExp(`"(${NAME})"`, "g"))) names.add(s[1]!);
  }
  return names;
}

const config = JSON.parse(Deno.readTextFileSync(`${REPO}deno.json`));
const allow: string[] = config.permissions.penguin.env.allow;
const allowed = (n: string) =>
  allow.some((p) => p.endsWith("*") ? n.startsWith(p.slice(0, -1)) : p === n);

Deno.test("every variable lib/ reads by name is in the permission set's env list", () => {
  const refused: string[] = [];
  for (const file of libFiles()) {
    for (const name of namesRead(Deno.readTextFileSync(file))) {
      if (!allowed(name)) refused.push(`${file.slice(REPO.length)}: ${name}`);
    }
  }
  assert.deepEqual(refused, []);
});

Deno.test("the env-name rule finds calls, members, _VAR constants and _ENV lists", () => {
  const src = [
    'const a = ownEnv("GIT_DISCOVERY_ACROSS_FILESYSTEM");',
    'const b = Deno.env.get("PENGUIN_X");',
    'const c = hostEnv?.["XDG_RUNTIME_DIR"];',
    "const d = env.GIT_CEILING_DIRECTORIES;",
    'export const SCAN_LIMIT_VAR = "PENGUIN_GIT_SCAN_LIMIT";',
    'const STTY_ENV = ["PATH", "LC_ALL"];',
    'const e = constants.O_RDONLY; const f = other("NOT_READ");',
  ].join("\n");
  assert.deepEqual([...namesRead(src)].sort(), [
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "LC_ALL",
    "PATH",
    "PENGUIN_GIT_SCAN_LIMIT",
    "PENGUIN_X",
    "XDG_RUNTIME_DIR",
  ]);
  assert.ok(!allowed("MISTRAL_API_KEY"), "a list entry matches by prefix only");
});
