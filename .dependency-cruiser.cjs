// The folders under src/ are layers, lowest first (docs/architecture.md says what each owns). A
// folder imports only folders below it — type imports included — so no two folders import each
// other, directly or through others; nor do two files. `npm run lint` runs this; a violation names
// the file and the import that breaks the order, and the folder or file cycle it makes.
// test/architecture-doc.test.ts holds architecture.md's table of layers to LAYERS and these rules,
// and its "may import" column to the imports src/ has: change them together.
const LAYERS = [
  "errors",
  "arch",
  "model",
  "kube",
  "http",
  "redis",
  "trust",
  "commands",
  "config",
  "registry",
  "ote",
  "ext",
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
  "sim",
  "lab",
  "cli",
];

const above = (index) => LAYERS.slice(index + 1).join("|");

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      // Within a folder too: a file that imports one that imports it back is read half-initialised
      // (ESM evaluates one of them first), and the two cannot be understood, tested or moved apart.
      name: "no-circular",
      severity: "error",
      comment:
        "A file under src/ imports one that imports it back (the path is the cycle): move what both need into a file of its own.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-folder-cycle",
      severity: "error",
      scope: "folder",
      comment: "A folder under src/ imports a folder that imports it back (the path is the cycle).",
      from: { path: "^src/" },
      to: { circular: true },
    },
    ...LAYERS.slice(0, -1).map((layer, index) => ({
      name: `${layer}-imports-a-higher-layer`,
      severity: "error",
      comment: `src/${layer}/ may import only layers below it (${LAYERS.slice(0, index).join(", ") || "none"}).`,
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${above(index)})/` },
    })),
    {
      // Simulated clusters are a world apart from the bot: the bot talks to them only over the
      // network, as to real clusters, so they know nothing of its parts — but the floors every
      // part stands on (errors, arches, the model's formats such as Go durations).
      name: "sim-imports-only-errors-arch-and-model",
      severity: "error",
      comment:
        "packages/testbed/src/sim/ may import only packages/core/src/errors/, packages/core/src/arch/ and packages/core/src/model/: it simulates clusters, not the bot.",
      from: { path: "^packages/testbed/src/sim/" },
      to: { path: "^src/", pathNot: "^src/(sim|errors|arch|model)/" },
    },
    {
      name: "unknown-layer",
      severity: "error",
      comment: "Every folder under src/ is a layer: add a new one to LAYERS in .dependency-cruiser.cjs.",
      from: { path: "^src/", pathNot: `^src/(${LAYERS.join("|")})/` },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    includeOnly: "^src/",
    metrics: true,
  },
};
