import { readCsvRecord } from "@netstress/core/model/read-csv-record.ts";

/**
 * One `--fact` value as the binaries' flag parser (pflag's StringToString) reads it: with a single
 * `=` the whole text is one pair (`region=us-east-1,us-west-2` keeps its comma; surrounding quotes
 * are trimmed), with more it is a CSV record of pairs (`a=1,b=2` is two facts). Throws an Error
 * naming a part that is not KEY=VALUE.
 */
export function readFlagMap(text: string): Record<string, string> {
  const equals = text.split("=").length - 1;
  if (equals === 0) throw new Error(`"${text}" must be formatted as key=value`);
  const pairs = equals === 1 ? [trimQuotes(text)] : readCsvRecord(text);
  const map: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq < 0) throw new Error(`"${pair}" (in "${text}") must be formatted as key=value`);
    map[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return map;
}

/** Go's strings.Trim(s, `"`): every quote at either end. */
function trimQuotes(text: string): string {
  return text.replace(/^"+|"+$/g, "");
}
