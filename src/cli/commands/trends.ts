import { resolve } from "node:path";
import type { Command } from "commander";
import { parseArch } from "@netstress/core/arch/arch.ts";
import { streamNameSchema } from "../../config/stream-name.ts";
import type { ComponentChange } from "../../payload/payload-changes.ts";
import type { TrendRate, TrendView } from "../../report/trend-view.ts";
import { loadSettings } from "../../server/load-settings.ts";
import { UsageError } from "../usage-error.ts";

interface TrendsFlags {
  stream: string;
  arch: string;
  output: string;
  limit: string;
}

export function registerTrendsCommand(program: Command): void {
  program
    .command("trends")
    .description(
      "Per test, the pass rate across a release stream's payloads; per payload, what changed; the first bad payloads (the bot's history)",
    )
    .requiredOption("--stream <STREAM>", "release stream, e.g. 4.19.0-0.nightly")
    .requiredOption("--arch <ARCH>", "amd64, arm64, ppc64le or s390x")
    .option(
      "-o, --output <FORMAT>",
      "table or json (the data the page /streams/<stream>/<arch> shows)",
      "table",
    )
    .option("--limit <N>", "tests in the table, the most moved first", "20")
    .addHelpText(
      "after",
      "\nReads the history from the bot's Redis with the bot's settings (NETSTRESS_REDIS_URL … as `serve`),\n" +
        "and payloads through its registry settings.",
    )
    .action(async (flags: TrendsFlags) => {
      await trendsCommand(flags);
    });
}

async function trendsCommand(flags: TrendsFlags): Promise<void> {
  if (!streamNameSchema.safeParse(flags.stream).success) {
    throw new UsageError(
      `--stream ${flags.stream}: a release stream name is letters, digits, '.', '-' and '_'`,
    );
  }
  const arch = parseArch(flags.arch);
  if (flags.output !== "table" && flags.output !== "json") {
    throw new UsageError(`-o ${flags.output}: say table or json`);
  }
  const limit = Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit ${flags.limit}: a whole number ≥ 1`);
  // The same settings `serve` reads, checked before anything connects.
  const settings = loadSettings();
  const [{ Redis }, { createHistoryStore }, { createBotRegistry }, { createStreamTrends }] =
    await Promise.all([
      import("ioredis"),
      import("../../history/history-store.ts"),
      import("../../server/create-bot-registry.ts"),
      import("../../trends/create-stream-trends.ts"),
    ]);
  const { bot } = settings;
  const redis = new Redis(bot.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  try {
    await redis.connect();
    const registry = await createBotRegistry({
      bot,
      dataDir: resolve(bot.dataDir),
      disk: settings.disk,
      access: settings.registry,
    });
    const trends = createStreamTrends({
      history: createHistoryStore({ redis, prefix: bot.queuePrefix, ...settings.history }),
      redis,
      prefix: bot.queuePrefix,
      registry,
    });
    const view = await trends({ stream: flags.stream, arch });
    await registry.settled();
    process.stdout.write(
      flags.output === "json" ? `${JSON.stringify(view, null, 2)}\n` : formatTrends(view, limit),
    );
  } finally {
    redis.disconnect();
  }
}

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
const rateText = (rate: TrendRate | null) =>
  rate ? `${percent(rate[0])} (${percent(rate[1])}–${percent(rate[2])}) of ${rate[3]}` : "—";

function describeChange(change: ComponentChange): string {
  if (change.kind !== "changed") return `${change.tag} (${change.kind})`;
  if (!change.commitChanged) return `${change.tag} (rebuilt, same commit)`;
  return `${change.tag} (${change.compareUrl ?? change.to?.commitUrl ?? `new commit ${change.to?.commit}`})`;
}

/** The table: what moved most, the first bad payloads with suspects, and each payload's changes. */
function formatTrends(view: TrendView, limit: number): string {
  const lines = [
    `${view.stream} on ${view.arch}: ${view.payloads.length} payload(s), ${view.tests.length} test(s)`,
  ];
  if (view.payloads.length === 0) {
    lines.push("no payload in the history yet: release periodics and accepted gates add them");
    return `${lines.join("\n")}\n`;
  }
  const scan = `false discovery rate ${percent(view.firstBadScan.q)} over the ${view.firstBadScan.familySize} test(s) that failed often enough to be flagged`;
  lines.push("", "first bad payloads:");
  lines.push(
    view.firstBad.length === 0
      ? `  none: no test's failure rate rose at a payload beyond chance (${scan})`
      : `  (${scan})`,
  );
  for (const finding of view.firstBad) {
    const rate = (c: { executions: number; failures: number }) => `${c.failures}/${c.executions}`;
    lines.push(
      `  ${finding.test}`,
      `    since ${finding.release}: failed ${rate(finding.before)} before, ${rate(finding.after)} from then on (false-alarm rate ${percent(finding.falseAlarmRate)})`,
      `    suspects: ${finding.suspects === null ? "changes not known" : finding.suspects.map((s) => s.tag).join(", ") || "no component changed"}`,
    );
  }
  lines.push(
    "",
    `tests, the most moved first (${Math.min(limit, view.tests.length)} of ${view.tests.length}):`,
  );
  const rows = view.tests
    .slice(0, limit)
    .map((t) => [
      t.moved === null ? "—" : `${t.moved > 0 ? "+" : ""}${t.moved}`,
      rateText(t.latest),
      rateText(t.earlier),
      t.name,
    ]);
  const header = ["moved", "newest pass rate", "earlier pass rate", "test"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    lines.push(`  ${row.map((cell, i) => (i === 3 ? cell : cell.padEnd(widths[i]!))).join("  ")}`);
  lines.push("", "payloads, newest first:");
  for (const payload of [...view.payloads].reverse()) {
    const changes = payload.changes;
    const what =
      changes === null
        ? "the oldest kept"
        : !changes.known
          ? `changes not known: ${changes.reason}`
          : changes.changes.length === 0
            ? "no component changed"
            : changes.changes.map(describeChange).join(", ");
    lines.push(`  ${payload.release}  ${payload.runs} run(s)  ${what}`);
  }
  return `${lines.join("\n")}\n`;
}
