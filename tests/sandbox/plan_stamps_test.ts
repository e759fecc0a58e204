// What a plan keeps between commands on a file's stamp (`lib/sandbox/_file_stamps.ts`): the
// parse of a home's startup files and the lists of data roots. Each input changed between two
// plans is seen by the second. Run in a subprocess with a run directory of its own, so no shared
// list is read or written, and with the stamp clock moved on (`stampClockForTests`) where a file
// just written must count as settled for the cache to be used at all.
import assert from "node:assert/strict";
import { join } from "node:path";
import { visibleTempDir } from "../support/roots.ts";
import { evalInRunDir } from "./_run_dir_eval.ts";

const lib = (p: string) => JSON.stringify(new URL(`../../lib/sandbox/${p}`, import.meta.url).href);

/** Run `body` (`base`, the sandbox module `sb`, `roots` and `stamps` in scope) in a run directory of its own; its JSON output. */
async function inRunDir(base: string, body: string): Promise<unknown> {
  const script = `import * as sb from ${lib("mod.ts")};
import * as roots from ${lib("_data_roots.ts")};
import * as stamps from ${lib("_file_stamps.ts")};
import { keepStandIns } from ${lib("_placeholders.ts")};
const base = ${JSON.stringify(base)};
const keeping = keepStandIns();
${body}
await keeping.end();`;
  return JSON.parse(await evalInRunDir(script, join(base, "run")));
}

/** Code making a hidden home and a workspace under `base`, and `plan()` for them. */
const SESSION = `
const home = base + "/home";
const ws = base + "/ws";
Deno.mkdirSync(home);
Deno.mkdirSync(ws + "/.git", { recursive: true });
Deno.writeTextFileSync(ws + "/penguin.jsonc", "{}");
const policy = sb.createPolicy({ workspace: ws, home, hostEnv: { PATH: "/usr/bin:/bin", HOME: home } });
const plan = () => sb.resolvePlan(policy, ws);
const held = async (p) => (await plan()).protect.includes(p);
`;

Deno.test("a home startup file made or changed between commands is read again", async () => {
  const base = await visibleTempDir("penguin-stamps-startup-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      stamps.stampClockForTests(() => Date.now() + 60_000);
      const hook = ws + "/hook.sh", other = ws + "/other-hook.sh";
      const steps = {};
      steps.before = await held(hook);
      Deno.writeTextFileSync(home + "/.bashrc", ". " + hook + "\\n");
      steps.made = await held(hook);
      steps.again = await held(hook);
      Deno.writeTextFileSync(home + "/.bashrc", "# nothing\\n. " + other + "\\n");
      steps.changed = [await held(hook), await held(other)];
      Deno.renameSync(home + "/.bashrc", home + "/.bashrc.old");
      Deno.writeTextFileSync(home + "/.bashrc.new", ". " + hook + "\\n# and a line\\n");
      Deno.renameSync(home + "/.bashrc.new", home + "/.bashrc");
      steps.replaced = [await held(hook), await held(other)];
      console.log(JSON.stringify(steps));
      `,
    );
    const ws = join(base, "ws");
    assert.deepEqual(got, {
      before: false,
      made: true,
      again: true,
      changed: [false, true],
      replaced: [true, false],
    }, `in ${ws}`);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a startup file rewritten in the second of its stamp, same size and time, is read again", async () => {
  const base = await visibleTempDir("penguin-stamps-tick-");
  try {
    // The real clock: the file was changed just now, so its stamp may not be trusted (a change
    // in the same tick leaves size, times and inode as they were).
    const got = await inRunDir(
      base,
      `${SESSION}
      const [a, b] = [ws + "/hook-a.sh", ws + "/hook-b.sh"];
      const rc = home + "/.bashrc";
      Deno.writeTextFileSync(rc, ". " + a + "\\n");
      const first = await held(a);
      const { mtime, atime } = Deno.statSync(rc);
      Deno.writeTextFileSync(rc, ". " + b + "\\n");
      Deno.utimeSync(rc, atime, mtime);
      console.log(JSON.stringify([first, await held(a), await held(b)]));
      `,
    );
    assert.deepEqual(got, [true, false, true]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a data root another process notes between commands is hidden at the next", async () => {
  const base = await visibleTempDir("penguin-stamps-roots-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      stamps.stampClockForTests(() => Date.now() + 60_000);
      const project = (r) => Deno.mkdirSync(r + "/p/agents", { recursive: true });
      const [a, b, c] = ["a", "b", "c"].map((n) => base + "/" + n);
      for (const r of [a, b, c]) project(r);
      const hidden = async () => (await plan()).hideDirs.filter((d) => [a, b, c].includes(d))
        .map((d) => d.slice(base.length + 1));
      const list = base + "/run/data-roots";
      const steps = {};
      steps.none = await hidden();
      steps.noneAgain = await hidden();
      // The first root noted in this run directory: a list made where there was none.
      Deno.writeTextFileSync(list + ".tmp", a + "\\n");
      Deno.renameSync(list + ".tmp", list);
      steps.first = await hidden();
      steps.again = await hidden();
      // Another penguin notes b: a new list renamed over the old one.
      Deno.writeTextFileSync(list + ".tmp", a + "\\n" + b + "\\n");
      Deno.renameSync(list + ".tmp", list);
      steps.renamed = await hidden();
      // Written in place (the user, an older penguin): the same inode, another size.
      Deno.writeTextFileSync(list, a + "\\n" + b + "\\n" + c + "\\n");
      steps.inPlace = await hidden();
      console.log(JSON.stringify(steps));
      `,
    );
    assert.deepEqual(got, {
      none: [],
      noneAgain: [],
      first: ["a"],
      again: ["a"],
      renamed: ["a", "b"],
      inPlace: ["a", "b", "c"],
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a list of data roots rewritten in the second of its stamp, same size and time, is read again", async () => {
  const base = await visibleTempDir("penguin-stamps-roots-tick-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      const project = (r) => Deno.mkdirSync(r + "/p/agents", { recursive: true });
      const [a, b] = ["a", "b"].map((n) => base + "/" + n);
      for (const r of [a, b]) project(r);
      await roots.rememberDataRoot(a);
      const hidden = async () => (await plan()).hideDirs.filter((d) => [a, b].includes(d))
        .map((d) => d.slice(base.length + 1));
      const list = base + "/run/data-roots";
      const first = await hidden();
      const { mtime, atime } = Deno.statSync(list);
      Deno.writeTextFileSync(list, b + "\\n");
      Deno.utimeSync(list, atime, mtime);
      console.log(JSON.stringify([first, await hidden()]));
      `,
    );
    assert.deepEqual(got, [["a"], ["b"]]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a toolchain directory made in the hidden home between commands is shown at the next", async () => {
  const base = await visibleTempDir("penguin-stamps-toolchain-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      const shown = async () => ((await plan()).reveals ?? []).map((r) => r.target.slice(home.length + 1));
      Deno.mkdirSync(home + "/.rustup");
      const first = await shown();
      Deno.mkdirSync(home + "/.cargo/bin", { recursive: true });
      console.log(JSON.stringify([first, await shown()]));
      `,
    );
    const [first, second] = got as string[][];
    assert.ok(first!.includes(".rustup") && !first!.includes(".cargo/bin"), JSON.stringify(first));
    assert.ok(second!.includes(".cargo/bin"), JSON.stringify(second));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a home startup file linked into the workspace between commands is read-only at the next", async () => {
  const base = await visibleTempDir("penguin-stamps-startup-link-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      stamps.stampClockForTests(() => Date.now() + 60_000);
      const dot = ws + "/dotfiles";
      Deno.mkdirSync(dot);
      Deno.writeTextFileSync(dot + "/zshrc", "# mine\\n");
      const first = await held(dot + "/zshrc");
      Deno.symlinkSync(dot + "/zshrc", home + "/.zshrc");
      console.log(JSON.stringify([first, await held(dot + "/zshrc")]));
      `,
    );
    assert.deepEqual(got, [false, true]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a noted data root made between commands is hidden at the next", async () => {
  const base = await visibleTempDir("penguin-stamps-missing-root-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      stamps.stampClockForTests(() => Date.now() + 60_000);
      const project = (r) => Deno.mkdirSync(r + "/p/agents", { recursive: true });
      const [a, deep] = [base + "/a", base + "/d/e/root"];
      for (const r of [a, deep]) await roots.rememberDataRoot(r);
      const hidden = async () => (await plan()).hideDirs.filter((d) => [a, deep].includes(d))
        .map((d) => d.slice(base.length + 1));
      const steps = [await hidden(), await hidden()];
      project(a);
      steps.push(await hidden());
      Deno.mkdirSync(base + "/d");
      steps.push(await hidden());
      project(deep);
      steps.push(await hidden());
      console.log(JSON.stringify(steps));
      `,
    );
    assert.deepEqual(got, [[], [], ["a"], ["a"], ["a", "d/e/root"]]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a plan resolves each run directory with one look-up", async () => {
  const base = await visibleTempDir("penguin-stamps-run-dirs-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      stamps.stampClockForTests(() => Date.now() + 60_000);
      const run = base + "/run";
      await roots.rememberDataRoot(base + "/a");
      await plan();
      const calls = [];
      const d = Deno;
      const saved = ["statSync", "realPathSync", "stat", "realPath"].map((n) => [n, d[n]]);
      for (const [n, f] of saved) d[n] = (p, ...rest) => (calls.push(n + " " + p), f.call(d, p, ...rest));
      const p = await plan();
      for (const [n, f] of saved) d[n] = f;
      console.log(JSON.stringify({ hidden: (p.privateDirs ?? []).includes(run),
        calls: calls.filter((c) => c.endsWith(" " + run)) }));
      `,
    );
    assert.deepEqual(got, {
      hidden: true,
      calls: [`realPathSync ${join(base, "run")}`],
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a noted root made in a directory listed for many missing ones is hidden at the next command", async () => {
  const base = await visibleTempDir("penguin-stamps-listed-roots-");
  try {
    const got = await inRunDir(
      base,
      `${SESSION}
      const noted = Array.from({ length: 10 }, (_, i) => base + "/r" + i);
      for (const r of noted) await roots.rememberDataRoot(r);
      const hidden = async () => (await plan()).hideDirs.filter((d) => noted.includes(d))
        .map((d) => d.slice(base.length + 1));
      const steps = [await hidden()];
      Deno.mkdirSync(noted[3] + "/p/agents", { recursive: true });
      steps.push(await hidden());
      Deno.mkdirSync(noted[7] + "/p/traces", { recursive: true });
      steps.push(await hidden());
      console.log(JSON.stringify(steps));
      `,
    );
    assert.deepEqual(got, [[], ["r3"], ["r3", "r7"]]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
