import type { KubeObject } from "./object-store.ts";
import type { PrinterColumn, ResourceType } from "./resource-types.ts";

/** An age as kubectl shows it: 45s, 3m12s, 42m, 5h3m, 36h, 4d2h, 90d. */
function humanAge(since: string | undefined, now: number): string {
  if (!since) return "<unknown>";
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return `${minutes}m${seconds % 60 ? `${seconds % 60}s` : ""}`;
  if (hours < 3) return `${minutes}m`;
  if (hours < 8) return `${hours}h${minutes % 60 ? `${minutes % 60}m` : ""}`;
  if (hours < 48) return `${hours}h`;
  if (days < 8) return `${days}d${hours % 24 ? `${hours % 24}h` : ""}`;
  return `${days}d`;
}

/**
 * The `meta.k8s.io/v1` Table that kubectl asks for (`Accept: application/json;as=Table;…`): NAME,
 * the type's printer columns with AGE, and each row's object as PartialObjectMetadata (or the whole
 * object with `includeObject=Object`).
 */
export function tableView(options: {
  type: ResourceType;
  items: KubeObject[];
  resourceVersion: string;
  includeObject: string | null;
}): object {
  const now = Date.now();
  const given = options.type.columns ?? [];
  const columns: PrinterColumn[] = given.some((c) => c.name === "Age")
    ? given
    : [...given, { name: "Age", type: "date", cell: (o) => o.metadata.creationTimestamp }];
  const cell = (column: PrinterColumn, item: KubeObject) => {
    const value = column.cell(item);
    if (column.type === "date") return humanAge(typeof value === "string" ? value : undefined, now);
    return value === undefined || value === null ? "" : value;
  };
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: { resourceVersion: options.resourceVersion },
    columnDefinitions: [
      { name: "Name", type: "string", format: "name", description: "Name of the object", priority: 0 },
      ...columns.map((c) => ({
        name: c.name,
        type: c.type === "date" ? "string" : c.type,
        format: "",
        description: c.name,
        priority: 0,
      })),
    ],
    rows: options.items.map((item) => ({
      cells: [item.metadata.name, ...columns.map((c) => cell(c, item))],
      object:
        options.includeObject === "Object"
          ? item
          : options.includeObject === "None"
            ? undefined
            : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: item.metadata },
    })),
  };
}
