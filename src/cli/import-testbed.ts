import { UsageError } from "./usage-error.ts";

/**
 * Loads part of the test bed (`@netstress/testbed`: simulated clusters and Hive, the lab, the
 * sample payload) for a command that needs it. The bot's image leaves the test bed out, so there
 * `netstress demo`, `lab` and `serve --sample-payload` say what is missing instead of failing on a
 * module path.
 */
export async function importTestbed<T>(command: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const missing =
      (error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" &&
      String((error as Error).message).includes("@netstress/testbed");
    if (!missing) throw error;
    throw new UsageError(
      `${command} needs the test bed (@netstress/testbed: simulated clusters, the lab, the sample payload), which this installation leaves out, as the bot's image does; run it from a clone of the repository after \`npm ci\``,
      { cause: error },
    );
  }
}
