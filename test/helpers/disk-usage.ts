import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Bytes on disk under a directory, each file counted once however many links it has (as du does). */
export async function diskUsage(dir: string, seen = new Set<string>()): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const info = await lstat(join(dir, name));
    if (info.isDirectory()) total += await diskUsage(join(dir, name), seen);
    else if (!seen.has(`${info.dev}:${info.ino}`)) {
      seen.add(`${info.dev}:${info.ino}`);
      total += info.blocks * 512;
    }
  }
  return total;
}
