/**
 * The closed grammars of the shell snapshot's word variables other than
 * compiler flags: a program with a few flags (`CC`, `CXX`, `EDITOR`,
 * `VISUAL`, `PAGER`), a locale (`LANG`, `LANGUAGE`, `LC_*`), a time zone
 * (`TZ`), a terminal (`TERM`), the host's own user name (`USER`,
 * `LOGNAME`), conda's level, environment and prompt, and the desktop of
 * `XDG_CURRENT_DESKTOP`. Each passes only words of a fixed list or names
 * the host verifies (a program on its `PATH`, a zoneinfo or terminfo file),
 * so no word carries letters of its own choosing. See docs/security.md
 * ("The command environment carries only configuration").
 *
 * @module
 */

import { isCompilerFlags } from "./login_env_flags.ts";
import { existsOnHost, isPlainPath, type KnownPaths, programOnHost } from "./login_env_paths.ts";
import { LANGUAGES, TERRITORIES } from "./login_env_locale_codes.ts";

/** Programs that run the compiler named after them: `ccache gcc`. */
const COMPILER_WRAPPERS: ReadonlySet<string> = new Set(["ccache", "sccache", "distcc", "icecc"]);

/** Long flags of editors and pagers. */
const LONG_FLAGS: ReadonlySet<string> = new Set([
  "--wait",
  "--new-window",
  "--reuse-window",
  "--nofork",
  "--no-fork",
  "--remote-wait",
  "--remote-tab-wait",
  "--alternate-editor=",
  "--create-frame",
  "--no-wait",
  "--quit-if-one-screen",
  "--RAW-CONTROL-CHARS",
  "--no-init",
  "--chop-long-lines",
  "-nw",
  "-wait",
]);

/** Short flag clusters allowed after the program, and their letters in all. */
const MAX_CLUSTERS = 2;
const MAX_CLUSTER_LETTERS = 6;

/** True for a program on the host's `PATH` or an existing absolute plain path. */
function hostProgram(word: string, known: KnownPaths): boolean {
  if (word.startsWith("/")) return isPlainPath(word, known) && existsOnHost(word, false, known);
  return programOnHost(word, known);
}

/**
 * True for a command value: a program on the host's `PATH` or an existing
 * absolute plain path (for `CC`/`CXX` possibly after `ccache` and the
 * like), then at most two short flag clusters `-[A-Za-z]{1,4}` (six
 * distinct letters at most in all) and long flags of a fixed list; for
 * `CC`/`CXX` also words of the compiler flag vocabulary (`gcc -m32`).
 */
export function isCommandValue(value: string, compiler: boolean, known: KnownPaths): boolean {
  const words = value.split(/[ \t]+/).filter((w) => w !== "");
  let i = 0;
  if (compiler && COMPILER_WRAPPERS.has(words[0] ?? "") && words.length > 1) i++;
  if (words[i] === undefined || !hostProgram(words[i]!, known)) return false;
  const letters = new Set<string>();
  let clusters = 0;
  for (const w of words.slice(i + 1)) {
    if (LONG_FLAGS.has(w)) continue;
    if (compiler && isCompilerFlags(w, known)) continue;
    if (!/^-[A-Za-z]{1,4}$/.test(w)) return false;
    const ls = w.slice(1).split("");
    if (new Set(ls).size !== ls.length || ls.some((l) => letters.has(l))) return false;
    ls.forEach((l) => letters.add(l));
    clusters++;
  }
  return clusters <= MAX_CLUSTERS && letters.size <= MAX_CLUSTER_LETTERS;
}

/** Codesets of a locale (compared case-insensitively). */
const CODESETS: ReadonlySet<string> = new Set([
  ..."utf-8 utf8 gb18030 gbk gb2312 big5 big5-hkscs euc-jp eucjp euc-kr euckr euc-tw euctw"
    .split(" "),
  ..."koi8-r koi8-u koi8-t cp1251 cp1255 sjis shift_jis tis-620 tis620 armscii-8 georgian-ps"
    .split(" "),
  ..."tcvn5712-1 us-ascii ansi_x3.4-1968 pt154 rk1048".split(" "),
  ...Array.from(
    { length: 16 },
    (_, n) => [`iso-8859-${n + 1}`, `iso8859-${n + 1}`, `iso8859${n + 1}`],
  )
    .flat(),
]);

/** Modifiers of a locale (after `@`). */
const MODIFIERS: ReadonlySet<string> = new Set(
  "euro latin cyrillic devanagari iqtelif abegede saaho valencia quot hebrew shaw latin9 arabic"
    .split(" "),
);

/**
 * One locale: `C`, `POSIX`, `C.UTF-8`, or `ll[_CC][.codeset][@modifier]`
 * of listed parts (the language and territory from
 * {@linkcode LANGUAGES} and {@linkcode TERRITORIES}).
 */
export function isLocale(value: string): boolean {
  if (value === "C" || value === "POSIX") return true;
  const m =
    /^(?:C|([a-z]{2,3})(?:_([A-Z]{2}))?)(?:\.([A-Za-z0-9_.-]{1,16}))?(?:@([a-z0-9]{1,12}))?$/
      .exec(value);
  if (!m) return false;
  const [, language, territory, codeset, modifier] = m;
  if (language === undefined && (codeset === undefined || modifier !== undefined)) return false;
  if (language !== undefined && !LANGUAGES.has(language)) return false;
  if (territory !== undefined && !TERRITORIES.has(territory)) return false;
  if (codeset !== undefined && !CODESETS.has(codeset.toLowerCase())) return false;
  return modifier === undefined || MODIFIERS.has(modifier);
}

/** Entries of a `LANGUAGE` list at most: each adds a choice of listed words. */
const MAX_LANGUAGE_ENTRIES = 4;

/** A `LANGUAGE` value: a `:` list of at most four locales. */
function isLanguageList(value: string): boolean {
  const entries = value.split(":");
  return entries.length <= MAX_LANGUAGE_ENTRIES && entries.every(isLocale);
}

/** Directory of the host's time zone files. */
const ZONEINFO = "/usr/share/zoneinfo";

/**
 * True for a time zone: `UTC`, `GMT` or `Z` with an optional offset
 * (`UTC+2`, `GMT-05:30`), or a name (after an optional `:`) whose file
 * exists under `/usr/share/zoneinfo` (`Europe/Berlin`, `EST5EDT`).
 */
export function isTimeZone(value: string, known: KnownPaths): boolean {
  if (/^(?:UTC|GMT|Z|UTC0|GMT0)(?:[+-]\d{1,2}(?::\d{2})?)?$/.test(value)) return true;
  const name = value.replace(/^:/, "");
  if (!/^[A-Za-z0-9_+-]{1,32}(?:\/[A-Za-z0-9_+-]{1,32}){0,2}$/.test(name)) return false;
  return existsOnHost(`${ZONEINFO}/${name}`, false, known) &&
    !existsOnHost(`${ZONEINFO}/${name}`, true, known);
}

/** Terminals that pass whether or not the host has their terminfo entry. */
const TERMS: ReadonlySet<string> = new Set(
  ("xterm xterm-256color xterm-color screen screen-256color tmux tmux-256color vt100 vt220 " +
    "linux dumb ansi rxvt rxvt-unicode rxvt-unicode-256color alacritty xterm-kitty foot " +
    "wezterm xterm-ghostty st-256color cygwin putty putty-256color konsole konsole-256color " +
    "gnome gnome-256color iterm2 contour")
    .split(" "),
);

/** Directories of terminfo entries. */
const TERMINFO_DIRS = ["/usr/share/terminfo", "/lib/terminfo", "/etc/terminfo"];

/** True for a terminal of {@linkcode TERMS} or one whose terminfo entry exists on the host. */
export function isTerminal(value: string, known: KnownPaths): boolean {
  if (TERMS.has(value)) return true;
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]{0,31}$/.test(value)) return false;
  const first = value[0]!;
  const hex = first.charCodeAt(0).toString(16);
  return TERMINFO_DIRS.some((d) =>
    existsOnHost(`${d}/${first}/${value}`, false, known) ||
    existsOnHost(`${d}/${hex}/${value}`, false, known)
  );
}

/** Desktops of `XDG_CURRENT_DESKTOP` (a `:` list of them). */
const DESKTOPS: ReadonlySet<string> = new Set(
  ("GNOME GNOME-Classic GNOME-Flashback KDE XFCE LXDE LXQt MATE Cinnamon X-Cinnamon Unity " +
    "ubuntu Budgie Pantheon Deepin sway Hyprland i3 COSMIC Enlightenment")
    .split(" "),
);

/**
 * The value of word variable `name` when its grammar passes it, else
 * `undefined`; `undefined` too for a name without one (then nothing of the
 * variable passes). An empty value carries nothing and passes.
 */
export function closedWordValue(
  name: string,
  value: string,
  known: KnownPaths,
): string | undefined {
  if (value === "") return value;
  const ok = wordGrammar(name)?.(value, known) ?? false;
  return ok ? value : undefined;
}

type Grammar = (value: string, known: KnownPaths) => boolean;

/** The grammar of word variable `name`, if it has one. */
function wordGrammar(name: string): Grammar | undefined {
  switch (name) {
    case "CC":
    case "CXX":
      return (v, k) => isCommandValue(v, true, k);
    case "EDITOR":
    case "VISUAL":
    case "PAGER":
      return (v, k) => isCommandValue(v, false, k);
    case "CFLAGS":
    case "CXXFLAGS":
    case "CPPFLAGS":
    case "LDFLAGS":
      return isCompilerFlags;
    case "LANG":
      return isLocale;
    case "LANGUAGE":
      return isLanguageList;
    case "TZ":
      return isTimeZone;
    case "TERM":
      return isTerminal;
    case "USER":
    case "LOGNAME":
      return (v, k) => (k.users ?? []).includes(v);
    case "CONDA_SHLVL":
      return (v) => /^\d{1,2}$/.test(v);
    case "CONDA_DEFAULT_ENV":
      return (v, k) => condaEnvs(k).includes(v);
    case "CONDA_PROMPT_MODIFIER":
      return (v, k) => condaEnvs(k).some((e) => v === `(${e}) `);
    case "XDG_CURRENT_DESKTOP":
      return (v) => v.split(":").every((d) => DESKTOPS.has(d));
  }
  return name.startsWith("LC_") ? isLocale : undefined;
}

/** The conda environments a value may name: `base` and those of {@linkcode KnownPaths.condaEnvs}. */
function condaEnvs(known: KnownPaths): string[] {
  return ["base", ...(known.condaEnvs ?? [])];
}
