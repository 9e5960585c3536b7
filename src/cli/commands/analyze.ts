import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { Command } from "commander";
import { AnalysisInputError } from "../../report/analysis-input-error.ts";
import { printAnalysis } from "../print-analysis.ts";
import { UsageError } from "../usage-error.ts";

interface AnalyzeFlags {
  pr: string[];
  baseline: string[];
  history?: string;
  out?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerAnalyzeCommand(program: Command): void {
  program
    .command("analyze")
    .description(
      "Compare PR results against a baseline and write the reports (HTML, summary.json, JUnit, check run)",
    )
    .option(
      "--pr <FILE>",
      "results.jsonl of the PR arm, or a directory holding them (repeatable); its baseline records are the baseline unless --baseline is given",
      collect,
      [],
    )
    .option(
      "--baseline <FILE>",
      "results.jsonl of the released payload, or a directory (repeatable)",
      collect,
      [],
    )
    .option("--history <FILE>", "pooled history baseline (JSON: {tests:[{name,runs,passes}]})")
    .option("--out <DIR>", "where the reports go (default: beside the first --pr results)")
    .addHelpText(
      "after",
      "\nExit status: 0 success or neutral, 1 a blocking test regressed or a new blocking test failed, 2 usage or input error.",
    )
    .action(async (flags: AnalyzeFlags) => {
      process.exitCode = await analyzeCommand(flags);
    });
}

async function analyzeCommand(flags: AnalyzeFlags): Promise<number> {
  if (flags.pr.length === 0) throw new UsageError("give the PR results: --pr FILE|DIR (results.jsonl)");
  const first = flags.pr[0]!;
  const outDir = flags.out ?? ((await stat(first).catch(() => null))?.isDirectory() ? first : dirname(first));
  // Loaded on use, so that other commands do not pay for the analysis and report code at start-up.
  const { analyzeRun } = await import("../../report/analyze-run.ts");
  try {
    const result = await analyzeRun({
      pr: flags.pr,
      ...(flags.baseline.length > 0 ? { baseline: flags.baseline } : {}),
      ...(flags.history ? { history: flags.history } : {}),
      outDir,
    });
    printAnalysis(result);
    return result.conclusion === "failure" ? 1 : 0;
  } catch (error) {
    if (error instanceof AnalysisInputError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
}
