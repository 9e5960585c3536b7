import { configDefaults, defineConfig } from "vitest/config";
import { TEST_TIERS } from "./test/test-tiers.ts";

const ALL_TESTS = "test/**/*.test.ts";
// Only the tiers that use Redis start it: `npm run test:unit` needs no redis-server.
const REDIS = ["test/helpers/global-setup.ts"];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at a time: most of the slow ones wait on child processes, sockets and timers, so a
    // second worker fills the idle core (vitest's default on 2 cores is one).
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Unit files are pure (test/test-tiers.test.ts holds them to it): no process, socket or
        // server outlives a file, so they share worker threads without a fresh module graph each,
        // which was most of the tier's time (98 s → 62 s at load 15 here).
        test: { name: "unit", include: [...TEST_TIERS.unit], pool: "threads", isolate: false },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: [ALL_TESTS],
          exclude: [...configDefaults.exclude, ...TEST_TIERS.unit, ...TEST_TIERS.system],
          globalSetup: REDIS,
        },
      },
      { extends: true, test: { name: "system", include: [...TEST_TIERS.system], globalSetup: REDIS } },
    ],
  },
});
