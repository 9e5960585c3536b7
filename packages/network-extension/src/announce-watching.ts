import { writeFile } from "node:fs/promises";

/**
 * Tells the runner that the invariants watch: it creates NETSTRESS_INVARIANT_READY_FILE, which the
 * iteration's other tests wait for (up to 120 s), so that nothing they do goes unobserved.
 * Nothing to do without the variable (origin, or a run by hand).
 */
export async function announceWatching(env: NodeJS.ProcessEnv): Promise<void> {
  const file = env.NETSTRESS_INVARIANT_READY_FILE;
  if (file) await writeFile(file, "watching\n");
}
