import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  iterationArtifactsDir,
  iterationArtifactsSchema,
  type OmittedArtifact,
} from "../runner/iteration-artifacts.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";

/** An iteration's artifacts as the report lists them, each file with its link. */
export interface ReportArtifacts {
  iteration: number;
  files: { arm: Arm; component: string; path: string; bytes: number; href: string }[];
  omitted: OmittedArtifact[];
}

/**
 * The artifacts a build farm's collector kept beside each results file (`artifacts/iteration-<n>.json`
 * and the files it lists), in iteration order. `href` makes a file's link from its absolute path;
 * an index that cannot be read is a note, never an error.
 */
export async function readIterationArtifacts(input: {
  resultsFiles: readonly string[];
  href: (file: string) => string;
}): Promise<{ artifacts: ReportArtifacts[]; notes: string[] }> {
  const artifacts: ReportArtifacts[] = [];
  const notes: string[] = [];
  for (const shardDir of new Set(input.resultsFiles.map((f) => dirname(resolve(f))))) {
    const dir = join(shardDir, "artifacts");
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((n) => /^iteration-\d+\.json$/.test(n))) {
      let parsed;
      try {
        parsed = iterationArtifactsSchema.safeParse(JSON.parse(await readFile(join(dir, name), "utf8")));
      } catch {
        parsed = undefined;
      }
      if (!parsed?.success) {
        notes.push(
          `${relative(process.cwd(), join(dir, name))}: not an artifact index; its files are not listed`,
        );
        continue;
      }
      const index = parsed.data;
      const base = join(shardDir, iterationArtifactsDir(index.iteration));
      artifacts.push({
        iteration: index.iteration,
        files: index.files.map((f) => ({
          ...f,
          href: input.href(join(base, f.arm, f.component, ...f.path.split("/"))),
        })),
        omitted: index.omitted,
      });
    }
  }
  artifacts.sort((a, b) => a.iteration - b.iteration);
  return { artifacts, notes };
}

/** A link to `file` relative to the directory `from` (the report's). */
export function relativeHref(from: string, file: string): string {
  return relative(resolve(from), file).split(sep).map(encodeURIComponent).join("/");
}
