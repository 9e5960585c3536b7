import { writeFileSync } from "node:fs";
import { decideGoldenLines } from "./decide-golden-scenarios.ts";

/**
 * Writes the decision step's golden decisions: every decision of the seeded scenarios, one JSON
 * line each. Usage: node --import tsx test/analysis/write-decide-golden.ts
 */
const path = new URL("fixtures/decide-golden.jsonl", import.meta.url);
const lines = decideGoldenLines();
writeFileSync(path, `${lines.join("\n")}\n`);
console.log(`${lines.length} decisions written to ${path.pathname}`);
