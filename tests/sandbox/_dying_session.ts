// A penguin session that dies without its last walk (as on SIGKILL), in a process of its own
// (run by git_nested_subroot_test.ts with PENGUIN_RUN_DIR set): `deno run -A _dying_session.ts
// <workspace> [<armed repo, relative> [gitdir]]` plans a sandbox for the workspace (the session
// joins it, and its record of the user's repos is written), makes the armed repo as a command
// would (with `gitdir`: a git directory that is its own work tree, `core.worktree=.`), and exits
// without ending the session, so the record stays.
import { join } from "node:path";
import { createPolicy, resolvePlan } from "../../lib/sandbox/mod.ts";
import "../../lib/sandbox/spawn.ts";
import { keepStandIns } from "../../lib/sandbox/_placeholders.ts";
import { hostGit } from "../support/host_git.ts";

const [ws, armed, shape] = Deno.args as [string, string | undefined, string | undefined];
keepStandIns();
const policy = createPolicy({ workspace: ws, mode: "workspace-write", home: "", hostEnv: {} });
const plan = await resolvePlan(policy, ws);
if (armed !== undefined) {
  const dir = join(ws, armed);
  await Deno.mkdir(dir, { recursive: true });
  if (shape === "gitdir") {
    await hostGit(ws, dir, ["init", "-q", "--bare"]);
    await hostGit(ws, dir, ["config", "core.bare", "false"]);
    await hostGit(ws, dir, ["config", "core.worktree", "."]);
  } else await hostGit(ws, dir, ["init", "-q"]);
  await hostGit(ws, dir, ["config", "core.fsmonitor", "touch /tmp/penguin-subroot-x"]);
}
console.log(JSON.stringify(plan.gitRepos ?? []));
Deno.exit(0);
