// Another process on a nested-repository record's lock files (run by repo_trust_gc_test.ts):
// `deno run -A _trust_lock_holder.ts share <path>` share-locks the file as a joined penguin holds
// its `.active`, prints "held" and keeps it until its stdin closes. `... join <path>` takes the
// file exclusively as a joining penguin takes `.lock` (`holdLock`), pausing once between the open
// and the lock: it prints "opened" and waits for a line on stdin; once locked it prints the inode
// it holds and the one the path names (null: none), and keeps it until its stdin closes.
import { holdLock, lockSeam } from "../../lib/sandbox/_held_lock.ts";

const [mode, path] = Deno.args as [string, string];
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
let buffered = "";
/** The next line of stdin (undefined at its end). */
async function nextLine(): Promise<string | undefined> {
  while (!buffered.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) return undefined;
    buffered += value;
  }
  const at = buffered.indexOf("\n");
  const line = buffered.slice(0, at);
  buffered = buffered.slice(at + 1);
  return line;
}

if (mode === "share") {
  const file = await Deno.open(path, { read: true });
  await file.lock(false);
  console.log("held");
  while (await nextLine() !== undefined) { /* until stdin closes */ }
  file.close();
} else {
  let paused = false;
  lockSeam.afterOpen = async () => {
    if (paused) return;
    paused = true;
    console.log("opened");
    await nextLine();
  };
  const file = await holdLock(path, { create: true, exclusive: true, wait: true });
  if (typeof file === "string") throw new Error(`holdLock: ${file}`);
  const held = (await file.stat()).ino;
  const now = await Deno.lstat(path).then((i) => i.ino, () => null);
  console.log(JSON.stringify({ held, path: now }));
  while (await nextLine() !== undefined) { /* until stdin closes */ }
  file.close();
}
