// Finding the `subagent` events of a trace file without parsing every line:
// the file is searched chunk by chunk for the event's type marker (which,
// with its unescaped quotes, cannot occur inside a JSON string), and only a
// short line holding a hit is parsed and checked.
const MARK = new TextEncoder().encode('"type":"subagent"');
const CHUNK = 1 << 20;
const SHORT = 1024; // a subagent event line is far shorter than this
const NL = 0x0a;
const dec = new TextDecoder();

function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  const first = needle[0]!;
  for (
    let i = hay.indexOf(first, from);
    i !== -1 && i + needle.length <= to;
    i = hay.indexOf(first, i + 1)
  ) {
    let ok = true;
    for (let j = 1; j < needle.length; j++) {
      if (hay[i + j] !== needle[j]) {
        ok = false;
        break;
      }
    }
    if (ok) return i;
  }
  return -1;
}

function childOfLine(bytes: Uint8Array): string | null {
  if (bytes.length > SHORT) return null;
  try {
    const v = JSON.parse(dec.decode(bytes)) as {
      type?: unknown;
      origin?: unknown;
      payload?: { type?: unknown; session_id?: unknown };
    };
    if (v.type !== "event_msg" || v.origin !== undefined) return null;
    if (v.payload?.type !== "subagent") return null;
    const id = v.payload.session_id;
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    return null;
  }
}

/** The child session ids named by `subagent` events in the trace at `path`, in order, without duplicates. */
export async function subagentChildren(path: string): Promise<string[]> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return [];
  }
  const found: string[] = [];
  const take = (line: Uint8Array) => {
    const id = childOfLine(line);
    if (id !== null && !found.includes(id)) found.push(id);
  };
  try {
    const buf = new Uint8Array(CHUNK);
    let carry: Uint8Array | null = new Uint8Array(0); // a short unfinished line; null while skipping a long one
    while (true) {
      const n = await file.read(buf);
      if (n === null) break;
      let data = buf.subarray(0, n);
      let start = 0;
      if (carry === null) {
        const nl = data.indexOf(NL);
        if (nl === -1) continue; // still inside the long line
        start = nl + 1;
      } else if (carry.length > 0) {
        const joined = new Uint8Array(carry.length + n);
        joined.set(carry);
        joined.set(data, carry.length);
        data = joined;
      }
      const lastNl = data.lastIndexOf(NL);
      const end = lastNl + 1; // complete lines are data[start, end)
      for (
        let i = indexOfBytes(data, MARK, start, end);
        i !== -1;
        i = indexOfBytes(data, MARK, i + 1, end)
      ) {
        const from = Math.max(start, data.lastIndexOf(NL, i) + 1);
        take(data.subarray(from, data.indexOf(NL, i)));
      }
      const rest = data.subarray(Math.max(start, end));
      carry = rest.length <= SHORT ? rest.slice() : null;
    }
    if (carry !== null && carry.length > 0 && indexOfBytes(carry, MARK, 0, carry.length) !== -1) {
      take(carry);
    }
  } finally {
    file.close();
  }
  return found;
}
