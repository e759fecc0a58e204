/**
 * The sandbox probe's answer, remembered between penguin processes, so that
 * a process does not start a probe sandbox (`detect.ts`) when an earlier one
 * of the same user already probed the same machine with the same binaries.
 *
 * The answer is kept under a key of everything that decides it: the boot
 * (`/proc/sys/kernel/random/boot_id`), the kernel release, the user
 * namespace sysctls, the uid, the architecture, Deno's version and
 * penguin's executable, and the identity (device, inode, size, modification
 * and change time, mode) of the bubblewrap, bash and setpriv binaries. A key fact that cannot
 * be read means no cache.
 *
 * A remembered answer cannot drop a protection: only a report that found
 * everything working with the strongest flags is kept (usable, every check
 * ok or warn, `--disable-userns` and `--size` taken, the seccomp filter installed), and
 * the schema refuses any other. A stale one (a sysctl or AppArmor profile
 * changed within the boot) at worst lets a command's sandbox fail to start,
 * with bubblewrap's own error.
 *
 * It is one file, `probe.json`, in penguin's private run directory (0700,
 * the user's, hidden from every sandbox), written to a temporary file and
 * renamed into place, and read only when it is a regular file of this user
 * that nobody else may write, no larger than {@linkcode MAX_BYTES}, and
 * matches the schema (zod, loaded only when a file is read).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { readOpenUpTo } from "../state/_fs.ts";
import { privateRunDir } from "./_standin_registry.ts";
import { runFactScript } from "./_fact_script.ts";

/** The largest cache file read. */
export const MAX_BYTES = 64 * 1024;
/** The file's name in the run directory. */
export const CACHE_FILE = "probe.json";
/** Bumped when what the probe checks, or the report's shape, changes. */
const FORMAT = 2;

/** What the cache holds of a report (bash and bwrap are found again, and are in the key). */
export interface RememberedReport {
  usable: true;
  kind: "bwrap";
  disableUserns: true;
  checks: { name: string; status: "ok" | "warn"; detail: string; fix?: string }[];
  setpriv?: string;
  seccomp: { installed: true; arch: string | null; blocks: string[] };
}

/** The report fields the cache looks at. */
interface Report {
  usable: boolean;
  kind: string;
  disableUserns: boolean;
  sizeTmpfs?: boolean | undefined;
  checks: { name: string; status: string; detail: string; fix?: string | undefined }[];
  setpriv?: string | undefined;
  seccomp?: { installed: boolean; arch: string | null; blocks: string[] } | undefined;
}

const KERNEL = `for f in kernel/random/boot_id kernel/osrelease user/max_user_namespaces \\
  kernel/unprivileged_userns_clone kernel/apparmor_restrict_unprivileged_userns; do
  if [ -r "/proc/sys/$f" ]; then v=; read -r v <"/proc/sys/$f" && printf '%s %s\\n' "$f" "$v"; fi
done
sp=$(command -v setpriv) && printf 'setpriv %s\\n' "$sp"
exit 0
`;

/** The boot id the key uses instead of the kernel's (tests only; undefined: the kernel's). */
let pinnedBootId: string | undefined;

/** Make the key use `id` as the boot id (tests only); undefined restores the kernel's. */
export function _pinBootId(id: string | undefined): void {
  pinnedBootId = id;
}

/** A file's identity: what changes when it is replaced or written. */
async function identity(path: string): Promise<string | undefined> {
  try {
    const s = await Deno.stat(path);
    if (!s.isFile) return undefined;
    return [path, s.dev, s.ino, s.size, s.mtime?.getTime(), s.ctime?.getTime(), s.mode].join(":");
  } catch {
    return undefined;
  }
}

/** The kernel's facts of the key, read by bash (Deno may not read /proc). */
async function kernelFacts(bash: string): Promise<Record<string, string> | undefined> {
  try {
    const ran = await runFactScript(bash, [
      "--noprofile",
      "--norc",
      "-c",
      KERNEL,
      "penguin-probe-key",
    ]);
    if (!ran.success) return undefined;
    const facts: Record<string, string> = Object.fromEntries(ran.facts);
    if (pinnedBootId !== undefined) facts["kernel/random/boot_id"] = pinnedBootId;
    const boot = facts["kernel/random/boot_id"];
    return boot && facts["kernel/osrelease"] ? facts : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The key of a probe of `bwrap` run by `bash`, or undefined when a fact of
 * it cannot be known (then nothing is remembered or recalled).
 */
export async function probeKey(bash: string, bwrap: string): Promise<string | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  try {
    return await keyOf(bash, bwrap);
  } catch {
    return undefined; // a fact penguin may not read (its permissions): no cache, the probe runs
  }
}

async function keyOf(bash: string, bwrap: string): Promise<string | undefined> {
  const [kernel, bwrapId, bashId, selfId] = await Promise.all([
    kernelFacts(bash),
    identity(bwrap),
    identity(bash),
    identity(Deno.execPath()),
  ]);
  if (!kernel || !bwrapId || !bashId || !selfId) return undefined;
  // The setpriv the probe finds (on the same PATH), if any: one installed or replaced re-probes.
  const setpriv = kernel.setpriv === undefined ? null : await identity(kernel.setpriv);
  if (setpriv === undefined) return undefined;
  const uid = Deno.uid();
  if (uid === null) return undefined;
  return JSON.stringify({
    format: FORMAT,
    kernel,
    uid,
    arch: Deno.build.arch,
    deno: Deno.version.deno,
    self: selfId,
    bwrap: bwrapId,
    bash: bashId,
    setpriv,
  });
}

/** Whether `report` may be remembered: everything works, with the strongest flags. */
export function rememberable(report: Report): boolean {
  return report.usable && report.kind === "bwrap" && report.disableUserns &&
    report.sizeTmpfs !== false &&
    report.seccomp?.installed === true && report.checks.every((c) => c.status !== "fail");
}

async function cachePath(): Promise<string> {
  return join(await privateRunDir(), CACHE_FILE);
}

/** Remember `report` under `key` (only a {@linkcode rememberable} one). Never throws. */
export async function remember(key: string, report: Report): Promise<void> {
  if (!rememberable(report)) return;
  let tmp: string | undefined;
  try {
    const path = await cachePath();
    const kept: RememberedReport = {
      usable: true,
      kind: "bwrap",
      disableUserns: true,
      checks: report.checks.map((c) => ({
        name: c.name,
        status: c.status as "ok" | "warn",
        detail: c.detail,
        ...(c.fix !== undefined ? { fix: c.fix } : {}),
      })),
      ...(report.setpriv ? { setpriv: report.setpriv } : {}),
      seccomp: { installed: true, arch: report.seccomp!.arch, blocks: report.seccomp!.blocks },
    };
    const text = JSON.stringify({ key, report: kept });
    if (text.length > MAX_BYTES) return;
    tmp = await Deno.makeTempFile({ dir: dirname(path), prefix: ".probe-" });
    await Deno.chmod(tmp, 0o600);
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, path);
    tmp = undefined;
  } catch {
    // Not remembered: the next process probes again.
  } finally {
    if (tmp !== undefined) await Deno.remove(tmp).catch(() => {});
  }
}

/** Remove the remembered report (a sandbox failed to start under it). Never throws. */
export async function forget(): Promise<void> {
  await Deno.remove(await cachePath().catch(() => "")).catch(() => {});
}

/**
 * The report remembered under `key`, or undefined when there is none, or the
 * file is not this user's regular file, is writable by others, too large,
 * or does not match the schema or the key. Never throws.
 */
export async function recall(key: string): Promise<RememberedReport | undefined> {
  try {
    const path = await cachePath();
    const link = await Deno.lstat(path).catch(() => undefined);
    if (link === undefined || !link.isFile) return undefined;
    using file = await Deno.open(path, { read: true });
    const info = await file.stat();
    if (!info.isFile || info.uid !== Deno.uid() || ((info.mode ?? 0o777) & 0o022) !== 0) {
      return undefined;
    }
    const bytes = await readOpenUpTo(file, MAX_BYTES);
    if (bytes === undefined) return undefined;
    const parsed = (await cacheSchema()).safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (!parsed.success || parsed.data.key !== key) return undefined;
    return parsed.data.report as RememberedReport;
  } catch {
    return undefined;
  }
}

/** The cache file's schema: only a report that drops no protection passes. */
async function cacheSchema() {
  const { z } = await import("zod");
  const check = z.object({
    name: z.string().max(200),
    status: z.enum(["ok", "warn"]),
    detail: z.string().max(4000),
    fix: z.string().max(4000).optional(),
  }).strict();
  return z.object({
    key: z.string().max(8000),
    report: z.object({
      usable: z.literal(true),
      kind: z.literal("bwrap"),
      disableUserns: z.literal(true),
      checks: z.array(check).min(1).max(40),
      setpriv: z.string().startsWith("/").max(4096).optional(),
      seccomp: z.object({
        installed: z.literal(true),
        arch: z.string().max(40).nullable(),
        blocks: z.array(z.string().max(400)).max(40),
      }).strict(),
    }).strict(),
  }).strict();
}
