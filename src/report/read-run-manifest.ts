import { readFile } from "node:fs/promises";
import { runManifestSchema, type RunManifest } from "../runner/run-manifest.ts";

export type ManifestRead = { manifest: RunManifest } | { manifest: null; note: string };

/** Reads the runner's run.json when it exists; absent or unreadable is a note for the report, never an error. */
export async function readRunManifest(path: string): Promise<ManifestRead> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return { manifest: null, note: "no run.json beside the results: the plan is unknown" };
  }
  try {
    const parsed = runManifestSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { manifest: parsed.data };
    const issue = parsed.error.issues[0];
    return {
      manifest: null,
      note: `run.json is not a run manifest (${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"})`,
    };
  } catch (error) {
    return { manifest: null, note: `run.json is not JSON: ${(error as Error).message}` };
  }
}
