import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { AnalysisInputError } from "./analysis-input-error.ts";

export const RESULTS_FILE_NAME = "results.jsonl";

async function collect(directory: string, depth: number, found: string[]): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true });
  for (const entry of entries.sort((x, y) => x.name.localeCompare(y.name))) {
    const path = join(directory, entry.name);
    if (entry.isFile() && entry.name === RESULTS_FILE_NAME) found.push(path);
    else if (entry.isDirectory() && depth > 0) await collect(path, depth - 1, found);
  }
}

/**
 * The results.jsonl files a path names: the file itself, or every results.jsonl in a directory and
 * its subdirectories (a few levels: one per shard or per arm is the usual layout).
 */
export async function findResultsFiles(
  path: string,
  { maxDepth = 4 }: { maxDepth?: number } = {},
): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new AnalysisInputError(`cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (!info.isDirectory()) return [path];
  const found: string[] = [];
  await collect(path, maxDepth, found);
  if (found.length === 0) throw new AnalysisInputError(`no ${RESULTS_FILE_NAME} under ${path}`);
  return found;
}
