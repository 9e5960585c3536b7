// The folders of the bot (src/) and of its packages (packages/*/src/) are layers, lowest first
// (docs/architecture.md says what each owns). A folder imports only folders below it — type imports
// included — so no two folders import each other, directly or through others; nor do two files.
// `npm run lint` runs this; a violation names the file and the import that breaks the order, and
// the folder or file cycle it makes. test/architecture-doc.test.ts holds architecture.md's table of
// layers to LAYERS and these rules, and its "may import" column to the imports the code has: change
// them together.
const LAYERS = [
  ["errors", "packages/core/src/errors/"],
  ["arch", "packages/core/src/arch/"],
  ["model", "packages/core/src/model/"],
  ["kube", "packages/core/src/kube/"],
  ["network-extension", "packages/network-extension/src/"],
  ...[
    "http",
    "redis",
    "trust",
    "commands",
    "config",
    "registry",
    "ote",
    "runner",
    "payload",
    "analysis",
    "report",
    "runs",
    "history",
    "trends",
    "clusters",
    "farm",
    "queue",
    "github",
    "gate",
    "periodic",
    "observability",
    "app",
    "server",
  ].map((folder) => [folder, `src/${folder}/`]),
  ["sim", "packages/testbed/src/sim/"],
  ["lab", "packages/testbed/src/lab/"],
  ["sample-ext", "packages/testbed/src/sample-ext/"],
  ["ginkgo-ext", "packages/testbed/src/ginkgo-ext/"],
  ["sample-payload", "packages/testbed/src/sample-payload/"],
  ["cli", "src/cli/"],
];

const escape = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const anyOf = (layers) => `^(${layers.map(([, path]) => escape(path)).join("|")})`;
const namesOf = (layers) => layers.map(([name]) => name).join(", ") || "none";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      // Within a folder too: a file that imports one that imports it back is read half-initialised
      // (ESM evaluates one of them first), and the two cannot be understood, tested or moved apart.
      name: "no-circular",
      severity: "error",
      comment:
        "A file imports one that imports it back (the path is the cycle): move what both need into a file of its own.",
      from: { path: "^(src|packages)/" },
      to: { circular: true },
    },
    {
      name: "no-folder-cycle",
      severity: "error",
      scope: "folder",
      comment: "A folder imports a folder that imports it back (the path is the cycle).",
      from: { path: "^(src|packages)/" },
      to: { circular: true },
    },
    ...LAYERS.slice(0, -1).map(([layer, path], index) => ({
      name: `${layer}-imports-a-higher-layer`,
      severity: "error",
      comment: `${path} may import only layers below it (${namesOf(LAYERS.slice(0, index))}).`,
      from: { path: `^${escape(path)}` },
      to: { path: anyOf(LAYERS.slice(index + 1)) },
    })),
    {
      // The core is the floor of every package: it knows none of them.
      name: "core-imports-only-the-core",
      severity: "error",
      comment: "packages/core/ may import only itself: the bot, the extension and the test bed stand on it.",
      from: { path: "^packages/core/" },
      to: { path: "^(src|packages/(?!core/))" },
    },
    {
      // The network extension is a program of its own (its own build, run by openshift-tests or
      // the runner like any component's binary): it knows the formats, not the bot.
      name: "network-extension-imports-only-the-core",
      severity: "error",
      comment:
        "packages/network-extension/ may import only @netstress/core: it is built and shipped apart from the bot.",
      from: { path: "^packages/network-extension/" },
      to: { path: "^(src|packages/(?!core/|network-extension/))" },
    },
    {
      // Simulated clusters are a world apart from the bot: the bot talks to them only over the
      // network, as to real clusters, so the test bed knows nothing of its parts but the core.
      name: "testbed-imports-only-the-core",
      severity: "error",
      comment:
        "packages/testbed/ may import only @netstress/core: it simulates clusters and builds samples, not the bot.",
      from: { path: "^packages/testbed/" },
      to: { path: "^(src|packages/(?!core/|testbed/))" },
    },
    {
      name: "sim-imports-only-errors-arch-and-model",
      severity: "error",
      comment:
        "packages/testbed/src/sim/ may import only the core's errors/, arch/ and model/: it simulates clusters, not their clients.",
      from: { path: "^packages/testbed/src/sim/" },
      to: { path: "^(src|packages)/", pathNot: "^packages/(core/src/(errors|arch|model)|testbed/src/sim)/" },
    },
    {
      // The bot's image leaves the test bed out: only the commands that need it load it, through
      // cli/import-testbed.ts, which says what is missing where it is.
      name: "only-the-cli-loads-the-testbed",
      severity: "error",
      comment:
        "Only src/cli/ may import @netstress/testbed (demo, lab, serve --sample-payload): the bot's image does not carry it.",
      from: { path: "^src/", pathNot: "^src/cli/" },
      to: { path: "^packages/testbed/" },
    },
    {
      name: "packages-imported-by-name",
      severity: "error",
      comment:
        "Import another package by its name (@netstress/core/model/…), not by a path into packages/: a path skips its package.json, which is what declares the dependency.",
      from: { path: "^(src|packages/([^/]+))/" },
      to: { path: "^packages/", pathNot: "^packages/$2/", dependencyTypesNot: ["aliased-workspace"] },
    },
    {
      name: "unknown-layer",
      severity: "error",
      comment:
        "Every folder of src/ and packages/*/src/ is a layer: add a new one to LAYERS in .dependency-cruiser.cjs.",
      from: { path: "^(src|packages/[^/]+/src)/", pathNot: anyOf(LAYERS) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // The packages are imported by name and their package.json "exports" (node_modules links them).
    // A package's imports of another are judged with the root's package.json too, which lists the workspaces.
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "default"] },
    includeOnly: "^(src|packages)/",
    metrics: true,
  },
};
