// The copies of shown home files are the process's own, bounded, and gone after it (attack round 24
// concgit 2: a model rewriting a shown file left a megabyte in /tmp for every command of another
// session, forever).
import assert from "node:assert/strict";
import { join } from "node:path";
import { repoModule } from "../support/permission_probe.ts";
import { visibleTempDir } from "./_helpers.ts";

/** Run `source` in a child (`-A`) whose run directory is `run`; its stdout. */
async function child(dir: string, run: string, source: string): Promise<string> {
  const script = join(dir, `child-${crypto.randomUUID()}.ts`);
  await Deno.writeTextFile(script, source);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", "--no-config", script],
    env: { PENGUIN_RUN_DIR: run },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

/** Every file below `dir`. */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...filesBelow(p));
    else out.push(p);
  }
  return out;
}

Deno.test("a process keeps at most MAX_SHOWN_COPIES copies and none once it has exited", async () => {
  const dir = await visibleTempDir("penguin-shown-copies-");
  try {
    const run = join(dir, "run");
    await Deno.mkdir(run, { mode: 0o700 });
    const file = join(dir, "notes.txt");
    const out = await child(
      dir,
      run,
      `import { MAX_SHOWN_COPIES, shownCopyOf } from ${repoModule("lib/sandbox/_shown_copies.ts")};
const made = new Set<string>();
for (let i = 0; i < MAX_SHOWN_COPIES + 20; i++) {
  Deno.writeTextFileSync(${JSON.stringify(file)}, "content " + i + "\\n");
  const copy = await shownCopyOf(${JSON.stringify(file)});
  if (copy === undefined || Deno.readTextFileSync(copy) !== "content " + i + "\\n") throw new Error("copy " + i);
  made.add(copy);
}
const kept = [...made].filter((p) => { try { return Deno.statSync(p).isFile; } catch { return false; } });
console.log(JSON.stringify({ made: made.size, kept: kept.length, max: MAX_SHOWN_COPIES }));
`,
    );
    const r = JSON.parse(out.trim());
    assert.equal(r.made, r.max + 20);
    assert.equal(r.kept, r.max);
    assert.deepEqual(filesBelow(run).filter((p) => p.includes("/shown/")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the copies of a process that no longer runs are removed by the next one", async () => {
  const dir = await visibleTempDir("penguin-shown-copies-");
  try {
    const run = join(dir, "run");
    // A penguin killed with its copies in place (no such process), and an older version's copy.
    const dead = join(run, "shown", "999999999-1");
    await Deno.mkdir(dead, { recursive: true, mode: 0o700 });
    await Deno.writeTextFile(join(dead, "0123456789abcdef01234567"), "export TOKEN=SECRET\n");
    await Deno.writeTextFile(join(run, "shown-0123456789abcdef01234567"), "export TOKEN=SECRET\n");
    const file = join(dir, "notes.txt");
    await Deno.writeTextFile(file, "notes\n");
    const out = await child(
      dir,
      run,
      `import { shownCopyOf } from ${repoModule("lib/sandbox/_shown_copies.ts")};
const copy = await shownCopyOf(${JSON.stringify(file)});
const left = [...Deno.readDirSync(${JSON.stringify(join(run, "shown"))})].map((e) => e.name);
const top = [...Deno.readDirSync(${
        JSON.stringify(run)
      })].map((e) => e.name).filter((n) => n.startsWith("shown-"));
console.log(JSON.stringify({ copy: copy !== undefined, left, top }));
`,
    );
    const r = JSON.parse(out.trim());
    assert.equal(r.copy, true);
    assert.equal(r.left.length, 1);
    assert.notEqual(r.left[0], "999999999-1");
    assert.deepEqual(r.top, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an isolate ending in the same process leaves another isolate's copies in place", async () => {
  // `deno test --parallel` runs test modules as isolates of one process, which share its pid, and
  // runs each module's `unload` when that module is done: with copies named by the process alone,
  // the first module to end removed every other module's (a login profile's copy gone before the
  // login shell bound it, so the snapshot missed what the profile exports).
  const dir = await visibleTempDir("penguin-shown-copies-");
  try {
    const run = join(dir, "run");
    await Deno.mkdir(run, { mode: 0o700 });
    // Two signals: B has its copy (A ends only then), A has unloaded (B looks only then).
    const [bCopied, aUnloaded] = [join(dir, "b-copied"), join(dir, "a-unloaded")];
    for (const fifo of [bCopied, aUnloaded]) {
      assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
    }
    const module = (name: string, body: string) =>
      Deno.writeTextFile(
        join(dir, `${name}_test.ts`),
        `import { shownCopyOf } from ${repoModule("lib/sandbox/_shown_copies.ts")};
const file = ${JSON.stringify(join(dir, name + ".txt"))};
Deno.writeTextFileSync(file, ${JSON.stringify(name)} + " notes\\n");
${body}`,
      );
    // A's signal is sent from its own unload, after the copies' (listeners run in order).
    await module(
      "a",
      `Deno.test("a", async () => {
  await shownCopyOf(file);
  await Deno.readTextFile(${JSON.stringify(bCopied)});
  globalThis.addEventListener("unload", () => Deno.writeTextFileSync(${
        JSON.stringify(aUnloaded)
      }, "done"));
});`,
    );
    await module(
      "b",
      `Deno.test("b", async () => {
  const copy = await shownCopyOf(file);
  await Deno.writeTextFile(${JSON.stringify(bCopied)}, "done");
  await Deno.readTextFile(${JSON.stringify(aUnloaded)});
  let text = "gone";
  try {
    text = copy === undefined ? "none" : Deno.readTextFileSync(copy);
  } catch { /* removed */ }
  console.log("B-COPY " + JSON.stringify(text));
});`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", "--no-check", "--no-config", "--parallel", "a_test.ts", "b_test.ts"],
      cwd: dir,
      env: { PENGUIN_RUN_DIR: run, DENO_JOBS: "2", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
    assert.match(text, /B-COPY "b notes\\n"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
