// A penguin session's view of the nested-repository walk, in a process of its own (run by
// git_nested_trust_test.ts with PENGUIN_RUN_DIR set, so the workspace record it keeps in the run
// directory is the test's). `deno run -A _trust_session.ts <scenario> <workspace>` prints one
// JSON line: what the scenario saw. The concurrent command of each scenario is played by the
// walk's test seam, so every rename lands at a known point of a walk.
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { disarmNewRepos, walkSeam } from "../../lib/sandbox/git_nested.ts";
import { takeSessionEndReport } from "../../lib/sandbox/session_end_report.ts";
import { hostGit } from "../support/host_git.ts";

const [scenario, ws] = Deno.args as [string, string];
const policy = createPolicy({ workspace: ws, mode: "workspace-write", home: "", hostEnv: {} });
const out: Record<string, unknown> = {};

async function plan(): Promise<string> {
  try {
    return JSON.stringify((await resolvePlan(policy, ws)).gitRepos ?? []);
  } catch (err) {
    return `refused: ${err instanceof Error ? err.message : err}`;
  }
}

/** During the next walk: after the root's listing, `from` goes to `to` (made first). */
function parkDuringWalk(from: string, to: string): void {
  walkSeam.afterLevel = async (dirs) => {
    if (!dirs.includes(ws)) return;
    walkSeam.afterLevel = () => {};
    await Deno.mkdir(join(ws, to, ".."), { recursive: true });
    await Deno.rename(join(ws, from), join(ws, to));
  };
}

/** During every walk until stopped: after each listing of the root, `a` and `b` swap names. */
function toggleDuringWalks(a: string, b: string): void {
  walkSeam.afterLevel = async (dirs) => {
    if (!dirs.includes(ws)) return;
    const there = await Deno.lstat(join(ws, a)).then(() => true, () => false);
    await Deno.rename(join(ws, there ? a : b), join(ws, there ? b : a));
  };
}

/** A repository at `rel` (made like a command's `git init`), armed with an fsmonitor. */
async function makeArmed(rel: string): Promise<void> {
  await Deno.mkdir(join(ws, rel), { recursive: true });
  await hostGit(ws, join(ws, rel), ["init", "-q"]);
  await hostGit(ws, join(ws, rel), ["config", "core.fsmonitor", "touch /tmp/penguin-trust-x"]);
}

/**
 * Where what was parked at `X/.git/<name>` lies now: there, or in the `X/.git` the walk renamed
 * aside for holding a parked repository (lib/sandbox/_git_parked.ts).
 */
async function parkedNow(name: string): Promise<string> {
  const at = join(ws, "X/.git", name);
  if (await Deno.lstat(at).then(() => true, () => false)) return at;
  for await (const e of Deno.readDir(join(ws, "X"))) {
    const aside = join(ws, "X", e.name, name);
    if (e.name.startsWith(".git") && await Deno.lstat(aside).then(() => true, () => false)) {
      return aside;
    }
  }
  return at;
}

const session = keepStandIns();
if (scenario === "hide") {
  // A plans (the repo is not there yet) and makes zzz/R armed; B is planned while R is there;
  // while A's end walk runs, B parks zzz in X/.git, and puts it back before it ends.
  const before = JSON.parse(await plan());
  await makeArmed("zzz/R");
  const bBefore = JSON.parse(await plan());
  parkDuringWalk("zzz", "X/.git/zzz");
  out.aEnd = await disarmNewRepos(ws, before, [ws]);
  await Deno.rename(await parkedNow("zzz"), join(ws, "zzz"));
  out.bEnd = await disarmNewRepos(ws, bBefore, [ws]);
} else if (scenario === "userhide") {
  // The user's vendor/lib exists at the start. H parks vendor in X/.git while W is planned and
  // puts it back; W writes a hook into lib; H parks vendor again over W's end walk.
  out.start = await plan();
  await Deno.mkdir(join(ws, "X/.git"), { recursive: true });
  await Deno.rename(join(ws, "vendor"), join(ws, "X/.git/vendor"));
  const wBefore = JSON.parse(await plan());
  await Deno.rename(await parkedNow("vendor"), join(ws, "vendor"));
  await Deno.writeTextFile(join(ws, "vendor/lib/.git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
  parkDuringWalk("vendor", "X/.git/vendor");
  out.wEnd = await disarmNewRepos(ws, wBefore, [ws]);
  await Deno.rename(await parkedNow("vendor"), join(ws, "vendor"));
  out.next = await plan();
} else if (scenario === "unsettled-end") {
  // The session's only command made zzz/R armed; another command renames zzz and back over
  // every walk, the session's last one included, so none settles.
  const before = JSON.parse(await plan());
  await makeArmed("zzz/R");
  toggleDuringWalks("zzz", "aaa");
  out.end = await disarmNewRepos(ws, before, [ws]);
} else if (scenario === "settled-end") {
  // As unsettled-end, but the other command stops before the session's end.
  const before = JSON.parse(await plan());
  await makeArmed("zzz/R");
  toggleDuringWalks("zzz", "aaa");
  out.end = await disarmNewRepos(ws, before, [ws]);
  walkSeam.afterLevel = () => {};
} else if (scenario === "plan") {
  out.plan = await plan();
}
await session.end();
walkSeam.afterLevel = () => {};
out.report = takeSessionEndReport();
console.log(JSON.stringify(out));
