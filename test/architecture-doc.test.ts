import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type IConfiguration, type IRegularForbiddenRuleType } from "dependency-cruiser";
import extractDepcruiseConfig from "dependency-cruiser/config-utl/extract-depcruise-config";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOC = "docs/architecture.md";
const CONFIG = ".dependency-cruiser.cjs";
const HEADING = "## Layers and who may import whom";

/** One row of the doc's table of layers, its "may import" cell read. */
interface Layer {
  folder: string;
  /** The folders the cell names; every folder but the ones it excludes when `everything` says so. */
  mayImport: Set<string>;
  /** "everything…": a composition root, which need not import each folder it may. */
  everything: boolean;
  /** From a remark "(only `x/` imports it)": the only folders that may import this one. */
  onlyImportedBy?: Set<string>;
  /** Folders named with the remark "(types)": this one imports nothing of theirs but types. */
  typesOnly: Set<string>;
  cell: string;
}

const backticked = (text: string) => [...text.matchAll(/`([\w-]+)\/?`/g)].map((match) => match[1]!);

/** The table under HEADING, bottom layer first, as architecture.md writes it. */
function readLayerTable(markdown: string): Layer[] {
  const section = markdown.slice(
    markdown.indexOf(HEADING),
    markdown.indexOf("\n## ", markdown.indexOf(HEADING) + 1),
  );
  const rows = section
    .split("\n")
    .filter((line) => /^\| `[\w-]+\/` /.test(line))
    .map((line) => line.split("|").map((cell) => cell.trim()));
  const folders = rows.map((cells) => backticked(cells[1]!)[0]!);
  return rows.map((cells, index) => {
    const cell = cells[3]!;
    const remarks = [...cell.matchAll(/\(([^)]*)\)/g)].map((match) => match[1]!);
    const names = cell.replace(/\([^)]*\)/g, "");
    const only = remarks.find((remark) => /^only .* imports? it$/.test(remark));
    const everything = names.startsWith("everything");
    const excluded = new Set(backticked(names));
    const candidates = names.startsWith("everything above") ? folders.slice(0, index) : folders;
    const mayImport = everything
      ? candidates.filter((folder) => folder !== folders[index] && !excluded.has(folder))
      : backticked(names);
    return {
      folder: folders[index]!,
      mayImport: new Set(mayImport),
      everything,
      ...(only ? { onlyImportedBy: new Set(backticked(only)) } : {}),
      typesOnly: new Set([...cell.matchAll(/`([\w-]+)\/?` \(types\)/g)].map((match) => match[1]!)),
      cell,
    };
  });
}

/**
 * Every layer and where it lives: each folder of src/ (the bot) and of a package's src/, and a
 * package whose src/ holds files and no folders (the network extension) under the package's name.
 */
function readLayerPaths(): Map<string, string> {
  const subfolders = (path: string) =>
    readdirSync(join(ROOT, path), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  const paths = new Map(subfolders("src").map((folder) => [folder, `src/${folder}/`]));
  for (const name of subfolders("packages")) {
    const inside = subfolders(`packages/${name}/src`);
    if (inside.length === 0) paths.set(name, `packages/${name}/src/`);
    for (const folder of inside) paths.set(folder, `packages/${name}/src/${folder}/`);
  }
  return paths;
}
const LAYER_PATHS = readLayerPaths();
const pathOf = (layer: string) => LAYER_PATHS.get(layer) ?? `(no folder named ${layer})/`;

/** Whether a path condition of a dependency-cruiser rule (path, pathNot; nothing else) holds for a path. */
function holds(condition: { path?: string | string[]; pathNot?: string | string[] }, path: string): boolean {
  const anyMatches = (patterns: string | string[]) =>
    [patterns].flat().some((pattern) => new RegExp(pattern).test(path));
  return (
    (condition.path === undefined || anyMatches(condition.path)) &&
    (condition.pathNot === undefined || !anyMatches(condition.pathNot))
  );
}

/**
 * The configuration's rules that forbid a file of folder `from` importing one of folder `to`: those
 * that say which paths on both ends (path, pathNot) and nothing else — the cycle rules need a graph.
 */
function rulesForbidding(config: IConfiguration, from: string, to: string): string[] {
  const byPathOnly = (condition: object) =>
    Object.keys(condition).every((key) => key === "path" || key === "pathNot");
  return (config.forbidden ?? [])
    .filter(
      (rule): rule is IRegularForbiddenRuleType =>
        "to" in rule && byPathOnly(rule.from) && byPathOnly(rule.to),
    )
    .filter((rule) => holds(rule.from, `${pathOf(from)}a.ts`) && holds(rule.to, `${pathOf(to)}a.ts`))
    .map((rule) => rule.name ?? "(unnamed rule)");
}

/** Per folder, the folders it imports, each with one import that does it ("src/a/x.ts → src/b/y.ts"). */
type FolderImports = Map<string, Map<string, string>>;

/** The imports from one folder of src/ into another: all of them, and those that are more than types. */
async function folderImports(config: IConfiguration): Promise<{ all: FolderImports; values: FolderImports }> {
  const tsConfigFile = join(ROOT, "tsconfig.json");
  const { output } = await cruise(
    ["src", "packages"],
    { ...config.options, baseDir: resolve(ROOT), tsConfig: { fileName: tsConfigFile } },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  const folderOf = (path: string) => [...LAYER_PATHS].find(([, prefix]) => path.startsWith(prefix))?.[0];
  const all: FolderImports = new Map();
  const values: FolderImports = new Map();
  const add = (imports: FolderImports, from: string, to: string, example: string) => {
    const ofFolder = imports.get(from) ?? new Map<string, string>();
    if (!ofFolder.has(to)) ofFolder.set(to, example);
    imports.set(from, ofFolder);
  };
  if (typeof output === "string")
    throw new Error(`dependency-cruiser answered text: ${output.slice(0, 200)}`);
  for (const module of output.modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      const example = `${module.source} → ${dependency.resolved}`;
      add(all, from, to, example);
      if (!dependency.dependencyTypes.includes("type-only")) add(values, from, to, example);
    }
  }
  return { all, values };
}

describe(`${DOC}'s table of layers`, () => {
  const layers = readLayerTable(readFileSync(join(ROOT, DOC), "utf8"));
  const listed = new Set(layers.map((layer) => layer.folder));
  let config: IConfiguration;
  let imports: FolderImports;
  let valueImports: FolderImports;

  beforeAll(async () => {
    config = await extractDepcruiseConfig(join(ROOT, CONFIG));
    ({ all: imports, values: valueImports } = await folderImports(config));
  });

  it("has a row for every layer of src/ and the packages, and names in its 'may import' column only folders it has", () => {
    const folders = [...LAYER_PATHS.keys()];
    expect(
      [...listed].sort(),
      `the rows of ${DOC}'s table (left) against the layers of src/ and packages/*/src/ (right)`,
    ).toEqual(folders.sort());
    const unknown = layers.flatMap((layer) =>
      [...layer.mayImport, ...(layer.onlyImportedBy ?? [])]
        .filter((name) => !listed.has(name))
        .map((name) => `\`${layer.folder}/\` names \`${name}\`, which has no row`),
    );
    expect(unknown, `fix ${DOC}'s "may import" column`).toEqual([]);
  });

  it(`orders the layers as ${CONFIG} does and allows no import it forbids`, () => {
    const disagreements = layers.flatMap((layer, index) => [
      ...[...layer.mayImport].flatMap((to) => {
        const rules = rulesForbidding(config, layer.folder, to);
        return rules.length > 0
          ? [
              `${DOC} lets \`${layer.folder}/\` import \`${to}/\`, which ${CONFIG} forbids (${rules.join(", ")})`,
            ]
          : [];
      }),
      ...layers
        .slice(index + 1)
        .filter((higher) => rulesForbidding(config, layer.folder, higher.folder).length === 0)
        .map(
          (higher) =>
            `${DOC} lists \`${higher.folder}/\` as a higher layer than \`${layer.folder}/\` (a later row), but ${CONFIG} lets \`${layer.folder}/\` import it: ` +
            `the table and LAYERS should list the layers in one order, bottom first`,
        ),
    ]);
    expect(disagreements, `make ${DOC}'s table and ${CONFIG} say the same`).toEqual([]);
  });

  it("allows every folder-to-folder import the code has", () => {
    const unlisted = layers.flatMap((layer) =>
      [...(imports.get(layer.folder) ?? new Map<string, string>())]
        .filter(([to]) => !layer.mayImport.has(to))
        .map(
          ([to, example]) =>
            `${pathOf(layer.folder)} imports ${pathOf(to)} (${example}), but ${DOC} does not let it: ` +
            `add \`${to}\` to the "may import" cell of \`${layer.folder}/\` ("${layer.cell}"), or move what it imports`,
        ),
    );
    expect(unlisted, "imports the architecture does not allow").toEqual([]);
  });

  it("allows only folder-to-folder imports the code has, but for the composition roots ('everything…')", () => {
    const unused = layers
      .filter((layer) => !layer.everything)
      .flatMap((layer) =>
        [...layer.mayImport]
          .filter((to) => !imports.get(layer.folder)?.has(to))
          .map(
            (to) =>
              `${DOC} lets \`${layer.folder}/\` import \`${to}/\`, but no file of ${pathOf(layer.folder)} does: ` +
              `remove \`${to}\` from its "may import" cell ("${layer.cell}")`,
          ),
      );
    expect(unused, "allowances no import uses").toEqual([]);
  });

  it("says truly which folders alone import a folder ('only `x/` imports it')", () => {
    const wrong = layers.flatMap((layer) =>
      layers
        .filter((importer) => importer.folder !== layer.folder)
        .filter((importer) => layer.onlyImportedBy && !layer.onlyImportedBy.has(importer.folder))
        .flatMap((importer) => {
          const example = imports.get(importer.folder)?.get(layer.folder);
          return example
            ? [
                `${pathOf(importer.folder)} imports ${pathOf(layer.folder)} (${example}), but ${DOC} says only ` +
                  `${[...layer.onlyImportedBy!].map((name) => `\`${name}/\``).join(", ")} does: name it there, or move the import`,
              ]
            : [];
        }),
    );
    expect(wrong, "importers the architecture does not name").toEqual([]);
  });

  it("imports nothing but types of a folder its cell marks '(types)'", () => {
    const more = layers.flatMap((layer) =>
      [...layer.typesOnly].flatMap((to) => {
        const example = valueImports.get(layer.folder)?.get(to);
        return example
          ? [
              `${pathOf(layer.folder)} imports more than types of ${pathOf(to)} (${example}), but ${DOC} says types only ` +
                `("${layer.cell}"): import them with \`import type\`, or drop "(types)" there`,
            ]
          : [];
      }),
    );
    expect(more, "imports beyond the types the architecture allows").toEqual([]);
  });
});
