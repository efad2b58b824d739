import { readFileSync } from "node:fs";
import { and, not, or, type AnyStateNode } from "xstate";
import { describe, expect, it } from "vitest";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { describeGuard, toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { extractDiagramBlock, replaceDiagramBlock, toMermaid } from "../../src/inspect/mermaid.js";
import { layoutStatechart } from "../../src/inspect/layout.js";

/** Every state id of the machine, read straight from XState's state nodes. */
function allStateIds(node: AnyStateNode = agentMachine.root): string[] {
	return [node.id, ...Object.values(node.states).flatMap((child) => allStateIds(child as AnyStateNode))];
}

describe("the statechart graph", () => {
	const graph = toStatechartGraph(agentMachine);

	it("has every state of the machine, parents before children", () => {
		expect(graph.nodes.map((node) => node.id).sort()).toEqual(allStateIds().sort());
		const seen = new Set<string>();
		for (const node of graph.nodes) {
			if (node.parentId) expect(seen.has(node.parentId)).toBe(true);
			seen.add(node.id);
		}
	});

	it("keeps eventless transitions with their guards as labels", () => {
		const always = graph.edges.filter((edge) => edge.kind === "always");
		expect(always.length).toBeGreaterThan(0);
		for (const edge of always) expect(edge.label).toBe(edge.guard ? `[${edge.guard}]` : "always");
		expect(graph.edges).toContainEqual(expect.objectContaining({ sourceId: "agent.idle", targetId: "agent.running", eventType: "prompt", label: "prompt" }));
	});

	it("records targetless transitions without a target", () => {
		const steer = graph.edges.find((edge) => edge.sourceId === "agent" && edge.eventType === "steer");
		expect(steer).toBeDefined();
		expect(steer?.targetId).toBeUndefined();
	});

	it("gives every edge a unique id", () => {
		expect(new Set(graph.edges.map((edge) => edge.id)).size).toBe(graph.edges.length);
	});

	it("reads and/or/not guards without evaluating them", () => {
		expect(describeGuard("ready")).toBe("ready");
		expect(describeGuard(and(["a", not("b")]))).toBe("a && !b");
		expect(describeGuard(and(["a", or(["b", "c"])]))).toBe("a && (b || c)");
		expect(describeGuard(undefined)).toBeUndefined();
	});
});

describe("the Mermaid diagram", () => {
	const diagram = toMermaid(agentMachine);

	it("is a stateDiagram-v2 with nested states, initial markers and labelled transitions", () => {
		expect(diagram.startsWith("stateDiagram-v2\n")).toBe(true);
		expect(diagram).toContain("[*] --> idle");
		expect(diagram).toContain("state running {");
		expect(diagram).toContain("[*] --> running_run_starting");
		expect(diagram).toContain("idle --> running : prompt");
		expect(diagram).toMatch(/running_before_call --> running_streaming : \[eventsDelivered\]/);
		expect(diagram).toContain("ended --> [*]");
	});

	it("mentions every state of the machine", () => {
		for (const id of allStateIds().slice(1)) {
			const mermaidId = id.slice("agent.".length).replace(/[^A-Za-z0-9_]/g, "_");
			// As a whole id: a parent's id is a prefix of its children's ("running" in "running_streaming").
			expect(diagram).toMatch(new RegExp(`(^|[^A-Za-z0-9_])${mermaidId}($|[^A-Za-z0-9_])`, "m"));
		}
	});

	it("is deterministic", () => {
		expect(toMermaid(agentMachine)).toBe(diagram);
	});

	it("replaces only the block between the README markers", () => {
		const readme = "intro\n<!-- diagram:start -->\nold\n<!-- diagram:end -->\noutro\n";
		const next = replaceDiagramBlock(readme, diagram);
		expect(next).toBeDefined();
		expect(next?.startsWith("intro\n<!-- diagram:start -->\n```mermaid\n")).toBe(true);
		expect(next?.endsWith("```\n<!-- diagram:end -->\noutro\n")).toBe(true);
		expect(extractDiagramBlock(next ?? "")).toBe(diagram);
		expect(replaceDiagramBlock("no markers", diagram)).toBeUndefined();
	});

	it("matches the diagram in docs/machine.md (run `npm run diagram` after changing the machine)", () => {
		// The markers are there: a guide that lost them would otherwise pass this by skipping it.
		const current = extractDiagramBlock(readFileSync(new URL("../../docs/machine.md", import.meta.url), "utf8"));
		expect(current).toBe(diagram);
	});
});

describe("the layout", () => {
	const layout = layoutStatechart(toStatechartGraph(agentMachine));
	const byId = new Map(layout.states.map((state) => [state.id, state]));
	const graph = toStatechartGraph(agentMachine);

	it("places every state inside its parent", () => {
		expect(layout.states).toHaveLength(graph.nodes.length);
		for (const node of graph.nodes) {
			if (!node.parentId) continue;
			const child = byId.get(node.id);
			const parent = byId.get(node.parentId);
			if (!child || !parent) throw new Error(`missing ${node.id}`);
			expect(child.x).toBeGreaterThanOrEqual(parent.x);
			expect(child.y).toBeGreaterThanOrEqual(parent.y);
			expect(child.x + child.width).toBeLessThanOrEqual(parent.x + parent.width + 0.5);
			expect(child.y + child.height).toBeLessThanOrEqual(parent.y + parent.height + 0.5);
		}
	});

	it("does not overlap sibling states", () => {
		for (const node of graph.nodes) {
			const siblings = node.childIds.map((id) => byId.get(id)).filter((state) => state !== undefined);
			for (let i = 0; i < siblings.length; i++) {
				for (let j = i + 1; j < siblings.length; j++) {
					const a = siblings[i]!;
					const b = siblings[j]!;
					const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
					expect(apart, `${a.id} overlaps ${b.id}`).toBe(true);
				}
			}
		}
	});

	it("draws every transition to another state, each with a route, and lists those that re-enter their state in its box", () => {
		const drawn = new Set(layout.transitions.flatMap((transition) => transition.edgeIds));
		const listed = new Set(layout.states.flatMap((state) => state.internalEdgeIds));
		for (const edge of graph.edges) {
			if (edge.targetId === undefined) continue;
			if (edge.targetId === edge.sourceId) expect(listed.has(edge.id), edge.id).toBe(true);
			else expect(drawn.has(edge.id), edge.id).toBe(true);
		}
		// The chart has one (a manual compaction a restart interrupted is made again).
		expect(graph.edges.some((edge) => edge.targetId === edge.sourceId)).toBe(true);
		for (const transition of layout.transitions) expect(transition.points.length).toBeGreaterThanOrEqual(2);
	});
});
