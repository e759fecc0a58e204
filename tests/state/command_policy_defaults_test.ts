import assert from "node:assert/strict";
import {
  FACTORY_COMMAND_POLICY_RULES,
  factoryCommandPolicyRules,
} from "../../lib/state/command_policy_defaults.ts";

/** The text variants the policy checks: collapsed literal, then unescaped and unquoted. */
function variants(cmd: string): string[] {
  const literal = cmd.replace(/\s+/g, " ").trim();
  const loose = literal.replace(/\\(.)/g, "$1").replace(/['"]/g, "");
  return loose === literal ? [literal] : [literal, loose];
}

/** Names of the rules that veto `cmd` (first hit is what the tools layer uses). */
function hits(cmd: string): string[] {
  const out: string[] = [];
  for (const r of FACTORY_COMMAND_POLICY_RULES) {
    const re = new RegExp(r.pattern);
    if (variants(cmd).some((v) => re.test(v))) out.push(r.name);
  }
  return out;
}

Deno.test("factory rules: names are exact and every pattern compiles", () => {
  assert.deepEqual(FACTORY_COMMAND_POLICY_RULES.map((r) => r.name), [
    "rm-recursive-force",
    "mkfs",
    "dd-to-block-device",
    "fork-bomb",
    "overwrite-block-device",
    "windows-recursive-delete",
    "windows-format-volume",
    "windows-disk-overwrite",
    "windows-fork-bomb",
  ]);
  for (const r of FACTORY_COMMAND_POLICY_RULES) {
    assert.doesNotThrow(() => new RegExp(r.pattern), r.name);
  }
  const copy = factoryCommandPolicyRules();
  copy[0]!.name = "changed";
  assert.equal(FACTORY_COMMAND_POLICY_RULES[0]!.name, "rm-recursive-force");
});

Deno.test("factory rules veto the destructive commands the conformance list names", () => {
  const cases: Array<[string, string]> = [
    ["rm -rf /", "rm-recursive-force"],
    ["sudo /bin/rm -fr x", "rm-recursive-force"],
    ['"rm" -rf x', "rm-recursive-force"],
    ["sh -c 'rm -rf /'", "rm-recursive-force"],
    ["rm -r -f build", "rm-recursive-force"],
    ["rm --recursive --force build", "rm-recursive-force"],
    ["cd /tmp && rm -Rf *", "rm-recursive-force"],
    ["env FOO=1 rm -rf ~", "rm-recursive-force"],
    ["mkfs.ext4 /dev/sdb1", "mkfs"],
    ["sudo mkfs -t xfs /dev/nvme0n1", "mkfs"],
    ["dd if=/dev/zero of=/dev/sda bs=1M", "dd-to-block-device"],
    ["dd if=img of=/dev/nvme0n1", "dd-to-block-device"],
    [":(){ :|:& };:", "fork-bomb"],
    ["bomb() { bomb | bomb & }; bomb", "fork-bomb"],
    ["cat image.iso > /dev/sdb", "overwrite-block-device"],
    ["echo x | sudo tee /dev/mmcblk0", "overwrite-block-device"],
    ["shred -n 1 /dev/sda", "overwrite-block-device"],
    ["rd /s /q C:\\", "windows-recursive-delete"],
    ["cmd /c RMDIR /S build", "windows-recursive-delete"],
    ["del /s /q *.*", "windows-recursive-delete"],
    ["Remove-Item -Recurse -Force C:\\Users", "windows-recursive-delete"],
    ["format C: /q", "windows-format-volume"],
    ["Format-Volume -DriveLetter D", "windows-format-volume"],
    ["Clear-Disk -Number 1 -RemoveData", "windows-disk-overwrite"],
    ["copy x \\\\.\\PhysicalDrive0", "windows-disk-overwrite"],
    ["%0|%0", "windows-fork-bomb"],
  ];
  for (const [cmd, rule] of cases) {
    assert.ok(hits(cmd).includes(rule), `${cmd} should hit ${rule}, got ${hits(cmd)}`);
  }
});

Deno.test("factory rules leave ordinary commands alone", () => {
  const fine = [
    "rm -r build",
    "rm -f file.txt",
    "rm -i -v notes",
    "ls -rf",
    "rm x; ls -f",
    "grep -rf patterns.txt src",
    "dd if=/dev/zero of=disk.img bs=1M count=10",
    "dd if=/dev/sda of=backup.img",
    "echo hi > /dev/null",
    "cat /dev/sda | head -c 10",
    "clang-format -i main.c",
    "npx prettier --format c:",
    "rmdir empty_dir",
    "ls /srv",
    "echo 100% done",
    "git commit -m 'format code'",
  ];
  for (const cmd of fine) assert.deepEqual(hits(cmd), [], cmd);
});

Deno.test("factory rules match text, not shell semantics: a quoted mention of rm -rf is vetoed too", () => {
  assert.deepEqual(hits("echo 'never run rm -rf /'"), ["rm-recursive-force"]);
});
