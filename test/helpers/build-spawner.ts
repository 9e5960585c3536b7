import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Builds the native process spawner from the sources here, as `npm test` and the image build it:
 * into `output`, or where the runner looks for it when none is given. Returns its path.
 */
export async function buildSpawner(output?: string): Promise<string> {
  await promisify(execFile)("bash", [join(ROOT, "scripts", "build-spawner.sh"), ...(output ? [output] : [])]);
  return output ?? join(ROOT, "src", "runner", "native", "netstress-spawner");
}
