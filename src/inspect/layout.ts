import dagre, { type EdgeLabel } from "@dagrejs/dagre";
import type { StatechartEdge, StatechartGraph, StatechartNode } from "./statechart-graph.js";

/**
 * A point in layout coordinates (pixels, origin top-left).
 *
 * @example
 * const path = (points: LayoutPoint[]) => points.map(({ x, y }, index) => `${index === 0 ? "M" : "L"}${x},${y}`).join(" ");
 */
export interface LayoutPoint {
	x: number;
	y: number;
}

/**
 * A state placed on the canvas. `x`/`y` is its top-left corner, in absolute coordinates.
 *
 * @example
 * const boxes = layoutStatechart(toStatechartGraph(agentMachine)).states.map((state: LaidOutState) => `${state.id} at ${state.x},${state.y}`);
 */
export interface LaidOutState {
	id: string;
	key: string;
	type: StatechartNode["type"];
	depth: number;
	x: number;
	y: number;
	width: number;
	height: number;
	/** Events handled without leaving the state (targetless transitions, and those that re-enter it), for the box's footer. */
	internalEvents: string[];
	/** Ids of the graph edges listed in `internalEvents`, same order. */
	internalEdgeIds: string[];
	/** Invoked actors (`stream`, `preflight`). */
	invokes: string[];
	description?: string | undefined;
	/** A compound state drawn closed: its states (this many, at any depth) are hidden inside it. */
	collapsed?: { hiddenStates: number } | undefined;
}

/**
 * One label line of a drawn transition and the graph edge it stands for.
 *
 * @example
 * const labels = layout.transitions.flatMap((transition) => transition.lines.map((line: TransitionLabelLine) => line.text));
 */
export interface TransitionLabelLine {
	edgeId: string;
	text: string;
}

/**
 * A drawn arrow. Guarded alternatives between the same two states share one arrow, with
 * one label line each, so the chart stays readable; `edgeIds` maps back to the graph.
 *
 * @example
 * for (const transition of layout.transitions) console.log(transition.sourceId, "→", transition.targetId, transition.lines.map((line) => line.text));
 */
export interface LaidOutTransition {
	id: string;
	edgeIds: string[];
	sourceId: string;
	/** The state the arrow points to (a compound state for transitions into it). */
	targetId: string;
	kind: StatechartEdge["kind"];
	lines: TransitionLabelLine[];
	points: LayoutPoint[];
	/** Centre of the label block. */
	label: LayoutPoint & { width: number; height: number };
}

/**
 * The dot and arrow that mark a compound state's initial child.
 *
 * @example
 * for (const marker of layout.initials) console.log(`${marker.parentId} starts in ${marker.targetId}`);
 */
export interface InitialMarker {
	parentId: string;
	targetId: string;
	points: LayoutPoint[];
}

/**
 * Options of {@link layoutStatechart}.
 *
 * @example
 * const options: StatechartLayoutOptions = { collapsed: ["agent.running"] };
 * const layout = layoutStatechart(graph, options);
 */
export interface StatechartLayoutOptions {
	/**
	 * Compound states to draw closed, as one box: their inner states are not laid out, and
	 * transitions into or out of them end on the closed box.
	 */
	collapsed?: Iterable<string> | undefined;
}

/**
 * The whole positioned chart, ready to be drawn as SVG.
 *
 * @example
 * const layout: StatechartLayout = layoutStatechart(toStatechartGraph(agentMachine));
 * console.log(`${layout.width}×${layout.height}, ${layout.states.length} states`);
 */
export interface StatechartLayout {
	width: number;
	height: number;
	states: LaidOutState[];
	transitions: LaidOutTransition[];
	initials: InitialMarker[];
}

/**
 * Text metrics the layout assumes; the visualizer draws with a monospace font of this size.
 *
 * @example
 * context.font = `${LAYOUT_FONT.size}px monospace`; // draw labels the way the layout measured them
 */
export const LAYOUT_FONT = { size: 12, charWidth: 7.3, lineHeight: 15 } as const;

const PADDING = 14;
const HEADER = 26;
const INITIAL_DOT = 10;

function textWidth(text: string): number {
	return Math.ceil(text.length * LAYOUT_FONT.charWidth);
}

/** Long guard labels wrap before `&&`/`||` so arrows do not get pushed apart by one line. */
function wrapLabel(text: string): string[] {
	if (text.length <= 28) return [text];
	const parts = text.split(/ (?=&&|\|\|)/);
	return parts.length > 1 ? parts.map((part, index) => (index === 0 ? part : `  ${part}`)) : [text];
}

interface Box {
	width: number;
	height: number;
	/** Child positions relative to this box's top-left. */
	children: Map<string, LayoutPoint>;
	/** Arrows drawn inside this box, points relative to its top-left. */
	arrows: { drawn: Omit<LaidOutTransition, "points" | "label">; points: LayoutPoint[]; label: LaidOutTransition["label"] }[];
	initial?: { targetId: string; points: LayoutPoint[] };
}

/**
 * Lays out a statechart for drawing (also in the visualizer page, when a compound state is
 * closed or opened): each compound state's children are placed by dagre's
 * layered algorithm (top to bottom), bottom-up so a compound state's size is known before its
 * parent is laid out. Transitions between states in different compound states are routed at
 * their common ancestor's level and then re-attached to their real end states. Laying out
 * level by level keeps dagre on flat graphs, where it is robust (its compound mode mishandles
 * edges that end on a cluster, like `idle → running`).
 *
 * @example
 * const layout = layoutStatechart(toStatechartGraph(agentMachine));
 * for (const state of layout.states) console.log(state.id, state.x, state.y);
 *
 * @example
 * // `running` as one closed box: a smaller chart, its transitions end on the box.
 * layoutStatechart(graph, { collapsed: ["agent.running"] });
 */
export function layoutStatechart(graph: StatechartGraph, options: StatechartLayoutOptions = {}): StatechartLayout {
	const byId = new Map(graph.nodes.map((node) => [node.id, node]));
	const collapsed = new Set(options.collapsed ?? []);
	collapsed.delete(graph.rootId);
	const isExpanded = (node: StatechartNode) => node.childIds.length > 0 && !collapsed.has(node.id);
	// The state a node is drawn as: itself, or the outermost closed state around it.
	const visibleId = (nodeId: string): string => {
		let visible = nodeId;
		for (let current = byId.get(nodeId); current?.parentId !== undefined; current = byId.get(current.parentId)) {
			if (collapsed.has(current.parentId)) visible = current.parentId;
		}
		return visible;
	};
	const descendants = (node: StatechartNode): number =>
		node.childIds.reduce((sum, childId) => {
			const child = byId.get(childId);
			return sum + 1 + (child ? descendants(child) : 0);
		}, 0);
	const internalByNode = new Map<string, StatechartEdge[]>();
	// Targetless transitions, and those that re-enter their own state: a line in the state's box
	// (a loop dagre would draw beside the box, apart from it, reads as a stray line).
	const isInternal = (edge: StatechartEdge) => edge.targetId === undefined || edge.targetId === edge.sourceId;
	for (const edge of graph.edges) {
		if (!isInternal(edge)) continue;
		const list = internalByNode.get(edge.sourceId) ?? [];
		list.push(edge);
		internalByNode.set(edge.sourceId, list);
	}
	const internalLines = (nodeId: string) => {
		const seen = new Map<string, string>();
		for (const edge of internalByNode.get(nodeId) ?? []) if (!seen.has(edge.eventType)) seen.set(edge.eventType, edge.id);
		return { events: [...seen.keys()], ids: [...seen.values()] };
	};

	// Child of `ancestorId` that contains `nodeId` (or is it).
	const childUnder = (ancestorId: string, nodeId: string): string | undefined => {
		let current = byId.get(nodeId);
		while (current && current.parentId !== ancestorId) current = current.parentId ? byId.get(current.parentId) : undefined;
		return current?.id;
	};

	// Transitions with a target, root transitions fanned out to the top-level states they leave.
	// Ends inside a closed state are moved to it; a transition within one is not drawn.
	const drawable: { edge: StatechartEdge; sourceId: string; targetId: string }[] = [];
	for (const edge of graph.edges) {
		if (edge.targetId === undefined || isInternal(edge)) continue;
		const targetId = visibleId(edge.targetId);
		if (edge.sourceId === graph.rootId) {
			for (const childId of byId.get(graph.rootId)?.childIds ?? []) {
				if (childId === targetId || byId.get(childId)?.type === "final") continue;
				drawable.push({ edge, sourceId: childId, targetId });
			}
		} else {
			const sourceId = visibleId(edge.sourceId);
			if (sourceId !== targetId) drawable.push({ edge, sourceId, targetId });
		}
	}

	const boxes = new Map<string, Box>();
	const leafSize = (node: StatechartNode) => {
		const internal = internalLines(node.id).events;
		const invokes = node.invokes.map((invoke) => `invoke ${invoke.id}`);
		const hidden = node.childIds.length > 0 ? [`+${descendants(node)} states`] : [];
		const lines = [node.key, ...hidden, ...invokes, ...internal.map((event) => `⟲ ${event}`)];
		const width = Math.max(90, ...lines.map((line) => textWidth(line) + 2 * PADDING));
		const height = 24 + (lines.length - 1) * LAYOUT_FONT.lineHeight + 12;
		return { width, height };
	};

	const layoutCompound = (node: StatechartNode): Box => {
		const g = new dagre.graphlib.Graph({ multigraph: true });
		g.setGraph({ rankdir: "TB", nodesep: 36, ranksep: 44, edgesep: 16, marginx: PADDING, marginy: PADDING });
		g.setDefaultEdgeLabel(() => ({}));
		for (const childId of node.childIds) {
			const child = byId.get(childId);
			if (!child) continue;
			const size = isExpanded(child) ? sizeOf(child) : leafSize(child);
			g.setNode(childId, { width: size.width, height: size.height });
		}
		if (node.initialId) {
			g.setNode("__initial", { width: INITIAL_DOT, height: INITIAL_DOT });
			g.setEdge("__initial", node.initialId, { width: 0, height: 0, minlen: 1 }, "__initial");
		}
		// Group the drawable transitions of this level by their (lifted) ends.
		const groups = new Map<string, { sourceId: string; targetId: string; realSource: string; realTarget: string; edges: StatechartEdge[] }>();
		for (const entry of drawable) {
			const from = childUnder(node.id, entry.sourceId);
			const to = childUnder(node.id, entry.targetId);
			if (!from || !to || from === to) continue;
			const key = `${entry.sourceId}\u0000${entry.targetId}`;
			const group = groups.get(key) ?? { sourceId: from, targetId: to, realSource: entry.sourceId, realTarget: entry.targetId, edges: [] };
			if (!group.edges.includes(entry.edge)) group.edges.push(entry.edge);
			groups.set(key, group);
		}
		const drawnByName = new Map<string, Omit<LaidOutTransition, "points" | "label">>();
		let index = 0;
		for (const group of groups.values()) {
			const lines: TransitionLabelLine[] = [];
			const seenLabels = new Set<string>();
			for (const edge of group.edges) {
				if (seenLabels.has(edge.label)) {
					// Same label twice (e.g. `continue` with different guards): one line, many edges.
					lines.push({ edgeId: edge.id, text: "" });
					continue;
				}
				seenLabels.add(edge.label);
				for (const text of wrapLabel(edge.label)) lines.push({ edgeId: edge.id, text });
			}
			const visible = lines.filter((line) => line.text !== "");
			const width = Math.max(...visible.map((line) => textWidth(line.text))) + 8;
			const height = visible.length * LAYOUT_FONT.lineHeight + 4;
			const name = `e${index++}`;
			g.setEdge(group.sourceId, group.targetId, { width, height, labelpos: "c", minlen: 1 }, name);
			const first = group.edges[0];
			drawnByName.set(name, {
				id: `${group.realSource}->${group.realTarget}`,
				edgeIds: group.edges.map((edge) => edge.id),
				sourceId: group.realSource,
				targetId: group.realTarget,
				kind: first?.kind ?? "event",
				lines,
			});
		}
		dagre.layout(g);

		const box: Box = { width: 0, height: 0, children: new Map(), arrows: [] };
		const top = HEADER;
		for (const childId of node.childIds) {
			const placed = g.node(childId);
			if (!placed || placed.x === undefined || placed.y === undefined) continue;
			box.children.set(childId, { x: placed.x - placed.width / 2, y: placed.y - placed.height / 2 + top });
		}
		for (const edgeObj of g.edges()) {
			const label = g.edge(edgeObj) as EdgeLabel;
			const points = (label.points ?? []).map((point: LayoutPoint) => ({ x: point.x, y: point.y + top }));
			if (edgeObj.name === "__initial") {
				if (node.initialId) box.initial = { targetId: node.initialId, points };
				continue;
			}
			const drawn = edgeObj.name ? drawnByName.get(edgeObj.name) : undefined;
			if (!drawn) continue;
			box.arrows.push({
				drawn,
				points,
				label: { x: label.x ?? 0, y: (label.y ?? 0) + top, width: label.width ?? 0, height: label.height ?? 0 },
			});
		}
		const graphLabel = g.graph();
		const internal = internalLines(node.id).events;
		const headerWidth = textWidth([node.key, ...internal.map((event) => `⟲ ${event}`)].join("  ")) + 2 * PADDING;
		box.width = Math.max(graphLabel.width ?? 0, headerWidth);
		box.height = (graphLabel.height ?? 0) + top;
		return box;
	};

	const sizeOf = (node: StatechartNode): { width: number; height: number } => {
		let box = boxes.get(node.id);
		if (!box) {
			box = layoutCompound(node);
			boxes.set(node.id, box);
		}
		return box;
	};

	const root = byId.get(graph.rootId);
	if (!root) return { width: 0, height: 0, states: [], transitions: [], initials: [] };
	const rootBox = sizeOf(root);

	// Absolute positions, top-down.
	const states: LaidOutState[] = [];
	const absolute = new Map<string, LaidOutState>();
	const place = (node: StatechartNode, x: number, y: number, width: number, height: number) => {
		const internal = internalLines(node.id);
		const state: LaidOutState = {
			id: node.id,
			key: node.key,
			type: node.type,
			depth: node.depth,
			x,
			y,
			width,
			height,
			internalEvents: internal.events,
			internalEdgeIds: internal.ids,
			invokes: node.invokes.map((invoke) => invoke.id),
		};
		if (node.description) state.description = node.description;
		if (node.childIds.length > 0 && !isExpanded(node)) state.collapsed = { hiddenStates: descendants(node) };
		states.push(state);
		absolute.set(node.id, state);
		const box = isExpanded(node) ? boxes.get(node.id) : undefined;
		if (!box) return;
		for (const childId of node.childIds) {
			const child = byId.get(childId);
			const offset = box.children.get(childId);
			if (!child || !offset) continue;
			const size = isExpanded(child) ? sizeOf(child) : leafSize(child);
			place(child, x + offset.x, y + offset.y, size.width, size.height);
		}
	};
	place(root, 0, 0, rootBox.width, rootBox.height);

	const transitions: LaidOutTransition[] = [];
	const initials: InitialMarker[] = [];
	for (const [nodeId, box] of boxes) {
		const origin = absolute.get(nodeId);
		if (!origin) continue;
		const shift = (point: LayoutPoint) => ({ x: point.x + origin.x, y: point.y + origin.y });
		if (box.initial) initials.push({ parentId: nodeId, targetId: box.initial.targetId, points: box.initial.points.map(shift) });
		for (const arrow of box.arrows) {
			const points = arrow.points.map(shift);
			const source = absolute.get(arrow.drawn.sourceId);
			const target = absolute.get(arrow.drawn.targetId);
			// Routed between the lifted ends: re-attach to the real states when they are nested deeper.
			if (source && points.length > 1 && childUnder(nodeId, arrow.drawn.sourceId) !== arrow.drawn.sourceId) {
				points[0] = borderPoint(source, points[1] ?? points[0]!);
			}
			if (target && points.length > 1 && childUnder(nodeId, arrow.drawn.targetId) !== arrow.drawn.targetId) {
				points[points.length - 1] = borderPoint(target, points[points.length - 2] ?? points[0]!);
			}
			transitions.push({ ...arrow.drawn, points, label: { ...arrow.label, ...shift(arrow.label) } });
		}
	}
	return { width: rootBox.width, height: rootBox.height, states, transitions, initials };
}

/** Where the segment from a rectangle's centre towards `toward` leaves the rectangle. */
function borderPoint(rect: { x: number; y: number; width: number; height: number }, toward: LayoutPoint): LayoutPoint {
	const cx = rect.x + rect.width / 2;
	const cy = rect.y + rect.height / 2;
	const dx = toward.x - cx;
	const dy = toward.y - cy;
	if (dx === 0 && dy === 0) return { x: cx, y: rect.y };
	const scale = Math.min(
		dx === 0 ? Number.POSITIVE_INFINITY : rect.width / 2 / Math.abs(dx),
		dy === 0 ? Number.POSITIVE_INFINITY : rect.height / 2 / Math.abs(dy),
	);
	return { x: cx + dx * scale, y: cy + dy * scale };
}
