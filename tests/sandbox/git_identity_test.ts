import assert from "node:assert/strict";
import { parseGitConfig } from "../../lib/sandbox/git_config_parse.ts";
import { sanitizeGitConfig } from "../../lib/sandbox/git_identity.ts";

Deno.test("the sanitized git configuration keeps identity and behaviour keys only", () => {
  const text = `[user]\n\tname = "Ann \\"A\\" Ex"\n\temail = ann@example.test\n` +
    `[include]\n\tpath = ~/.secret.gitconfig\n[includeIf "gitdir:~/w/"]\n\tpath = w.cfg\n` +
    `[url "https://t0k3n@host/"]\n\tinsteadOf = https://host/\n` +
    `[http]\n\textraHeader = Authorization: Bearer abc\n[credential]\n\thelper = store\n` +
    `[alias]\n\tx = !rm -rf /\n[core]\n\tautocrlf = input\n\tsshCommand = ssh -i key\n` +
    `[user "sub"]\n\temail = sub@x\n[safe]\n\tdirectory = *\n[pull]\n\trebase\n`;
  const out = sanitizeGitConfig([{ text: "[init]\n\tdefaultBranch = trunk\n", file: "xdg" }, {
    text,
    file: "home",
  }]);
  for (const gone of ["t0k3n", "Bearer", "store", "rm -rf", "secret", "sshCommand", "sub@x"]) {
    assert.ok(!out.includes(gone), `${gone} in ${out}`);
  }
  const keys = parseGitConfig(out, "out").entries.map((e) => [e.key, e.value]);
  assert.deepEqual(keys, [
    ["init.defaultbranch", "trunk"],
    ["user.name", 'Ann "A" Ex'],
    ["user.email", "ann@example.test"],
    ["core.autocrlf", "input"],
    ["safe.directory", "*"],
    ["pull.rebase", "true"],
  ]);
});
