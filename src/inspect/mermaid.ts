import type { StateMachineLike } from "../types/actor-shapes.js";
import { type StatechartEdge, type StatechartGraph, type StatechartNode, toStatechartGraph } from "./statechart-graph.js";

/**
 * Markers around the generated diagram in a Markdown file.
 *
 * @example
 * const doc = `# The chart\n\n${DIAGRAM_START}\n${DIAGRAM_END}\n`;
 * writeFileSync("chart.md", replaceDiagramBlock(doc, toMermaid(agentMachine)) ?? doc);
 */
export const DIAGRAM_START = "<!-- diagram:start -->";
/**
 * The closing marker (see {@link DIAGRAM_START}).
 *
 * @example
 * const hasDiagram = markdown.includes(DIAGRAM_START) && markdown.includes(DIAGRAM_END);
 */
export const DIAGRAM_END = "<!-- diagram:end -->";

/** Mermaid ids must be plain words: `agent.running.tool-executing` → `running_tool_executing`. */
function mermaidId(graph: StatechartGraph, nodeId: string): string {
	const relative = nodeId.startsWith(`${graph.rootId}.`) ? nodeId.slice(graph.rootId.length + 1) : nodeId;
	return relative.replace(/[^A-Za-z0-9_]/g, "_");
}

/** Ids from the root down to the node, root first. */
function ancestry(byId: Map<string, StatechartNode>, nodeId: string): string[] {
	const chain: string[] = [];
	for (let current = byId.get(nodeId); current; current = current.parentId ? byId.get(current.parentId) : undefined) {
		chain.unshift(current.id);
	}
	return chain;
}

/**
 * Where a transition is written: the innermost state containing both ends. Mermaid creates a
 * new, empty state when a composite block mentions a state from outside it, so cross-level
 * transitions have to be written in their common ancestor's block.
 */
function commonAncestor(byId: Map<string, StatechartNode>, a: string, b: string): string {
	const left = ancestry(byId, a);
	const right = ancestry(byId, b);
	let common = left[0] ?? a;
	for (let i = 0; i < Math.min(left.length, right.length); i++) {
		if (left[i] !== right[i]) break;
		common = left[i] ?? common;
	}
	// A transition between a state and its own ancestor belongs to the ancestor's parent block.
	if (common === a || common === b) return byId.get(common)?.parentId ?? common;
	return common;
}

interface DiagramLine {
	sourceId: string;
	targetId: string;
	label: string;
}

/**
 * The drawable transitions: targetless ones are dropped (they do not move the machine),
 * transitions declared on the root are drawn from each top-level state they can leave (a
 * root is not a state a diagram can draw an arrow from), and duplicates (guarded
 * alternatives with the same target and event) are merged.
 */
function drawableTransitions(graph: StatechartGraph, byId: Map<string, StatechartNode>): DiagramLine[] {
	const lines: DiagramLine[] = [];
	const seen = new Set<string>();
	const add = (sourceId: string, edge: StatechartEdge & { targetId: string }) => {
		const key = `${sourceId}\u0000${edge.targetId}\u0000${edge.label}`;
		if (seen.has(key)) return;
		seen.add(key);
		lines.push({ sourceId, targetId: edge.targetId, label: edge.label });
	};
	for (const edge of graph.edges) {
		if (edge.targetId === undefined) continue;
		const targeted = edge as StatechartEdge & { targetId: string };
		if (edge.sourceId === graph.rootId) {
			for (const childId of byId.get(graph.rootId)?.childIds ?? []) {
				const child = byId.get(childId);
				if (!child || child.id === edge.targetId || child.type === "final") continue;
				add(child.id, targeted);
			}
			continue;
		}
		add(edge.sourceId, targeted);
	}
	return lines;
}

/**
 * A Mermaid `stateDiagram-v2` of a machine: nested states as composite blocks, `[*] -->` for
 * initial states, `--> [*]` for final ones, transitions labelled with their event type, and
 * eventless transitions labelled with their guard (`[eventsDelivered && runAborted]`).
 * Deterministic, so it can be checked into a README and compared in tests.
 *
 * @example
 * import { agentMachine } from "agentchart/machine";
 * console.log(toMermaid(agentMachine));
 * // stateDiagram-v2
 * //   [*] --> idle
 * //   idle --> running : prompt
 * //   ...
 */
export function toMermaid(machineOrGraph: StateMachineLike | StatechartGraph): string {
	const graph = "nodes" in machineOrGraph ? machineOrGraph : toStatechartGraph(machineOrGraph);
	const byId = new Map(graph.nodes.map((node) => [node.id, node]));
	const transitionsByBlock = new Map<string, DiagramLine[]>();
	for (const line of drawableTransitions(graph, byId)) {
		const block = commonAncestor(byId, line.sourceId, line.targetId);
		const list = transitionsByBlock.get(block) ?? [];
		list.push(line);
		transitionsByBlock.set(block, list);
	}

	const out: string[] = ["stateDiagram-v2"];
	const id = (nodeId: string) => mermaidId(graph, nodeId);
	const writeBlock = (node: StatechartNode, indent: string): void => {
		for (const childId of node.childIds) {
			const child = byId.get(childId);
			if (!child) continue;
			const childMermaidId = id(child.id);
			if (childMermaidId !== child.key) out.push(`${indent}state "${child.key}" as ${childMermaidId}`);
		}
		if (node.initialId) out.push(`${indent}[*] --> ${id(node.initialId)}`);
		for (const childId of node.childIds) {
			const child = byId.get(childId);
			if (!child) continue;
			if (child.childIds.length > 0) {
				out.push(`${indent}state ${id(child.id)} {`);
				writeBlock(child, `${indent}  `);
				out.push(`${indent}}`);
			}
		}
		for (const line of transitionsByBlock.get(node.id) ?? []) {
			out.push(`${indent}${id(line.sourceId)} --> ${id(line.targetId)} : ${line.label}`);
		}
		for (const childId of node.childIds) {
			if (byId.get(childId)?.type === "final") out.push(`${indent}${id(childId)} --> [*]`);
		}
	};
	const root = byId.get(graph.rootId);
	if (root) writeBlock(root, "  ");
	return `${out.join("\n")}\n`;
}

/**
 * Replaces the fenced Mermaid block between {@link DIAGRAM_START} and {@link DIAGRAM_END} in a
 * Markdown text. Returns undefined when the markers are missing, so callers can tell
 * "nothing to update" from "updated".
 *
 * @example
 * const next = replaceDiagramBlock(readme, toMermaid(agentMachine));
 * if (next !== undefined) writeFileSync("README.md", next);
 */
export function replaceDiagramBlock(markdown: string, diagram: string): string | undefined {
	const start = markdown.indexOf(DIAGRAM_START);
	const end = markdown.indexOf(DIAGRAM_END);
	if (start < 0 || end < start) return undefined;
	const before = markdown.slice(0, start + DIAGRAM_START.length);
	const after = markdown.slice(end);
	return `${before}\n\`\`\`mermaid\n${diagram}\`\`\`\n${after}`;
}

/**
 * The Mermaid text currently between {@link DIAGRAM_START} and {@link DIAGRAM_END} (without the code fence), or
 * undefined when the markers are missing.
 *
 * @example
 * const current = extractDiagramBlock(readFileSync("README.md", "utf8"));
 * const upToDate = current === toMermaid(agentMachine);
 */
export function extractDiagramBlock(markdown: string): string | undefined {
	const start = markdown.indexOf(DIAGRAM_START);
	const end = markdown.indexOf(DIAGRAM_END);
	if (start < 0 || end < start) return undefined;
	const inner = markdown.slice(start + DIAGRAM_START.length, end);
	const match = /```mermaid\n([\s\S]*?)```/.exec(inner);
	return match ? match[1] : "";
}
