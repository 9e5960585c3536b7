import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { resultRecordSchema, type Arm, type ResultRecord } from "@netstress/core/model/result-record.ts";
import {
  createArtifactSaver,
  DEFAULT_ARTIFACT_LIMITS,
  type ArtifactLimits,
  type SaveIterationArtifactsInput,
} from "./save-iteration-artifacts.ts";

/**
 * Collected iterations on the bot's disk, one file each, written atomically before their Job is
 * deleted: after a restart, an iteration whose file exists is done and is not run again. The
 * artifact files its pod streamed are saved before it (see createArtifactSaver). When each arm runs
 * in a pod of its own, each arm's records have a file of their own (forArm).
 */
export function iterationFiles(
  outDir: string,
  options: { components?: Partial<Record<Arm, readonly string[]>>; artifactLimits?: ArtifactLimits } = {},
): IterationFiles {
  const dir = join(outDir, "iterations");
  const limits = options.artifactLimits ?? DEFAULT_ARTIFACT_LIMITS;
  const saveArtifacts = createArtifactSaver({ outDir, components: options.components ?? {}, limits });
  const files = (arm?: Arm): IterationFiles => {
    const path = (iteration: number) => join(dir, `${iteration}${arm ? `-${arm}` : ""}.jsonl`);
    return {
      limits,
      saveArtifacts: (input) => saveArtifacts({ ...input, ...(arm ? { arm } : {}) }),
      read: async (iteration) => {
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
      save: async (iteration, records) => {
        await mkdir(dir, { recursive: true });
        await replace(path(iteration), render(records));
      },
      forArm: (only) => files(only),
      writeResults: async (collected) => {
        const resultsPath = join(outDir, "results.jsonl");
        const ordered = [...collected].sort(([a], [b]) => a - b).map(([, records]) => render(records));
        await mkdir(outDir, { recursive: true });
        await replace(resultsPath, ordered.join(""));
        return resultsPath;
      },
    };
  };
  return files();
}

export interface IterationFiles {
  limits: ArtifactLimits;
  saveArtifacts(input: Omit<SaveIterationArtifactsInput, "arm">): Promise<unknown>;
  read(iteration: number): Promise<ResultRecord[] | undefined>;
  save(iteration: number, records: readonly ResultRecord[]): Promise<void>;
  /** The files of one arm's pods (each arm of an iteration runs in a pod of its own). */
  forArm(arm: Arm): IterationFiles;
  /** The shard's results.jsonl: the collected iterations in order. */
  writeResults(collected: ReadonlyMap<number, readonly ResultRecord[]>): Promise<string>;
}

const render = (records: readonly ResultRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join("");

async function replace(target: string, text: string): Promise<void> {
  await writeFile(`${target}.tmp`, text);
  await rename(`${target}.tmp`, target);
}
