#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so the CLI, the bot and the in-pod runner are the
// same code with no build step to forget.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main();
