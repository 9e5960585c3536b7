import { StoreError } from "./store-error.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function mergePatch(target: Json | undefined, patch: Json): Json {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: { [key: string]: Json } =
    target && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw invalid(`JSON pointer ${JSON.stringify(path)} does not start with "/"`);
  return path
    .slice(1)
    .split("/")
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
}

function invalid(message: string): StoreError {
  return new StoreError(`the patch is invalid: ${message}`, { code: "Invalid" });
}

interface Operation {
  op: "add" | "remove" | "replace" | "test";
  path: string;
  value?: Json;
}

function jsonPatch(document: Json, operations: Operation[]): Json {
  const root = structuredClone(document);
  for (const operation of operations) {
    const keys = pointer(operation.path);
    const last = keys.pop();
    if (last === undefined) throw invalid(`"${operation.op}" of the whole document is not supported`);
    let parent: Json = root;
    for (const key of keys) {
      const next: Json | undefined =
        parent && typeof parent === "object" ? (parent as Record<string, Json>)[key] : undefined;
      if (next === undefined) throw invalid(`path ${operation.path} does not exist`);
      parent = next;
    }
    if (!parent || typeof parent !== "object") throw invalid(`path ${operation.path} does not exist`);
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last);
      if (operation.op === "add") parent.splice(index, 0, operation.value ?? null);
      else if (operation.op === "remove") parent.splice(index, 1);
      else if (operation.op === "replace") parent[index] = operation.value ?? null;
      else if (JSON.stringify(parent[index]) !== JSON.stringify(operation.value))
        throw invalid(`test of ${operation.path} failed`);
      continue;
    }
    if (operation.op === "add" || operation.op === "replace") parent[last] = operation.value ?? null;
    else if (operation.op === "remove") {
      if (!(last in parent)) throw invalid(`path ${operation.path} does not exist`);
      delete parent[last];
    } else if (JSON.stringify(parent[last]) !== JSON.stringify(operation.value)) {
      throw invalid(`test of ${operation.path} failed`);
    }
  }
  return root;
}

/**
 * Applies a PATCH body as the API server does for its content type: JSON merge patch (RFC 7386),
 * strategic merge patch (as a merge patch: these objects have no list merge keys that matter) and
 * JSON patch (RFC 6902: add, remove, replace, test).
 */
export function applyPatch(options: { document: object; contentType: string; body: string }): object {
  const type = options.contentType.split(";")[0]!.trim();
  let patch: Json;
  try {
    patch = JSON.parse(options.body) as Json;
  } catch (error) {
    throw new StoreError(`the patch is not JSON: ${String(error)}`, { code: "Invalid", cause: error });
  }
  if (type === "application/json-patch+json") {
    if (!Array.isArray(patch)) throw invalid("a JSON patch is an array of operations");
    return jsonPatch(options.document as Json, patch as unknown as Operation[]) as object;
  }
  if (type === "application/merge-patch+json" || type === "application/strategic-merge-patch+json") {
    return mergePatch(options.document as Json, patch) as object;
  }
  throw new StoreError(`unsupported patch content type ${JSON.stringify(type)}`, { code: "Invalid" });
}
