/**
 * What to tell a user whose sandbox does not work.
 *
 * @module
 */

/** How to opt out of the OS sandbox. */
export const OPT_OUT = "or opt out with --sandbox off (the command then runs unconfined)";

/** How to install bubblewrap. */
export const INSTALL_HINT =
  "install bubblewrap: Debian/Ubuntu `sudo apt-get install bubblewrap`, Fedora `sudo dnf install bubblewrap`, Arch `sudo pacman -S bubblewrap`; " +
  OPT_OUT;

const KNOWN: [RegExp, string][] = [
  [
    /RTM_NEWADDR|setting up uid map|uid_map|No permissions to creat|Creating new namespace failed|Operation not permitted/i,
    "user namespaces are blocked: on Ubuntu 23.10+ run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` " +
    "(or install an AppArmor profile for bwrap); elsewhere check `kernel.unprivileged_userns_clone=1` and `user.max_user_namespaces>0`",
  ],
  [
    /make \/ slave|Permission denied/i,
    "this looks like a container without mount privileges: run it with user namespaces allowed (e.g. podman/docker `--security-opt seccomp=unconfined --security-opt apparmor=unconfined`)",
  ],
  [
    /pivot_root/i,
    "the root file system is an initramfs (rootfs) where pivot_root is impossible: run penguin from a real root file system",
  ],
  [/Unknown option/i, "this bubblewrap is too old: upgrade bubblewrap (0.8.0 or newer)"],
  [
    /No such file or directory|not found/i,
    "bubblewrap or a path it needs is missing: check the bwrap path and the workspace",
  ],
];

/** Map bubblewrap's error text to a fix, ending with how to opt out. */
export function explainBwrapFailure(text: string): string {
  for (const [re, hint] of KNOWN) if (re.test(text)) return `${hint}; ${OPT_OUT}`;
  return `run "penguin sandbox check" for details; ${OPT_OUT}`;
}
