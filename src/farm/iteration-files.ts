import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { resultRecordSchema, type Arm, type ResultRecord } from "../runner/result-record.ts";
import {
  createArtifactSaver,
  DEFAULT_ARTIFACT_LIMITS,
  type ArtifactLimits,
} from "./save-iteration-artifacts.ts";

/**
 * Collected iterations on the bot's disk, one file each, written atomically before their Job is
 * deleted: after a restart, an iteration whose file exists is done and is not run again. The
 * artifact files its pod streamed are saved before it (see createArtifactSaver).
 */
export function iterationFiles(
  outDir: string,
  options: { components?: Partial<Record<Arm, readonly string[]>>; artifactLimits?: ArtifactLimits } = {},
) {
  const dir = join(outDir, "iterations");
  const path = (iteration: number) => join(dir, `${iteration}.jsonl`);
  const render = (records: readonly ResultRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");
  const replace = async (target: string, text: string) => {
    await writeFile(`${target}.tmp`, text);
    await rename(`${target}.tmp`, target);
  };
  const limits = options.artifactLimits ?? DEFAULT_ARTIFACT_LIMITS;
  return {
    limits,
    saveArtifacts: createArtifactSaver({
      outDir,
      components: options.components ?? {},
      limits,
    }),
    async read(iteration: number): Promise<ResultRecord[] | undefined> {
      let text: string;
      try {
        text = await readFile(path(iteration), "utf8");
      } catch {
        return undefined;
      }
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => resultRecordSchema.parse(JSON.parse(line)));
    },
    async save(iteration: number, records: readonly ResultRecord[]): Promise<void> {
      await mkdir(dir, { recursive: true });
      await replace(path(iteration), render(records));
    },
    /** The shard's results.jsonl: the collected iterations in order. */
    async writeResults(collected: ReadonlyMap<number, readonly ResultRecord[]>): Promise<string> {
      const resultsPath = join(outDir, "results.jsonl");
      const ordered = [...collected].sort(([a], [b]) => a - b).map(([, records]) => render(records));
      await mkdir(outDir, { recursive: true });
      await replace(resultsPath, ordered.join(""));
      return resultsPath;
    },
  };
}
