/**
 * `npm run diagram`: the agent statechart as a Mermaid `stateDiagram-v2`, generated from the
 * machine definition so the README's diagram never drifts from the code.
 *
 *   tsx scripts/diagram.ts           print the diagram
 *   tsx scripts/diagram.ts --write   rewrite README.md between <!-- diagram:start --> and <!-- diagram:end -->
 *   tsx scripts/diagram.ts --check   exit 1 when README.md's diagram is out of date
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { agentMachine } from "../src/machines/agent-machine.js";
import { DIAGRAM_END, DIAGRAM_START, extractDiagramBlock, replaceDiagramBlock, toMermaid } from "../src/inspect/mermaid.js";

const README = fileURLToPath(new URL("../README.md", import.meta.url));

function main(argv: readonly string[]): number {
	const diagram = toMermaid(agentMachine);
	if (argv.includes("--write")) {
		const readme = readFileSync(README, "utf8");
		const next = replaceDiagramBlock(readme, diagram);
		if (next === undefined) {
			console.error(`README.md has no ${DIAGRAM_START} … ${DIAGRAM_END} markers; nothing written.`);
			return 1;
		}
		if (next !== readme) writeFileSync(README, next);
		console.log(next === readme ? "README.md diagram is up to date." : "README.md diagram updated.");
		return 0;
	}
	if (argv.includes("--check")) {
		const current = extractDiagramBlock(readFileSync(README, "utf8"));
		if (current === diagram) return 0;
		console.error("README.md's statechart diagram is out of date: run `npm run diagram`.");
		return 1;
	}
	process.stdout.write(diagram);
	return 0;
}

process.exitCode = main(process.argv.slice(2));
