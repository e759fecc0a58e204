// The CLI's last resort for file-system failures a command let through: the OS error Deno raises
// becomes one line naming the operation, the path and the reason (exit 1, no "internal error").
import assert from "node:assert/strict";
import { osFailure } from "../../lib/cli/_os_error.ts";
import { reportError } from "../../lib/cli/mod.ts";
import type { Io } from "../../lib/cli/command.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";

Deno.test("permission denied, read-only, full and quota errors become user errors naming the path", () => {
  const cases: Array<[Error, string]> = [
    [
      new Deno.errors.PermissionDenied("Permission denied (os error 13): open '/srv/p/x.toml'"),
      'Cannot open "/srv/p/x.toml": permission denied',
    ],
    [
      new Error("Read-only file system (os error 30): mkdir '/ro/a'"),
      'Cannot create the directory "/ro/a": the file system is read-only',
    ],
    [
      new Error("No space left on device (os error 28): write '/full/t'"),
      'Cannot write "/full/t": no space left on the device',
    ],
    [
      new Error("Disk quota exceeded (os error 122)"),
      "Disk quota exceeded (os error 122)",
    ],
  ];
  for (const [err, message] of cases) {
    const e = osFailure(err);
    assert.equal(e?.message, message);
    assert.equal(e?.exitCode, 1);
  }
  assert.equal(
    osFailure(new Error("Not a directory (os error 20)")),
    undefined,
    "others stay internal",
  );
  assert.equal(osFailure("text"), undefined);
});

Deno.test("reportError prints such a failure as one line without the internal-error hint", () => {
  const own = reportError(
    new PenguinError(
      "runtime",
      'Cannot append to trace "/t": No space left on device (os error 28)',
    ),
    {
      out: () => {},
      err: (t) => assert.match(t, /^penguin: Cannot append to trace/),
      isTty: false,
      color: false,
    },
  );
  assert.equal(own, 1, "penguin's own errors keep their words");
  let err = "";
  const io: Io = { out: () => {}, err: (t) => err += t, isTty: false, color: false };
  const code = reportError(
    new Deno.errors.PermissionDenied("Permission denied (os error 13): remove '/a/b'"),
    io,
  );
  assert.equal(code, 1);
  assert.equal(err, 'penguin: Cannot remove "/a/b": permission denied\n');
});
