import assert from "node:assert/strict";
import {
  SANDBOX_EXEC,
  type SandboxPlan,
  seatbeltArgv,
  seatbeltProfile,
} from "../../lib/sandbox/mod.ts";

function plan(over: Partial<SandboxPlan> = {}): SandboxPlan {
  return {
    writableRoots: true,
    roots: ["/Users/u/proj"],
    protect: ["/Users/u/proj/.git/hooks"],
    protectMissing: [],
    hideDirs: ["/Users/u/.ssh"],
    hideFiles: ["/Users/u/.netrc"],
    network: false,
    cwd: "/Users/u/proj",
    env: {},
    ...over,
  };
}

Deno.test("the Seatbelt profile denies by default and names paths only as parameters", () => {
  const { profile, params } = seatbeltProfile(plan());
  assert.match(profile, /^\(version 1\)\n\(deny default\)\n/);
  assert.ok(!profile.includes("/Users/u"), "no literal user path in the profile");
  assert.deepEqual(params, {
    ROOT_0: "/Users/u/proj",
    HIDE_0: "/Users/u/.ssh",
    HIDE_1: "/Users/u/.netrc",
    PROTECT_0: "/Users/u/proj/.git/hooks",
    TMP_0: "/private/tmp",
  });
});

Deno.test("the Seatbelt profile reads everything but the hidden paths, and always the roots", () => {
  const { profile } = seatbeltProfile(plan());
  assert.match(profile, /\(allow file-read\*\n {2}\(require-all \(subpath "\/"\)/);
  assert.match(profile, /\(require-not \(subpath \(param "HIDE_0"\)\)\)/);
  assert.match(profile, /\(require-not \(literal \(param "HIDE_1"\)\)\)/);
  assert.match(profile, /\(allow file-read\* \(subpath \(param "ROOT_0"\)\)\)/);
});

Deno.test("the Seatbelt profile writes only the roots and tmp, never the protected paths", () => {
  const { profile } = seatbeltProfile(plan());
  assert.match(
    profile,
    /\(allow file-write\*\n {2}\(require-all \(require-any \(subpath \(param "ROOT_0"\)\) \(subpath \(param "TMP_0"\)\)\)/,
  );
  assert.match(profile, /\(require-not \(literal \(param "PROTECT_0"\)\)\)/);
  assert.match(profile, /\(require-not \(subpath \(param "PROTECT_0"\)\)\)/);
  const ro = seatbeltProfile(plan({ writableRoots: false, protect: [] })).profile;
  assert.match(ro, /\(allow file-write\* \(subpath \(param "TMP_0"\)\)\)/);
  assert.doesNotMatch(ro, /file-write\*[^\n]*ROOT_0/);
});

Deno.test("the Seatbelt profile allows the network only when the plan does", () => {
  assert.doesNotMatch(seatbeltProfile(plan({ network: false })).profile, /network-outbound/);
  assert.match(seatbeltProfile(plan({ network: true })).profile, /\(allow network-outbound\)/);
});

Deno.test("seatbeltArgv runs sandbox-exec by absolute path with -D parameters before --", () => {
  const argv = seatbeltArgv(plan({ hideDirs: [], hideFiles: [], protect: [] }), [
    "/bin/bash",
    "-c",
    "ls",
  ]);
  assert.equal(argv[0], SANDBOX_EXEC);
  assert.equal(SANDBOX_EXEC, "/usr/bin/sandbox-exec");
  assert.equal(argv[1], "-p");
  assert.deepEqual(argv.slice(3), [
    "-DROOT_0=/Users/u/proj",
    "-DTMP_0=/private/tmp",
    "--",
    "/bin/bash",
    "-c",
    "ls",
  ]);
});
