import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** An empty results.jsonl in a shard's directory, as an executor that collected nothing leaves it. */
export async function emptyResults(outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const path = join(outDir, "results.jsonl");
  await writeFile(path, "");
  return path;
}
