import type { KubeObject } from "./object-store.ts";
import { StoreError } from "./store-error.ts";

const FIELDS: Record<string, (o: KubeObject) => string> = {
  "metadata.name": (o) => o.metadata.name,
  "metadata.namespace": (o) => o.metadata.namespace,
};

/** Field selectors on name and namespace (`metadata.name=x`, `metadata.namespace!=y`), as informers and `kubectl get -w NAME` send. */
export function parseFieldSelector(text: string | null): (object: KubeObject) => boolean {
  const terms = (text ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const match = /^([a-z.]+)(!=|==|=)(.*)$/.exec(term);
      const field = match && FIELDS[match[1]!];
      if (!match || !field) {
        throw new StoreError(
          `field selector ${JSON.stringify(term)} is not supported: use metadata.name or metadata.namespace with =, == or !=`,
          { code: "Invalid" },
        );
      }
      const [, , op, value] = match;
      return (o: KubeObject) => (field(o) === value) === (op !== "!=");
    });
  return (object) => terms.every((matches) => matches(object));
}
