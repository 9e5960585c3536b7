import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Option, type Command } from "commander";
import type { DecideHistoryPayload, DecideRecord } from "../../analysis/decide-records.ts";
import { parseCount, parseRateChange } from "../parse-options.ts";
import { UsageError } from "../usage-error.ts";

interface DecideFlags {
  tests: string;
  results: string[];
  target: string;
  payloads: "same" | "differ";
  clusterCost: string;
  upgradeCost: string;
  budget: string;
  clustersAtOnce?: string;
  history?: string;
  output: "json";
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** One batch's records: DIR/results.jsonl or the file itself; every record must name its cluster. */
async function readBatch(path: string): Promise<DecideRecord[]> {
  const file = (await stat(path).catch(() => null))?.isDirectory() ? join(path, "results.jsonl") : path;
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--results ${path}: cannot read ${file} (${error.code ?? error.message})`);
  });
  const { parseResultLine } = await import("../../analysis/parse-result-line.ts");
  const records: DecideRecord[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    const parsed = parseResultLine(line);
    if (!parsed.ok) throw new UsageError(`${file}:${index + 1}: ${parsed.reason}`);
    const { arm, cluster, iteration, name, result } = parsed.record;
    if (!cluster)
      throw new UsageError(
        `${file}:${index + 1}: the record names no cluster; decide compares arms cluster by cluster, so every record needs its "cluster"`,
      );
    records.push({ arm, cluster, iteration, name, result });
  });
  return records;
}

/** The stream's history of the baseline payload: its payloads, each with its per-test counts. */
async function readHistory(path: string): Promise<DecideHistoryPayload[]> {
  const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--history ${path}: cannot read it (${error.code ?? error.message})`);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--history ${path}: not JSON (${(error as Error).message})`, { cause: error });
  }
  const { decideHistorySchema } = await import("../../analysis/decide-history-schema.ts");
  const parsed = decideHistorySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(
      `--history ${path}: ${issue.path.join(".")}: ${issue.message} (expected {payloads:[{tests:{NAME:{executions,failures,flakes}}}]})`,
    );
  }
  return parsed.data.payloads;
}

export function registerDecideCommand(program: Command): void {
  program
    .command("decide")
    .description(
      "The adaptive run's decision step: per test regression, clean at the target, or undecided, and the next batch (tests, iterations, clusters per arm) or none",
    )
    .requiredOption("--tests <FILE>", "the run's test names, one per line")
    .option(
      "--results <DIR>",
      "a batch run so far (its results.jsonl), oldest first; repeatable; none on the first call",
      collect,
      [],
    )
    .requiredOption("--target <P0:P1>", "the rise in a test's failure probability to detect, e.g. 0.02:0.10")
    .addOption(
      new Option(
        "--payloads <KIND>",
        "whether the arms run the same payload (shared clusters) or different ones (crossover by upgrade)",
      )
        .choices(["same", "differ"])
        .makeOptionMandatory(),
    )
    .requiredOption("--cluster-cost <N>", "what a new cluster costs, in test executions")
    .requiredOption(
      "--upgrade-cost <N>",
      "what moving a cluster from the baseline payload to the PR payload costs, in test executions",
    )
    .requiredOption("--budget <N>", "the run's budget in test executions, clusters and upgrades included")
    .option(
      "--clusters-at-once <N>",
      "the most clusters the run may hold at once, those waiting for the PR payload included (--payloads differ; at least 2): a cluster source's quota",
    )
    .option(
      "--history <FILE>",
      "the stream's history of the baseline payload (JSON {payloads:[{release,tests:{NAME:{executions,failures,flakes}}}]}, up to the baseline payload): new clusters on the PR payload stand against it, one payload each, before clusters are upgraded (--payloads differ)",
    )
    .addOption(new Option("-o, --output <FORMAT>", "output format").choices(["json"]).default("json"))
    .action(async (flags: DecideFlags) => {
      const target = parseRateChange("--target", flags.target);
      const costs = {
        cluster: parseCount("--cluster-cost", flags.clusterCost, { min: 0, max: 1e9 }),
        upgrade: parseCount("--upgrade-cost", flags.upgradeCost, { min: 0, max: 1e9 }),
      };
      const budget = parseCount("--budget", flags.budget, { min: 1, max: 1e12 });
      const atOnce =
        flags.clustersAtOnce === undefined
          ? undefined
          : parseCount("--clusters-at-once", flags.clustersAtOnce, { min: 2, max: 10_000 });
      const testsText = await readFile(flags.tests, "utf8").catch((error: NodeJS.ErrnoException) => {
        throw new UsageError(`--tests ${flags.tests}: cannot read it (${error.code ?? error.message})`);
      });
      const tests = [
        ...new Set(
          testsText
            .split("\n")
            .map((line) => line.trim())
            .filter((line) => line !== ""),
        ),
      ];
      if (tests.length === 0)
        throw new UsageError(`--tests ${flags.tests}: no test names in it (one per line)`);
      const batches = await Promise.all(flags.results.map(readBatch));
      const history = flags.history ? await readHistory(flags.history) : undefined;
      const { decideBatch } = await import("../../analysis/decide-batch.ts");
      const { DecideInputError } = await import("../../analysis/decide-input-error.ts");
      try {
        const { decision } = decideBatch({
          tests,
          batches,
          target,
          payloads: flags.payloads,
          costs,
          budget,
          ...(history ? { history } : {}),
          ...(atOnce !== undefined ? { atOnce } : {}),
        });
        process.stdout.write(`${JSON.stringify(decision, null, 2)}\n`);
      } catch (error) {
        if (error instanceof DecideInputError) throw new UsageError(error.message, { cause: error });
        throw error;
      }
    });
}
