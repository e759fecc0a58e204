// Prints "<passed> <failed>" from a deno test JUnit report.
const xml = await Deno.readTextFile(Deno.args[0]!);
let passed = 0;
let failed = 0;
for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
  const body = m[2] ?? "";
  if (/<failure\b/.test(body) || /<error\b/.test(body)) failed++;
  else if (!/<skipped\b/.test(body)) passed++;
}
console.log(`${passed} ${failed}`);
