import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const section = (heading: string) => {
  const start = readme.indexOf(`\n## ${heading}\n`);
  return readme.slice(start, readme.indexOf("\n## ", start + 1));
};
const SRC_FOLDERS = readdirSync(join(ROOT, "src"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe("the README", () => {
  it("names every folder of src/ in its folder table, and none that is gone", () => {
    const table = section("The pipeline")
      .split("\n")
      .filter((line) => line.startsWith("| "));
    const named = [
      ...new Set(table.flatMap((line) => [...line.matchAll(/`src\/([\w-]+)\/`/g)].map((m) => m[1]!))),
    ];
    expect(named.sort()).toEqual(SRC_FOLDERS);
  });

  it("draws the pipeline with types src/ exports", () => {
    const drawing = /```\n(trigger .*)\n/.exec(section("The pipeline"))![1]!;
    const hops = drawing
      .split("─►")
      .map((hop) => hop.trim())
      .slice(1);
    expect(hops.length).toBeGreaterThan(4);
    const sources = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => readFileSync(join(ROOT, "src", file), "utf8"))
      .join("\n");
    const exported = (name: string) => new RegExp(`export (type|interface) ${name}\\b`).test(sources);
    expect(hops.filter((name) => !exported(name))).toEqual([]);
  });

  it("starts in two commands after the clone", () => {
    const commands = /```sh\ngit clone [^\n]*\n([\s\S]*?)```/.exec(section("Quick start"))![1]!;
    expect(
      commands
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+#/)[0]!.trim()),
    ).toEqual(["npm run demo", "npm test"]);
  });
});
