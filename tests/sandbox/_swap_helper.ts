// Stands in for a session whose workspace encloses another's: in directory
// `$1` it exchanges the names `$2` and `$3` (renameat2 RENAME_EXCHANGE) over
// and over, until the file `$4` exists or `$5` rounds are done, then leaves
// both names where they started and prints the number of exchanges.
const [dir, a, b, stop, max] = Deno.args as [string, string, string, string, string];
const libc = Deno.dlopen("libc.so.6", {
  renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
});
const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;
const cstr = (s: string) => new TextEncoder().encode(s + "\0");
const pa = cstr(a);
const pb = cstr(b);
Deno.chdir(dir);
const swap = () => {
  if (libc.symbols.renameat2(AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) !== 0) {
    throw new Error("renameat2 failed");
  }
};
let n = 0;
const exists = (p: string) => {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
console.log("swapping");
while (n < Number(max) && (n % 64 !== 0 || !exists(stop))) {
  swap();
  n++;
}
if (n % 2 === 1) {
  swap();
  n++;
}
console.log(String(n));
