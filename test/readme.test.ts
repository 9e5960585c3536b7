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
const subfolders = (path: string) =>
  readdirSync(join(ROOT, path), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
/** The bot's folders and each package's: `src/x/`, `packages/p/src/x/`, or `packages/p/src/` if it has none. */
const CODE_FOLDERS = [
  ...subfolders("src").map((folder) => `src/${folder}/`),
  ...subfolders("packages").flatMap((name) => {
    const inside = subfolders(`packages/${name}/src`);
    return inside.length === 0
      ? [`packages/${name}/src/`]
      : inside.map((folder) => `packages/${name}/src/${folder}/`);
  }),
].sort();

describe("the README", () => {
  it("names every folder of src/ and of the packages in its folder table, and none that is gone", () => {
    const table = section("The pipeline")
      .split("\n")
      .filter((line) => line.startsWith("| "));
    const named = [
      ...new Set(
        table.flatMap((line) =>
          [...line.matchAll(/`((?:packages\/[\w-]+\/)?src\/(?:[\w-]+\/)?)`/g)].map((m) => m[1]!),
        ),
      ),
    ];
    expect(named.sort()).toEqual(CODE_FOLDERS);
  });

  it("draws the pipeline with types the code exports", () => {
    const drawing = /```\n(trigger .*)\n/.exec(section("The pipeline"))![1]!;
    const hops = drawing
      .split("─►")
      .map((hop) => hop.trim())
      .slice(1);
    expect(hops.length).toBeGreaterThan(4);
    const sources = ["src", ...subfolders("packages").map((name) => `packages/${name}/src`)]
      .flatMap((dir) =>
        readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
          .filter((file) => file.endsWith(".ts"))
          .map((file) => readFileSync(join(ROOT, dir, file), "utf8")),
      )
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
