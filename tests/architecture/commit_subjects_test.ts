// Commit subjects read `area: what changed` in at most 72 characters (docs/development.md).
import assert from "node:assert/strict";

/** The first commit written under the rule; earlier history is left as it is. */
const SINCE = "9a0417ac1c86bb4a2ec14ecde2652d64cb95d4f6";
const SUBJECT = /^[a-z0-9][a-z0-9_./-]*: \S/;
const REPO = new URL("../../", import.meta.url).pathname;

function git(args: string[]): { ok: boolean; out: string } {
  try {
    const r = new Deno.Command("git", { args, cwd: REPO, stdout: "piped", stderr: "null" })
      .outputSync();
    return { ok: r.success, out: new TextDecoder().decode(r.stdout) };
  } catch {
    return { ok: false, out: "" };
  }
}

Deno.test("every commit subject since the rule reads `area: what changed` in at most 72 characters", () => {
  // A source tarball or a shallow clone without the rule's first commit has nothing to check.
  if (!git(["cat-file", "-e", `${SINCE}^{commit}`]).ok) return;
  const log = git(["log", "--no-merges", "--format=%h %s", `${SINCE}..HEAD`]);
  assert.ok(log.ok, "git log failed");
  const bad = log.out.split("\n").filter((line) => line !== "").filter((line) => {
    const subject = line.slice(line.indexOf(" ") + 1);
    return subject.length > 72 || !SUBJECT.test(subject);
  });
  assert.deepEqual(bad, [], `subjects that break the rule:\n${bad.join("\n")}`);
});
