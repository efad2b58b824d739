/**
 * The crash test from the command line: `npm run crash -- --kills 500 --seed 7 [--parallel 2] [--modes streaming,parallel] [--hand-overs 0.2]`.
 * Prints where the kills landed and every rule a session broke; exits 1 if any.
 */
import { parseArgs } from "node:util";
import { runCrashTest } from "./crash-run.js";

const { values } = parseArgs({ options: { kills: { type: "string", default: "500" }, seed: { type: "string", default: String(Date.now() % 100_000) }, parallel: { type: "string", default: "2" }, modes: { type: "string" }, "hand-overs": { type: "string" } } });
const kills = Number(values.kills);
const seed = Number(values.seed);
console.log(`crash test: ${kills} kills, seed ${seed} (repeat with: npm run crash -- --kills ${kills} --seed ${seed}${values.modes ? ` --modes ${values.modes}` : ""}${values["hand-overs"] ? ` --hand-overs ${values["hand-overs"]}` : ""})`);
const report = await runCrashTest({ kills, seed, parallel: Number(values.parallel), modes: values.modes?.split(",") as Array<"parallel" | "sequential" | "streaming"> | undefined, handOvers: values["hand-overs"] === undefined ? undefined : Number(values["hand-overs"]), log: (line) => console.log(`  ${line}`) });
console.log(`\n${report.kills} kills over ${report.processes} processes, ${report.sessions} sessions complete, ${report.seconds} s`);
console.log("\n| where the kill landed | kills |\n|---|---|");
for (const [place, count] of Object.entries(report.landed)) console.log(`| ${place} | ${count} |`);
console.log(report.violations.length === 0 ? "\nno rule broken" : `\n${report.violations.length} rules broken:\n${report.violations.join("\n")}`);
process.exit(report.violations.length === 0 ? 0 : 1);
