/**
 * Prints how agentchart differs from pi in each scenario (or the ones whose name contains an
 * argument): per aspect "same" or the difference, with the event-order diff.
 *
 * Run: `npx tsx test/coding-agent/report.ts [name filter...]`; add `--pi-twice` to compare pi
 * with itself instead (to check that a scenario is deterministic).
 */
import { type Aspect, explainDifference, recordDifferences } from "./compare.js";
import { killAllChildren } from "./harness.js";
import { loadSignature } from "./load-signature.js";
import { observeRaw, runOnBothEngines } from "./observe.js";
import { MODE_SCENARIOS } from "./mode-scenarios.js";
import { SCENARIOS } from "./scenarios.js";
import { QUEUE_SCENARIOS } from "./queue-scenarios.js";
import { SESSION_SCENARIOS } from "./session-scenarios.js";
import { normalizeObservation } from "./normalize.js";

const args = process.argv.slice(2);
const piTwice = args.includes("--pi-twice");
const filters = args.filter((arg) => !arg.startsWith("--"));
const ASPECTS: Aspect[] = ["stdout", "event order", "event content", "events", "session", "requests"];

try {
	for (const scenario of [...SCENARIOS, ...MODE_SCENARIOS, ...SESSION_SCENARIOS, ...QUEUE_SCENARIOS]) {
		if (filters.length > 0 && !filters.some((filter) => scenario.name.includes(filter))) continue;
		const { expected, actual } = piTwice
			? { expected: normalizeObservation(await observeRaw(scenario, "pi")), actual: normalizeObservation(await observeRaw(scenario, "pi")) }
			: await runOnBothEngines(scenario).then((run) => ({ expected: run.expected, actual: run.agentchart }));
		console.log(`\n=== ${scenario.name}`);
		const signatures = { expected: loadSignature(expected.records), actual: loadSignature(actual.records) };
		if (signatures.expected || signatures.actual) console.log(`  load signature: first ${signatures.expected ?? "none"}; second ${signatures.actual ?? "none"}`);
		for (const aspect of ASPECTS) {
			const difference = explainDifference(expected, actual, aspect);
			console.log(difference === "" ? `  ${aspect}: same` : `  ${aspect}: DIFFERENT\n${difference.replace(/^/gm, "      ")}`);
		}
		const keyOrder = recordDifferences(expected.records, actual.records).filter((line) => line.startsWith("key order only"));
		if (keyOrder.length > 0) console.log(`  ${keyOrder.join("")}`);
		if (actual.stderr.trim() !== "" || expected.stderr.trim() !== "") {
			console.log(`  stderr pi: ${expected.stderr.trim().slice(0, 500)}\n  stderr other: ${actual.stderr.trim().slice(0, 500)}`);
		}
	}
} finally {
	killAllChildren();
}
