/**
 * The SPEC rule ids (R1…) of each state, transition and guard, read from the one-line comments
 * the machine sources put before them (`// R62: …`). The machine definitions stay free of them;
 * the live inspector lists them when a state is clicked. Keyed by the machine's state path
 * (`run.turn.requesting`), transitions by event ("" for `always`) and their index in that list.
 */
import ts from "typescript";

export interface MachineRules {
  /** State path → the rule ids of the comment before it. */
  states: Record<string, string[]>;
  /** State path → event → per transition in that list, its rule ids (its comment's, then its guard's). */
  transitions: Record<string, Record<string, string[][]>>;
}

const RULE = /\bR\d+[a-z]?\b/g;

function rulesBefore(node: ts.Node, text: string): string[] {
  const comments = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  return [...new Set(comments.flatMap((range) => text.slice(range.pos, range.end).match(RULE) ?? []))];
}

const nameOf = (name: ts.PropertyName): string | undefined => (ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : undefined);

function property(object: ts.ObjectLiteralExpression, key: string): ts.Expression | undefined {
  for (const prop of object.properties) if (ts.isPropertyAssignment(prop) && nameOf(prop.name) === key) return prop.initializer;
  return undefined;
}

/** Rules of the machine whose config is the object literal passed to `createMachine` in `source`. */
export function machineRules(source: string, machineId: string, fileName = "machine.ts"): MachineRules {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const guards = new Map<string, string[]>();
  let config: ts.ObjectLiteralExpression | undefined;
  const find = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "createMachine") {
      const arg = node.arguments[0];
      if (arg && ts.isObjectLiteralExpression(arg) && (!config || nameOfId(arg) === machineId)) config = arg;
    }
    if (ts.isPropertyAssignment(node) && nameOf(node.name) === "guards" && ts.isObjectLiteralExpression(node.initializer)) {
      for (const guard of node.initializer.properties) {
        const name = guard.name && nameOf(guard.name);
        if (name) guards.set(name, rulesBefore(guard, source));
      }
    }
    ts.forEachChild(node, find);
  };
  find(file);
  const out: MachineRules = { states: {}, transitions: {} };
  if (!config) return out;

  const transition = (node: ts.Expression, own: string[]): string[] => {
    const guard = ts.isObjectLiteralExpression(node) ? property(node, "guard") : undefined;
    const guardName = guard && ts.isStringLiteral(guard) ? guard.text : undefined;
    return [...new Set([...own, ...rulesBefore(node, source), ...((guardName && guards.get(guardName)) ?? [])])];
  };
  const list = (value: ts.Expression, own: string[]): string[][] =>
    ts.isArrayLiteralExpression(value) ? value.elements.map((element) => transition(element, [])) : [transition(value, own)];

  const walk = (state: ts.ObjectLiteralExpression, path: string): void => {
    const on = property(state, "on");
    const entries: Record<string, string[][]> = {};
    if (on && ts.isObjectLiteralExpression(on)) {
      for (const prop of on.properties) {
        const event = ts.isPropertyAssignment(prop) ? nameOf(prop.name) : undefined;
        if (event !== undefined && ts.isPropertyAssignment(prop)) entries[event] = list(prop.initializer, rulesBefore(prop, source));
      }
    }
    const always = property(state, "always");
    if (always) entries[""] = list(always, []);
    if (Object.values(entries).some((rules) => rules.some((r) => r.length > 0))) out.transitions[path] = entries;
    const states = property(state, "states");
    if (states && ts.isObjectLiteralExpression(states)) {
      for (const child of states.properties) {
        const key = ts.isPropertyAssignment(child) ? nameOf(child.name) : undefined;
        if (key === undefined || !ts.isPropertyAssignment(child) || !ts.isObjectLiteralExpression(child.initializer)) continue;
        const rules = rulesBefore(child, source);
        if (rules.length > 0) out.states[`${path}.${key}`] = rules;
        walk(child.initializer, `${path}.${key}`);
      }
    }
  };
  walk(config, machineId);
  return out;
}

function nameOfId(config: ts.ObjectLiteralExpression): string | undefined {
  const id = property(config, "id");
  return id && ts.isStringLiteral(id) ? id.text : undefined;
}
