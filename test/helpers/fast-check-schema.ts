import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { expect } from "vitest";

/** A field's valid values most of the time, and now and then one of its near misses. */
export const mostly = <T>(valid: fc.Arbitrary<T>, ...misses: unknown[]) =>
  fc.oneof({ arbitrary: valid, weight: 30 }, { arbitrary: fc.constantFrom(...misses), weight: 1 });

/** The objects of `record` with up to two keys of no meaning to any schema added. */
export const withStrayKeys = (record: fc.Arbitrary<Record<string, unknown>>) =>
  record
    .chain((value) =>
      fc.tuple(
        fc.constant(value),
        fc.dictionary(
          fc.string().map((k) => `x-${k}`),
          fc.jsonValue(),
          { maxKeys: 2 },
        ),
      ),
    )
    .map(([value, extra]) => ({ ...extra, ...value }) as Record<string, unknown>);

/**
 * Holds a fast check to its schema: over candidates (and now and then anything at all), the check
 * accepts exactly the values the schema accepts unchanged, no default filled in. The generator
 * must reach both sides of the line.
 */
export function expectAcceptsWhatSchemaKeeps(options: {
  check: (value: unknown) => boolean;
  schema: { safeParse: (value: unknown) => { success: boolean; data?: unknown } };
  candidate: fc.Arbitrary<unknown>;
}): void {
  let accepted = 0;
  fc.assert(
    fc.property(
      fc.oneof({ arbitrary: options.candidate, weight: 9 }, { arbitrary: fc.anything(), weight: 1 }),
      (value) => {
        const parsed = options.schema.safeParse(value);
        const unchanged = parsed.success && isDeepStrictEqual(parsed.data, value);
        expect(options.check(value)).toBe(unchanged);
        if (unchanged) accepted++;
      },
    ),
    { numRuns: 5000 },
  );
  expect(accepted).toBeGreaterThan(500);
}
