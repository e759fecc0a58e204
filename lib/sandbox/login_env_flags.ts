/**
 * The closed grammar of the shell snapshot's compiler flags (`CFLAGS`,
 * `CXXFLAGS`, `CPPFLAGS`, `LDFLAGS`): a value passes only when every word of
 * it (split at blanks) is one of a fixed vocabulary of optimisation, debug,
 * warning, code-generation, standard, hardening and linker flags, a search
 * directory option naming an existing plain path, a `-l` library found on the
 * host, or a `-D`/`-U` of a fixed list of feature macros. No word carries
 * letters of its own choosing, so no token fits in one. See docs/security.md
 * ("The command environment carries only configuration").
 *
 * @module
 */

import { existsOnHost, isPlainPath, type KnownPaths } from "./login_env_paths.ts";

/** Words that pass as they are. */
const FIXED_FLAGS: ReadonlySet<string> = new Set([
  // Optimisation and debug information.
  ..."-O -O0 -O1 -O2 -O3 -Os -Oz -Ofast -Og".split(" "),
  ..."-g -g0 -g1 -g2 -g3 -ggdb -ggdb3 -gdwarf-4 -gdwarf-5 -gsplit-dwarf -gline-tables-only"
    .split(" "),
  // Driver and code-generation switches.
  ..."-pipe -pthread -fPIC -fpic -fPIE -fpie -pie -no-pie -shared -static -rdynamic -ansi"
    .split(" "),
  ..."-static-libgcc -static-libstdc++ -stdlib=libc++ -stdlib=libstdc++ --coverage".split(" "),
  ..."-fuse-ld=lld -fuse-ld=gold -fuse-ld=bfd -fuse-ld=mold -pedantic -pedantic-errors -w"
    .split(" "),
  // Warnings.
  ...[
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wpedantic",
    "-Wshadow",
    "-Wconversion",
    "-Wsign-conversion",
    "-Wformat",
    "-Wformat=2",
    "-Wformat-security",
    "-Werror=format-security",
    "-Werror=implicit-function-declaration",
    "-Wimplicit-fallthrough",
    "-Wnull-dereference",
    "-Wdouble-promotion",
    "-Wstrict-prototypes",
    "-Wmissing-prototypes",
    "-Wold-style-definition",
    "-Wundef",
    "-Wcast-align",
    "-Wcast-qual",
    "-Wpointer-arith",
    "-Wvla",
    "-Wdate-time",
    "-Wwrite-strings",
    "-Wredundant-decls",
    "-Wuninitialized",
    "-Wunused",
    "-Wtype-limits",
    "-Wnon-virtual-dtor",
    "-Woverloaded-virtual",
    "-Wno-error",
    "-Wno-unused",
    "-Wno-unused-parameter",
    "-Wno-unused-variable",
    "-Wno-unused-function",
    "-Wno-unused-result",
    "-Wno-unused-but-set-variable",
    "-Wno-deprecated",
    "-Wno-deprecated-declarations",
    "-Wno-sign-compare",
    "-Wno-missing-field-initializers",
    "-Wno-unknown-pragmas",
    "-Wno-long-long",
    "-Wno-psabi",
    "-Wno-implicit-fallthrough",
    "-Wno-format-truncation",
    "-Wno-stringop-overflow",
    "-Wp,-D_FORTIFY_SOURCE=1",
    "-Wp,-D_FORTIFY_SOURCE=2",
    "-Wp,-D_FORTIFY_SOURCE=3",
    "-Wp,-D_GLIBCXX_ASSERTIONS",
  ],
  // Code generation and hardening.
  ...[
    "-fstack-protector",
    "-fstack-protector-strong",
    "-fstack-protector-all",
    "-fno-stack-protector",
    "-fstack-clash-protection",
    "-fcf-protection",
    "-fcf-protection=full",
    "-fcf-protection=none",
    "-fno-omit-frame-pointer",
    "-fomit-frame-pointer",
    "-fno-strict-aliasing",
    "-fstrict-aliasing",
    "-fexceptions",
    "-fno-exceptions",
    "-frtti",
    "-fno-rtti",
    "-fvisibility=hidden",
    "-fvisibility=default",
    "-fvisibility-inlines-hidden",
    "-ffunction-sections",
    "-fdata-sections",
    "-flto",
    "-flto=auto",
    "-flto=thin",
    "-flto=full",
    "-fno-lto",
    "-ffat-lto-objects",
    "-fno-plt",
    "-fno-common",
    "-fcommon",
    "-fdiagnostics-color",
    "-fdiagnostics-color=always",
    "-fdiagnostics-color=never",
    "-fcolor-diagnostics",
    "-fopenmp",
    "-fsanitize=address",
    "-fsanitize=undefined",
    "-fsanitize=address,undefined",
    "-fsanitize=thread",
    "-fsanitize=memory",
    "-fsanitize=leak",
    "-fno-sanitize-recover",
    "-fno-sanitize-recover=all",
    "-fprofile-arcs",
    "-ftest-coverage",
    "-fwrapv",
    "-ftrapv",
    "-fno-builtin",
    "-fno-math-errno",
    "-ffast-math",
    "-funroll-loops",
    "-fno-semantic-interposition",
    "-fasynchronous-unwind-tables",
    "-fno-asynchronous-unwind-tables",
    "-fsigned-char",
    "-funsigned-char",
    "-fpermissive",
    "-fno-delete-null-pointer-checks",
    "-ftrivial-auto-var-init=zero",
    "-ftrivial-auto-var-init=pattern",
    "-fzero-call-used-regs=used-gpr",
    "-fno-inline",
    "-fno-tree-vectorize",
  ],
  // Target switches with nothing to choose.
  ...[
    "-m32",
    "-m64",
    "-mx32",
    "-msse2",
    "-msse3",
    "-mssse3",
    "-msse4.1",
    "-msse4.2",
    "-mavx",
    "-mavx2",
    "-mavx512f",
    "-mfma",
    "-mbmi",
    "-mbmi2",
    "-mpopcnt",
    "-maes",
    "-mpclmul",
    "-mfpmath=sse",
    "-mno-omit-leaf-frame-pointer",
    "-mtls-dialect=gnu2",
    "-mbranch-protection=standard",
    "-mshstk",
    "-mthumb",
    "-marm",
    "-mfloat-abi=hard",
    "-mfloat-abi=softfp",
    "-mfpu=neon",
    "-mfpu=vfpv3-d16",
    "-mcmodel=small",
    "-mcmodel=medium",
    "-mcmodel=large",
  ],
]);

/** CPUs and architectures of `-march=`, `-mtune=` and `-mcpu=`. */
const CPUS: ReadonlySet<string> = new Set([
  ..."native generic intel x86-64 x86-64-v2 x86-64-v3 x86-64-v4 i386 i486 i586 i686".split(" "),
  ..."pentium4 core2 nehalem westmere sandybridge ivybridge haswell broadwell skylake".split(" "),
  ..."skylake-avx512 cascadelake icelake-client icelake-server tigerlake alderlake".split(" "),
  ..."sapphirerapids znver1 znver2 znver3 znver4 znver5 btver2 bdver4".split(" "),
  ..."armv7-a armv7ve armv8-a armv8.1-a armv8.2-a armv8.3-a armv8.4-a armv8.5-a".split(" "),
  ..."armv8.6-a armv9-a cortex-a53 cortex-a55 cortex-a57 cortex-a72 cortex-a73".split(" "),
  ..."cortex-a76 neoverse-n1 neoverse-n2 neoverse-v1 apple-m1 apple-m2 apple-m3".split(" "),
  ..."rv64gc rv32gc power8 power9 power10 z13 z14 z15".split(" "),
]);

/** Architecture extensions after `+` in `-march=armv8.2-a+crypto+fp16`. */
const ARCH_EXTENSIONS: ReadonlySet<string> = new Set(
  "crypto fp16 simd crc lse sve sve2 dotprod rcpc fp nofp aes sha2 sha3 sm4 bf16 i8mm"
    .split(" "),
);

/** Macros of `-D` (with their value shapes) and `-U`. */
const MACROS: readonly RegExp[] = [
  /^(?:NDEBUG|DEBUG|_GNU_SOURCE|_DEFAULT_SOURCE|_BSD_SOURCE|_DARWIN_C_SOURCE)$/,
  /^(?:_REENTRANT|_THREAD_SAFE|_LARGEFILE_SOURCE|_LARGEFILE64_SOURCE|_GLIBCXX_ASSERTIONS)$/,
  /^_FORTIFY_SOURCE(?:=[0-3])?$/,
  /^(?:_FILE_OFFSET_BITS|_TIME_BITS)(?:=64)?$/,
  /^(?:_POSIX_C_SOURCE|_XOPEN_SOURCE)(?:=\d{1,6}L?)?$/,
];

/** `-std=` values: a C or C++ dialect and its year (`c11`, `gnu++17`, `c++2b`). */
const STD = /^-std=(?:c|gnu|c\+\+|gnu\+\+|iso9899:)(?:\d\d|[012][xyza-c])$/;

/** Linker words inside `-Wl,` that take no argument. */
const LINKER_FLAGS: ReadonlySet<string> = new Set([
  ..."-O1 -O2 --as-needed --no-as-needed --sort-common --gc-sections --build-id".split(" "),
  ..."--build-id=sha1 --hash-style=gnu --hash-style=both --enable-new-dtags".split(" "),
  ..."--disable-new-dtags --no-undefined -Bsymbolic-functions -dead_strip --icf=all".split(" "),
  ..."-headerpad_max_install_names --strip-all -s --copy-dt-needed-entries -E".split(" "),
]);

/** Values of the linker's `-z` keyword. */
const LINKER_Z: ReadonlySet<string> = new Set(
  "relro norelro now lazy noexecstack defs pack-relative-relocs separate-code".split(" "),
);

/** Standard library directories that `-l<name>` is looked up in (besides `-L` ones). */
const LIB_DIRS = [
  "/lib",
  "/lib64",
  "/usr/lib",
  "/usr/lib64",
  "/usr/local/lib",
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/lib/aarch64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
  "/opt/homebrew/lib",
];

/** Options followed by a directory, glued (`-I/x`) or as the next word (`-isystem /x`). */
const DIR_OPTIONS = ["-isystem", "-iquote", "-idirafter", "-isysroot", "-I", "-L", "-F"];

/** True for an absolute or `~` path of plain components that exists on the host. */
function existingPlainPath(path: string, known: KnownPaths): boolean {
  return isPlainPath(path, known) && existsOnHost(path, false, known);
}

/** True for `-march=`, `-mtune=` or `-mcpu=` of a listed CPU (with listed `+` extensions). */
function cpuFlag(word: string): boolean {
  const m = /^-m(?:arch|tune|cpu)=(.+)$/.exec(word);
  if (!m) return false;
  const [cpu, ...ext] = m[1]!.split("+");
  return CPUS.has(cpu!) && ext.every((e) => ARCH_EXTENSIONS.has(e));
}

/** True for the comma-separated linker words of `-Wl,…` (`-z,relro`, `-rpath,<path>`). */
function linkerFlag(word: string, known: KnownPaths): boolean {
  if (!word.startsWith("-Wl,")) return false;
  const parts = word.slice(4).split(",");
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (LINKER_FLAGS.has(p)) continue;
    if (p === "-z" && LINKER_Z.has(parts[i + 1] ?? "")) i++;
    else if (
      (p === "-rpath" || p === "-rpath-link") && existingPlainPath(parts[i + 1] ?? "", known)
    ) {
      i++;
    } else if (/^-z(?:relro|now)$/.test(p)) continue;
    else return false;
  }
  return parts.length > 0;
}

/** True for `-l<name>` when `lib<name>` (`.so`, `.a`, `.dylib`, `.tbd`) is in a standard or `-L` directory. */
function libraryFlag(word: string, libDirs: readonly string[], known: KnownPaths): boolean {
  const m = /^-l([A-Za-z0-9_+.-]{1,64})$/.exec(word);
  if (!m || m[1]!.startsWith(".")) return false;
  return [...LIB_DIRS, ...libDirs].some((d) =>
    [".so", ".a", ".dylib", ".tbd"].some((ext) =>
      existsOnHost(`${d}/lib${m[1]}${ext}`, false, known)
    )
  );
}

/** True for one word that needs nothing after it. */
function flagWord(word: string, libDirs: readonly string[], known: KnownPaths): boolean {
  if (FIXED_FLAGS.has(word) || STD.test(word) || cpuFlag(word)) return true;
  if (/^-mmacosx-version-min=\d{1,2}(?:\.\d{1,2}){0,2}$/.test(word)) return true;
  const macro = /^-[DU](.+)$/.exec(word);
  if (macro) return MACROS.some((m) => m.test(macro[1]!));
  const dir = DIR_OPTIONS.find((o) => word.startsWith(o) && word.length > o.length);
  if (dir) return existingPlainPath(word.slice(dir.length), known);
  return linkerFlag(word, known) || libraryFlag(word, libDirs, known);
}

/**
 * True when `value` is made only of words of the compiler flag vocabulary:
 * the fixed flags above, `-march=`/`-mtune=`/`-mcpu=` of a listed CPU,
 * `-std=` of a C or C++ dialect, `-I`/`-L`/`-isystem`… and `-Wl,-rpath,` of
 * an existing plain path, `-Wl,` of listed linker words, `-l<name>` of a
 * library found in a standard directory or an `-L` directory of the value,
 * and `-D`/`-U` of a listed feature macro. At most 64 words.
 */
export function isCompilerFlags(value: string, known: KnownPaths): boolean {
  const words = value.split(/[ \t\n]+/).filter((w) => w !== "");
  if (words.length > 64) return false;
  const libDirs = words.filter((w) => w.startsWith("-L")).map((w) => w.slice(2))
    .filter((d) => existingPlainPath(d, known));
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (DIR_OPTIONS.includes(w) || w === "-arch") {
      const next = words[++i] ?? "";
      const ok = w === "-arch"
        ? /^(?:x86_64|arm64|arm64e|i386)$/.test(next)
        : existingPlainPath(next, known);
      if (!ok) return false;
    } else if (!flagWord(w, libDirs, known)) return false;
  }
  return true;
}
