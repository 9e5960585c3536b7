import { isAbsolute, relative, resolve } from "node:path";

/** Whether `path` names something under `dir` (never `dir` itself), by resolved names alone. */
export function isWithin(dir: string, path: string): boolean {
  const inside = relative(resolve(dir), resolve(path));
  return inside !== "" && !inside.startsWith("..") && !isAbsolute(inside);
}
