import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import type { ListedTests } from "./run-record.ts";

/** What each arm's components listed: `listed` with the tests the records name added. */
export function listedTests(listed: ListedTests, records: Iterable<ResultRecord>): ListedTests {
  const byComponent = new Map(
    listed.map((l) => [
      `${l.arm}\0${l.component}`,
      { arm: l.arm, component: l.component, tests: new Set(l.tests) },
    ]),
  );
  for (const record of records) {
    const key = `${record.arm}\0${record.component}`;
    let entry = byComponent.get(key);
    if (!entry)
      byComponent.set(key, (entry = { arm: record.arm, component: record.component, tests: new Set() }));
    entry.tests.add(record.name);
  }
  return [...byComponent.values()].map((l) => ({ ...l, tests: [...l.tests].sort() }));
}
