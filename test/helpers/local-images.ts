import { join } from "node:path";
import { createRegistry, type Registry } from "../../src/registry/create-registry.ts";

/** What the local executor fetches binaries named by image with: a registry cached in `cacheDir`. */
export async function localImages(cacheDir: string): Promise<{ registry: Registry; outDir: string }> {
  return { registry: await createRegistry({ cacheDir }), outDir: join(cacheDir, "binaries") };
}
