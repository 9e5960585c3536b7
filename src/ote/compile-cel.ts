import { Environment } from "@marcbachmann/cel-js";

export type CelVariables = Record<string, string>;

/**
 * Compiles a CEL expression against declared variables (name → CEL type) into a predicate: true
 * only when the expression evaluates to boolean true, as openshift-tests-extension decides. An
 * expression that does not parse or type-check throws here, once, with the checker's message;
 * one that fails at evaluation (a missing map key, say) throws when called.
 */
export function compileCel<T extends Record<string, unknown>>(options: {
  expression: string;
  variables: CelVariables;
}): (values: T) => boolean {
  const environment = new Environment();
  for (const [name, type] of Object.entries(options.variables)) environment.registerVariable(name, type);
  const checked = environment.check(options.expression);
  if (!checked.valid) {
    const reason = checked.error?.message.split("\n")[0] ?? "invalid expression";
    throw new Error(`CEL expression ${JSON.stringify(options.expression)} is invalid: ${reason}`);
  }
  const program = environment.parse(options.expression);
  return (values) => program(values) === true;
}
