import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at a time: most of the slow ones wait on child processes, sockets and timers, so a
    // second worker fills the idle core (vitest's default on 2 cores is one).
    maxWorkers: 2,
    globalSetup: ["test/helpers/global-setup.ts"],
  },
});
