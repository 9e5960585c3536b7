import { LabError } from "./lab-error.ts";

declare const labNameBrand: unique symbol;
/** A lab's name, checked: it prefixes the lab's network namespaces and names its state directory. */
export type LabName = string & { readonly [labNameBrand]: true };

/** A lower-case letter then up to 11 letters or digits: short enough for interface names built from it. */
export const LAB_NAME = /^[a-z][a-z0-9]{0,11}$/;

/**
 * Checks a lab's name once, where it comes in (the command line, startLab), so that what builds a
 * namespace name or a path under the lab's state directory from it (removing them as root) can
 * only be given one that stays there: `..` or `a/b` never reach a path.
 */
export function parseLabName(text: string): LabName {
  if (!LAB_NAME.test(text)) {
    throw new LabError(
      `a lab's name is a lower-case letter then up to 11 letters or digits (it prefixes every namespace), not ${JSON.stringify(text)}`,
      { code: "BadLabOptions" },
    );
  }
  return text as LabName;
}
