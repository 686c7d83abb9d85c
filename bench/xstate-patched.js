// node bench/xstate-patched.js <dir>
//
// A throwaway copy of this package's build whose XState holds two closures in a local before
// storing them in a property, for measuring what that change would buy (issue 40, item 4):
//
//   BENCH_SESSIONS_DIST=<dir>/dist node --expose-gc bench/sessions.js
//
// V8's parser allocates a function literal assigned straight to a property (`o.f = () => …`) in the
// old generation, as it would a method. XState 5.33 does that on every microstep
// (`actorScope.actionExecutor = action => …`) and eight times on every `enqueueActions`
// (`enqueue.assign = (...args) => …`, …). Such a closure is dead at once, but until the next full
// collection it keeps what it closes over (the step's actions and their arguments, the snapshot)
// alive through every scavenge: `npm run bench:gc` shows it on a bare machine. The same literal held
// in a `const` first is an ordinary young closure. Nothing else changes; the package never ships
// this copy (XState is a dependency: the change belongs upstream).
//
// <dir> gets `dist/` (a copy of this package's build) and `node_modules/` (links to this package's,
// but for a patched copy of `xstate`). Run `npm run build` first.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const target = process.argv[2] ? resolve(process.argv[2]) : undefined;
function refuse(message) {
  console.error(message);
  process.exit(2);
}
if (!target) refuse("usage: node bench/xstate-patched.js <dir>");
if (!existsSync(join(root, "dist/index.js"))) refuse("no dist/: run npm run build first");

/** Each edit: a file of XState's CommonJS build (the one Node loads), the text it has, the text it gets. */
const edits = [
  {
    file: /^raise-[0-9a-f]+\.cjs\.js$/,
    from: "  actorScope.actionExecutor = action => {\n    actions.push(action);\n    originalExecutor(action);\n  };",
    to: "  const collecting = action => {\n    actions.push(action);\n    originalExecutor(action);\n  };\n  actorScope.actionExecutor = collecting;",
  },
  ...["assign", "cancel", "raise", "sendTo", "sendParent", "spawnChild", "stopChild", "emit"].map((name) => ({
    file: /^log-[0-9a-f]+\.cjs\.js$/,
    // Each helper's literal is hoisted into a const, stored in the property on the next line.
    from: new RegExp(`  enqueue\\.${name} = (\\(\\.\\.\\.args\\) => \\{[\\s\\S]*?\\n  \\});`),
    to: (_, literal) => `  const ${name}Helper = ${literal};\n  enqueue.${name} = ${name}Helper;`,
  })),
];

rmSync(target, { recursive: true, force: true });
mkdirSync(join(target, "node_modules"), { recursive: true });
cpSync(join(root, "dist"), join(target, "dist"), { recursive: true });
const modules = join(root, "node_modules");
for (const name of readdirSync(modules)) {
  if (name !== "xstate") symlinkSync(join(modules, name), join(target, "node_modules", name));
}
const xstate = join(target, "node_modules/xstate");
cpSync(join(modules, "xstate"), xstate, { recursive: true });

const distOfXState = join(xstate, "dist");
for (const edit of edits) {
  const file = readdirSync(distOfXState).find((name) => edit.file.test(name));
  if (!file) throw new Error(`xstate/dist has no file matching ${edit.file}: another XState version?`);
  const path = join(distOfXState, file);
  const text = readFileSync(path, "utf8");
  const next = text.replace(edit.from, edit.to);
  // An edit that finds nothing would measure an unpatched copy under the patched copy's name.
  if (next === text) throw new Error(`${file}: the text to change was not found (XState ${JSON.parse(readFileSync(join(xstate, "package.json"), "utf8")).version})`);
  writeFileSync(path, next);
}
console.log(`${target}: this build with XState's two old-generation closures through locals (${edits.length} edits)`);
console.log(`BENCH_SESSIONS_DIST=${join(target, "dist")} node --expose-gc bench/sessions.js`);
