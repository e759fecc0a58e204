import assert from "node:assert/strict";
import { join } from "node:path";
import { credentialFilesIn, MAX_DIR_DEPTH } from "../../lib/sandbox/_toolchain_creds.ts";

async function withTree(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-creds-walk-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function touch(path: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, "x");
}

Deno.test("the toolchain walk finds credential files at any depth, named as the tops are given", async () => {
  await withTree(async (dir) => {
    const pip = join(dir, "cache", "pip");
    await touch(join(pip, ".netrc"));
    await touch(join(pip, "a", "b", "c", "d", "e", "application_default_credentials.json"));
    await touch(join(pip, "a", "netrc.py")); // code: not a credential file
    await Deno.mkdir(join(pip, "credentials")); // a directory by its exact name, near the top
    const deep = join(pip, "a", "b", "c", "d", "credentials"); // too deep for a directory
    await Deno.mkdir(deep, { recursive: true });
    await touch(join(deep, "readme.txt"));
    // A top given with a trailing slash and a `..` step: walked as the kernel resolves it, its
    // files named in normal form.
    await Deno.mkdir(join(dir, "cache", "x"));
    const found = await credentialFilesIn([`${join(dir, "cache", "x")}/../pip/`]);
    assert.deepEqual(
      found.sort(),
      [
        join(pip, ".netrc"),
        join(pip, "a", "b", "c", "d", "e", "application_default_credentials.json"),
        join(pip, "credentials"),
      ].sort(),
    );
    assert.ok(MAX_DIR_DEPTH < 4);
  });
});

Deno.test("the toolchain walk of a directory with many entries still finds a file in its first levels", async () => {
  await withTree(async (dir) => {
    // More entries than one slice of the walk (it yields to the event loop between slices).
    const many = join(dir, "many");
    await Deno.mkdir(many);
    for (let i = 0; i < 1100; i++) await Deno.writeTextFile(join(many, `f${i}`), "");
    await touch(join(dir, "npm", "sub", ".npmrc"));
    const found = await credentialFilesIn([many, join(dir, "npm")]);
    assert.deepEqual(found, [join(dir, "npm", "sub", ".npmrc")]);
  });
});

Deno.test("the toolchain walk gives the event loop a turn every 128 entries", async () => {
  await withTree(async (dir) => {
    // Sixteen directories of 64 entries: 1024 entries, listed a directory at a time.
    for (let d = 0; d < 16; d++) {
      const sub = join(dir, `d${d}`);
      await Deno.mkdir(sub);
      for (let i = 0; i < 64; i++) await Deno.writeTextFile(join(sub, `f${i}`), "");
    }
    // A task beside the walk (a request being built) that takes a turn whenever it is given one.
    let done = false;
    let turns = 0;
    const beside = (async () => {
      while (!done) {
        turns++;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    })();
    const found = await credentialFilesIn([dir]);
    done = true;
    await beside;
    assert.deepEqual(found, []);
    // 1040 entries (16 directories and their files): a turn after every 128 of them at least.
    assert.ok(turns >= 8, `${turns} turns beside a walk of 1040 entries`);
  });
});

Deno.test("Maven settings and Gradle init scripts inside a toolchain are hidden when they name a credential", async () => {
  await withTree(async (dir) => {
    // As an SDK manager keeps them (attack round 26 B15).
    const maven = join(dir, "sdkman", "candidates", "maven", "3.9.6", "conf");
    const gradle = join(dir, "sdkman", "candidates", "gradle", "8.5", "init.d");
    await Deno.mkdir(maven, { recursive: true });
    await Deno.mkdir(gradle, { recursive: true });
    const secretSettings = join(maven, "settings.xml");
    await Deno.writeTextFile(
      secretSettings,
      "<settings><servers><server><id>n</id><password>MAVENpw</password></server></servers></settings>",
    );
    const repoInit = join(gradle, "repo.gradle");
    await Deno.writeTextFile(
      repoInit,
      "allprojects { repositories { maven { credentials { password = 'GRADLEpw' } } } }",
    );
    const plainInit = join(gradle, "plain.gradle.kts");
    await Deno.writeTextFile(plainInit, "allprojects { repositories { mavenCentral() } }");
    const otherSettings = join(
      dir,
      "sdkman",
      "candidates",
      "maven",
      "3.9.5",
      "conf",
      "settings.xml",
    );
    await Deno.mkdir(join(otherSettings, ".."), { recursive: true });
    await Deno.writeTextFile(
      otherSettings,
      "<settings><localRepository>/r</localRepository></settings>",
    );
    // A Gradle script outside an init.d is a project's build file, left alone.
    await Deno.writeTextFile(join(dir, "sdkman", "build.gradle"), "password = 'x'");
    const found = await credentialFilesIn([join(dir, "sdkman")]);
    assert.deepEqual(found.sort(), [repoInit, secretSettings].sort());
  });
});

Deno.test("a toolchain's settings or init script holding a header or URL credential is hidden too", async () => {
  await withTree(async (dir) => {
    // Attack round 27 d08: a Maven header, a Gradle header credential, a password in a URL.
    const maven = join(dir, "sdkman", "candidates", "maven", "3.9.6", "conf");
    const gradle = join(dir, "sdkman", "candidates", "gradle", "8.5", "init.d");
    await Deno.mkdir(maven, { recursive: true });
    await Deno.mkdir(gradle, { recursive: true });
    const header = join(maven, "settings.xml");
    await Deno.writeTextFile(
      header,
      "<settings><servers><server><id>n</id><configuration><httpHeaders><property>" +
        "<name>Authorization</name><value>Basic dXNlcjpMRUFLbXZu</value></property>" +
        "</httpHeaders></configuration></server></servers></settings>",
    );
    const headerInit = join(gradle, "header.gradle");
    await Deno.writeTextFile(
      headerInit,
      "allprojects { repositories { maven { credentials(HttpHeaderCredentials) " +
        "{ name = 'X-Auth'; value = 'Bearer LEAKgradle13abcdef' } } } }",
    );
    const urlInit = join(gradle, "url.gradle.kts");
    await Deno.writeTextFile(
      urlInit,
      'allprojects { repositories { maven { url = uri("https://u:LEAKurl14@repo.example/m2") } } }',
    );
    const keyHeader = join(gradle, "key.gradle");
    await Deno.writeTextFile(keyHeader, "// X-API-Key header set below\nallprojects { }");
    const tokenUrl = join(gradle, "token.gradle");
    await Deno.writeTextFile(tokenUrl, 'maven { url "https://ghp_abcdefgh1234@repo.example/m2" }');
    const plainUrl = join(gradle, "mirror.gradle.kts");
    await Deno.writeTextFile(
      plainUrl,
      'allprojects { repositories { maven { url = uri("https://repo.example/m2") } } }',
    );
    const found = await credentialFilesIn([join(dir, "sdkman")]);
    assert.deepEqual(found.sort(), [header, headerInit, urlInit, keyHeader, tokenUrl].sort());
  });
});
