import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, matchesGlob, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TEST_TIERS, type TestTier } from "./test-tiers.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TEST_FILES = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => `test/${file}`)
  .sort();
const RANK: Record<TestTier, number> = { unit: 0, integration: 1, system: 2 };

function listedIn(tier: "unit" | "system", file: string): boolean {
  return TEST_TIERS[tier].some((glob) => matchesGlob(file, glob));
}

function tierOf(file: string): TestTier {
  return listedIn("system", file) ? "system" : listedIn("unit", file) ? "unit" : "integration";
}

/** The file and the test/ helpers it imports, transitively, as source text and resolved imports. */
function sources(file: string, seen = new Map<string, string>(), specifiers = new Set<string>()) {
  if (seen.has(file) || !existsSync(join(ROOT, file))) return { texts: [...seen.values()], specifiers };
  const text = readFileSync(join(ROOT, file), "utf8");
  seen.set(file, text);
  for (const [, specifier] of text.matchAll(/(?:from|import\()\s*"([^"]+)"/g)) {
    const resolved = specifier!.startsWith(".") ? normalize(join(dirname(file), specifier!)) : specifier!;
    specifiers.add(resolved);
    if (resolved.startsWith("test/")) sources(resolved, seen, specifiers);
  }
  return { texts: [...seen.values()], specifiers };
}

/** What a file uses that puts it in a tier above unit, each with the tier it needs. */
function needs(file: string): { what: string; tier: TestTier }[] {
  const { texts, specifiers } = sources(file);
  const imports = (pattern: RegExp) => [...specifiers].some((specifier) => pattern.test(specifier));
  const mentions = (pattern: RegExp) => texts.some((text) => pattern.test(text));
  const found: { what: string; tier: TestTier }[] = [];
  const need = (what: string, tier: TestTier, used: boolean) => used && found.push({ what, tier });
  need("end-to-end folder", "system", file.startsWith("test/e2e/"));
  need("simulator or lab", "system", imports(/^src\/(sim|lab)\//));
  need("Chromium", "system", imports(/^playwright-core$/));
  need("farm restart", "system", imports(/bot-process\.ts$/));
  need("executable build", "system", mentions(/scripts\/build[\w-]*\.mjs/));
  need("Redis", "integration", imports(/^ioredis$/) || mentions(/inject\("redisUrl"\)/));
  need("registry", "integration", imports(/start-registry\.ts$/));
  need("nock", "integration", imports(/^nock$/));
  need("child process", "integration", imports(/^node:child_process$/));
  need(
    "sample binaries",
    "integration",
    imports(/^src\/runner\/execute-run\.ts$|build-sample-binaries\.ts$/),
  );
  need("socket", "integration", imports(/^node:(http|https|net)$/));
  return found;
}

describe("test tiers", () => {
  it("lists no test file as both unit and system, and every listed glob matches a file", () => {
    expect(TEST_FILES.filter((file) => listedIn("unit", file) && listedIn("system", file))).toEqual([]);
    const globs = [...TEST_TIERS.unit, ...TEST_TIERS.system];
    expect(globs.filter((glob) => !TEST_FILES.some((file) => matchesGlob(file, glob)))).toEqual([]);
  });

  it("puts no test file below a tier it needs", () => {
    const tooLow = TEST_FILES.flatMap((file) =>
      needs(file)
        .filter(({ tier }) => RANK[tier] > RANK[tierOf(file)])
        .map(({ what, tier }) => `${file} is ${tierOf(file)} but uses ${what} (${tier})`),
    );
    expect(tooLow).toEqual([]);
  });
});
