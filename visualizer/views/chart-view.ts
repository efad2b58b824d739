/**
 * The statechart drawing: SVG built from a layout (the server's, or one made in the page when a
 * compound state is closed or opened), then updated by toggling classes: active states, the
 * latest transitions, the selection. Sizes are layout units: at a camera scale of 1 one unit
 * is one CSS pixel, and labels are 12 px.
 */
import type { LaidOutState, LayoutPoint, StatechartLayout } from "../../src/inspect/layout.js";
import { LAYOUT_FONT } from "../../src/inspect/layout.js";
import { svg } from "./dom.js";

const FLASH_MS = 900;
const TOGGLE = 14;

/** A smooth path through dagre's points (Catmull-Rom as cubic Béziers). */
function pathThrough(points: LayoutPoint[]): string {
	const [first] = points;
	if (!first) return "";
	if (points.length === 2) return `M${first.x},${first.y}L${points[1]?.x},${points[1]?.y}`;
	let d = `M${first.x},${first.y}`;
	for (let i = 0; i < points.length - 1; i++) {
		const p0 = points[Math.max(0, i - 1)] ?? first;
		const p1 = points[i] ?? first;
		const p2 = points[i + 1] ?? p1;
		const p3 = points[Math.min(points.length - 1, i + 2)] ?? p2;
		const c1 = { x: p1.x + (p2.x - p0.x) / 6, y: p1.y + (p2.y - p0.y) / 6 };
		const c2 = { x: p2.x - (p3.x - p1.x) / 6, y: p2.y - (p3.y - p1.y) / 6 };
		d += `C${c1.x},${c1.y} ${c2.x},${c2.y} ${p2.x},${p2.y}`;
	}
	return d;
}

/** What the chart tells its owner. */
export interface ChartViewHandlers {
	/** A compound state's open/close control was used. */
	onToggle(stateId: string): void;
	/** A state was clicked. */
	onSelectState(stateId: string): void;
}

/** A box in layout units (and the state drawn there). */
export interface Box {
	id: string;
	x: number;
	y: number;
	width: number;
	height: number;
}

/** The drawn chart and its highlighting. */
export class ChartView {
	private states = new Map<string, SVGGElement>();
	private boxes = new Map<string, LaidOutState>();
	/** Drawn arrow group by graph edge id (several edges can share one arrow). */
	private arrowsByEdge = new Map<string, SVGGElement>();
	/** Label lines by graph edge id, including internal (targetless) lines inside states. */
	private linesByEdge = new Map<string, SVGTextElement[]>();
	private readonly flashTimers = new Map<Element, number>();
	private lastTaken: Element[] = [];
	private activeIds: readonly string[] = [];
	private selected: readonly string[] = [];
	private layout: StatechartLayout;

	constructor(
		private readonly content: SVGGElement,
		layout: StatechartLayout,
		private readonly handlers: ChartViewHandlers,
	) {
		this.layout = layout;
		this.draw(layout);
	}

	/** The chart's size in layout units. */
	get size(): { width: number; height: number } {
		return { width: this.layout.width, height: this.layout.height };
	}

	/** The box a state is drawn as: its own, or that of the closed state it is hidden in. */
	boxOf(stateId: string): LaidOutState | undefined {
		for (let id: string | undefined = stateId; id; id = id.includes(".") ? id.slice(0, id.lastIndexOf(".")) : undefined) {
			const box = this.boxes.get(id);
			if (box) return box;
		}
		return undefined;
	}

	/** Draws a (new) layout, keeping the active states, the latest transitions and the selection. */
	draw(layout: StatechartLayout): void {
		this.layout = layout;
		this.states = new Map();
		this.boxes = new Map(layout.states.map((state) => [state.id, state]));
		this.arrowsByEdge = new Map();
		this.linesByEdge = new Map();
		this.lastTaken = [];
		const statesLayer = svg("g", { class: "states" });
		const arrowsLayer = svg("g", { class: "arrows" });
		const labelsLayer = svg("g", { class: "labels" });
		// Parents first, so children paint over them.
		for (const state of [...layout.states].sort((a, b) => a.depth - b.depth)) statesLayer.append(this.drawState(state));
		for (const initial of layout.initials) {
			const [dot] = initial.points;
			if (!dot) continue;
			const group = svg("g", { class: "initial" });
			group.append(svg("circle", { cx: dot.x, cy: dot.y, r: 5 }), svg("path", { d: pathThrough(initial.points), "marker-end": "url(#arrow)" }));
			arrowsLayer.append(group);
		}
		for (const transition of layout.transitions) {
			const group = svg("g", { class: `transition ${transition.kind}`, "data-transition-id": transition.id });
			group.append(svg("path", { d: pathThrough(transition.points), "marker-end": "url(#arrow)" }));
			arrowsLayer.append(group);
			for (const edgeId of transition.edgeIds) this.arrowsByEdge.set(edgeId, group);
			const visible = transition.lines.filter((line) => line.text !== "");
			const labelGroup = svg("g", { class: `label ${transition.kind}` });
			const { x, y, width, height } = transition.label;
			labelGroup.append(svg("rect", { x: x - width / 2, y: y - height / 2, width, height, rx: 3 }));
			visible.forEach((line, index) => {
				const text = svg("text", { x: x - width / 2 + 4, y: y - height / 2 + 13 + index * LAYOUT_FONT.lineHeight });
				text.textContent = line.text;
				labelGroup.append(text);
				this.addLine(line.edgeId, text);
			});
			// Merged alternatives (same event, different guard) light up the shared line.
			for (const line of transition.lines) {
				if (line.text !== "") continue;
				const shared = visible.find((candidate) => transition.lines.indexOf(candidate) < transition.lines.indexOf(line));
				const sharedText = shared ? this.linesByEdge.get(shared.edgeId)?.[0] : undefined;
				if (sharedText) this.addLine(line.edgeId, sharedText);
			}
			labelsLayer.append(labelGroup);
		}
		this.content.replaceChildren(statesLayer, arrowsLayer, labelsLayer);
		this.setActive(this.activeIds);
		this.setSelection(this.selected);
	}

	private drawState(state: LaidOutState): SVGGElement {
		const compound = (state.type === "compound" || state.type === "parallel") && !state.collapsed;
		const closed = state.collapsed !== undefined;
		const group = svg("g", { class: `state ${state.type}${closed ? " collapsed" : ""}`, "data-state-id": state.id });
		group.append(svg("rect", { x: state.x, y: state.y, width: state.width, height: state.height, rx: 9 }));
		if (state.type === "final") group.append(svg("rect", { x: state.x + 3, y: state.y + 3, width: state.width - 6, height: state.height - 6, rx: 7, class: "inner" }));
		const togglable = state.depth > 0 && (compound || closed);
		const titleX = compound ? state.x + 12 + (togglable ? TOGGLE + 4 : 0) : state.x + state.width / 2;
		const title = svg("text", { x: titleX, y: state.y + 18, class: compound ? "title compound-title" : "title" });
		title.textContent = state.key;
		group.append(title);
		if (state.description) {
			const tooltip = svg("title");
			tooltip.textContent = state.description;
			group.append(tooltip);
		}
		const extra = [
			...(closed ? [{ text: `+${state.collapsed?.hiddenStates ?? 0} states`, edgeId: undefined }] : []),
			...state.invokes.map((id) => ({ text: `invoke ${id}`, edgeId: undefined })),
			...state.internalEvents.map((event, index) => ({ text: `⟲ ${event}`, edgeId: state.internalEdgeIds[index] })),
		];
		if (compound) {
			// Compound states list their internal events on the header line, after the name.
			let x = titleX + (state.key.length + 2) * LAYOUT_FONT.charWidth;
			for (const line of extra) {
				const text = svg("text", { x, y: state.y + 18, class: "internal" });
				text.textContent = line.text;
				group.append(text);
				if (line.edgeId) this.addLine(line.edgeId, text);
				x += (line.text.length + 2) * LAYOUT_FONT.charWidth;
			}
		} else {
			let lineY = state.y + 18;
			for (const line of extra) {
				lineY += LAYOUT_FONT.lineHeight;
				const text = svg("text", { x: state.x + state.width / 2, y: lineY, class: line.edgeId ? "internal" : "invoke" });
				text.textContent = line.text;
				group.append(text);
				if (line.edgeId) this.addLine(line.edgeId, text);
			}
		}
		if (togglable) group.append(this.drawToggle(state, closed));
		group.addEventListener("click", (event) => {
			if ((event.target as Element).closest(".toggle")) return;
			event.stopPropagation();
			this.handlers.onSelectState(state.id);
		});
		this.states.set(state.id, group);
		return group;
	}

	/** The open/close control of a compound state: a square with a drawn chevron. */
	private drawToggle(state: LaidOutState, closed: boolean): SVGGElement {
		const x = state.x + 8;
		const y = state.y + 6;
		const label = `${closed ? "Open" : "Close"} ${state.key}`;
		const toggle = svg("g", { class: "toggle", role: "button", tabindex: 0, "aria-label": label, "data-toggle": state.id, "aria-expanded": String(!closed) });
		const tooltip = svg("title");
		tooltip.textContent = label;
		const chevron = closed ? `M${x + 5},${y + 3}l5,4l-5,4z` : `M${x + 3},${y + 5}l8,0l-4,5z`;
		toggle.append(tooltip, svg("rect", { x, y, width: TOGGLE, height: TOGGLE, rx: 3 }), svg("path", { d: chevron }));
		const activate = (event: Event) => {
			event.stopPropagation();
			event.preventDefault();
			this.handlers.onToggle(state.id);
		};
		toggle.addEventListener("click", activate);
		toggle.addEventListener("keydown", (event) => {
			if (event.key === "Enter" || event.key === " ") activate(event);
		});
		return toggle;
	}

	private addLine(edgeId: string, text: SVGTextElement): void {
		const list = this.linesByEdge.get(edgeId) ?? [];
		list.push(text);
		this.linesByEdge.set(edgeId, list);
	}

	/** Marks exactly these states active (a closed state is active when the active state is inside it). */
	setActive(activeIds: readonly string[]): void {
		this.activeIds = activeIds;
		const active = new Set(activeIds);
		for (const [id, group] of this.states) group.classList.toggle("active", active.has(id));
	}

	/** Lights up the selected states (a closed state lights up for a state inside it). */
	setSelection(stateIds: readonly string[]): void {
		this.selected = stateIds;
		const lit = new Set<string>();
		for (const box of this.selectedBoxes(stateIds)) lit.add(box.id);
		for (const [id, group] of this.states) group.classList.toggle("selected", lit.has(id));
	}

	/**
	 * The boxes drawn for states: a closed state for the states inside it; an open compound
	 * state not at all (a state inside it stands for it, and its outline would cross the chart).
	 */
	selectedBoxes(stateIds: readonly string[]): LaidOutState[] {
		const boxes = new Map<string, LaidOutState>();
		for (const id of stateIds) {
			const box = this.boxOf(id);
			const open = box !== undefined && (box.type === "compound" || box.type === "parallel") && box.collapsed === undefined;
			if (box && !open) boxes.set(box.id, box);
		}
		return [...boxes.values()];
	}

	/** Marks the transitions just taken as the latest; `flash` also makes them pulse briefly (live, play). */
	markTaken(edgeIds: readonly string[], flash: boolean): void {
		const elements: Element[] = [];
		for (const edgeId of edgeIds) {
			const arrow = this.arrowsByEdge.get(edgeId);
			if (arrow) elements.push(arrow);
			elements.push(...(this.linesByEdge.get(edgeId) ?? []));
		}
		for (const element of this.lastTaken) {
			if (elements.includes(element)) continue;
			element.classList.remove("last-taken", "taken");
			element.querySelector("path")?.setAttribute("marker-end", "url(#arrow)");
		}
		this.lastTaken = elements;
		for (const element of elements) {
			element.classList.add("last-taken");
			element.querySelector("path")?.setAttribute("marker-end", "url(#arrow-taken)");
			if (!flash) continue;
			element.classList.add("taken");
			const previous = this.flashTimers.get(element);
			if (previous !== undefined) window.clearTimeout(previous);
			this.flashTimers.set(element, window.setTimeout(() => element.classList.remove("taken"), FLASH_MS));
		}
	}
}
