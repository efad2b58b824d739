/**
 * `npm run diagram`: the agent statechart as a Mermaid `stateDiagram-v2`, generated from the
 * machine definition so the diagram in docs/machine.md never drifts from the code.
 *
 *   tsx scripts/diagram.ts           print the diagram
 *   tsx scripts/diagram.ts --write   rewrite docs/machine.md between <!-- diagram:start --> and <!-- diagram:end -->
 *   tsx scripts/diagram.ts --check   exit 1 when docs/machine.md's diagram is out of date
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { agentMachine } from "../src/machines/agent-machine.js";
import { DIAGRAM_END, DIAGRAM_START, extractDiagramBlock, replaceDiagramBlock, toMermaid } from "../src/inspect/mermaid.js";

const MACHINE_DOC = fileURLToPath(new URL("../docs/machine.md", import.meta.url));

function main(argv: readonly string[]): number {
	const diagram = toMermaid(agentMachine);
	if (argv.includes("--write")) {
		const doc = readFileSync(MACHINE_DOC, "utf8");
		const next = replaceDiagramBlock(doc, diagram);
		if (next === undefined) {
			console.error(`docs/machine.md has no ${DIAGRAM_START} … ${DIAGRAM_END} markers; nothing written.`);
			return 1;
		}
		if (next !== doc) writeFileSync(MACHINE_DOC, next);
		console.log(next === doc ? "docs/machine.md's diagram is up to date." : "docs/machine.md's diagram updated.");
		return 0;
	}
	if (argv.includes("--check")) {
		const current = extractDiagramBlock(readFileSync(MACHINE_DOC, "utf8"));
		if (current === diagram) return 0;
		console.error("docs/machine.md's statechart diagram is out of date: run `npm run diagram`.");
		return 1;
	}
	process.stdout.write(diagram);
	return 0;
}

process.exitCode = main(process.argv.slice(2));
