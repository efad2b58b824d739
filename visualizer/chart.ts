/**
 * The statechart drawing: an SVG built once from the server's layout, then updated by
 * toggling classes (active states, taken transitions). Nothing is re-laid out at runtime.
 */
import type { LayoutPoint, StatechartLayout } from "../src/inspect/layout.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const FLASH_MS = 900;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
	const element = document.createElementNS(SVG_NS, tag);
	for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
	return element;
}

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

/** The drawn chart and its live highlighting. */
export class ChartView {
	private readonly states = new Map<string, SVGGElement>();
	/** Drawn arrow group by graph edge id (several edges can share one arrow). */
	private readonly arrowsByEdge = new Map<string, SVGGElement>();
	/** Label lines by graph edge id, including internal (targetless) lines inside states. */
	private readonly linesByEdge = new Map<string, SVGTextElement[]>();
	private readonly flashTimers = new Map<Element, number>();
	private lastTaken: Element[] = [];

	constructor(container: HTMLElement, layout: StatechartLayout) {
		const root = svg("svg", {
			viewBox: `-10 -10 ${layout.width + 20} ${layout.height + 20}`,
			class: "chart",
			role: "img",
			"aria-label": "Agent statechart",
		});
		root.style.maxWidth = `${layout.width + 20}px`;
		const defs = svg("defs");
		for (const [id, className] of [["arrow", "arrowhead"], ["arrow-taken", "arrowhead taken"]] as const) {
			const marker = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
			marker.append(svg("path", { d: "M0,0L10,5L0,10z", class: className }));
			defs.append(marker);
		}
		root.append(defs);

		const statesLayer = svg("g", { class: "states" });
		const arrowsLayer = svg("g", { class: "arrows" });
		const labelsLayer = svg("g", { class: "labels" });
		root.append(statesLayer, arrowsLayer, labelsLayer);

		// Parents first, so children paint over them.
		for (const state of [...layout.states].sort((a, b) => a.depth - b.depth)) {
			const group = svg("g", { class: `state ${state.type}`, "data-state-id": state.id });
			const rect = svg("rect", { x: state.x, y: state.y, width: state.width, height: state.height, rx: 9 });
			group.append(rect);
			if (state.type === "final") {
				group.append(svg("rect", { x: state.x + 3, y: state.y + 3, width: state.width - 6, height: state.height - 6, rx: 7, class: "inner" }));
			}
			const compound = state.type === "compound" || state.type === "parallel";
			const title = svg("text", {
				x: compound ? state.x + 12 : state.x + state.width / 2,
				y: state.y + 18,
				class: compound ? "title compound-title" : "title",
			});
			title.textContent = state.key;
			group.append(title);
			if (state.description) {
				const tooltip = svg("title");
				tooltip.textContent = state.description;
				group.append(tooltip);
			}
			let lineY = state.y + 18;
			const extra = [...state.invokes.map((id) => ({ text: `invoke ${id}`, edgeId: undefined })), ...state.internalEvents.map((event, index) => ({ text: `⟲ ${event}`, edgeId: state.internalEdgeIds[index] }))];
			if (compound) {
				// Compound states list their internal events on the header line, after the name.
				let x = state.x + 12 + (state.key.length + 2) * 7.3;
				for (const line of extra) {
					const text = svg("text", { x, y: state.y + 18, class: "internal" });
					text.textContent = line.text;
					group.append(text);
					if (line.edgeId) this.addLine(line.edgeId, text);
					x += (line.text.length + 2) * 7.3;
				}
			} else {
				for (const line of extra) {
					lineY += 15;
					const text = svg("text", { x: state.x + state.width / 2, y: lineY, class: line.edgeId ? "internal" : "invoke" });
					text.textContent = line.text;
					group.append(text);
					if (line.edgeId) this.addLine(line.edgeId, text);
				}
			}
			statesLayer.append(group);
			this.states.set(state.id, group);
		}

		for (const initial of layout.initials) {
			const [dot] = initial.points;
			if (!dot) continue;
			const group = svg("g", { class: "initial" });
			group.append(svg("circle", { cx: dot.x, cy: dot.y, r: 5 }));
			group.append(svg("path", { d: pathThrough(initial.points), "marker-end": "url(#arrow)" }));
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
				const text = svg("text", { x: x - width / 2 + 4, y: y - height / 2 + 13 + index * 15 });
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
		container.replaceChildren(root);
	}

	private addLine(edgeId: string, text: SVGTextElement): void {
		const list = this.linesByEdge.get(edgeId) ?? [];
		list.push(text);
		this.linesByEdge.set(edgeId, list);
	}

	/** Marks exactly these states active (the ids of a snapshot's active nodes). */
	setActive(activeIds: readonly string[]): void {
		const active = new Set(activeIds);
		for (const [id, group] of this.states) group.classList.toggle("active", active.has(id));
	}

	/** Flashes the transitions just taken and keeps them marked as the latest until the next ones. */
	markTaken(edgeIds: readonly string[]): void {
		const elements: Element[] = [];
		for (const edgeId of edgeIds) {
			const arrow = this.arrowsByEdge.get(edgeId);
			if (arrow) elements.push(arrow);
			elements.push(...(this.linesByEdge.get(edgeId) ?? []));
		}
		if (elements.length === 0) return;
		for (const element of this.lastTaken) {
			element.classList.remove("last-taken");
			if (!element.classList.contains("taken")) element.querySelector("path")?.setAttribute("marker-end", "url(#arrow)");
		}
		this.lastTaken = elements;
		for (const element of elements) {
			element.classList.add("taken", "last-taken");
			const arrowPath = element.querySelector("path");
			arrowPath?.setAttribute("marker-end", "url(#arrow-taken)");
			const previous = this.flashTimers.get(element);
			if (previous !== undefined) window.clearTimeout(previous);
			this.flashTimers.set(
				element,
				window.setTimeout(() => {
					element.classList.remove("taken");
					if (!element.classList.contains("last-taken")) arrowPath?.setAttribute("marker-end", "url(#arrow)");
				}, FLASH_MS),
			);
		}
	}

	/** Clears all highlighting (replay restarts). */
	reset(): void {
		this.setActive([]);
		for (const element of this.lastTaken) element.classList.remove("last-taken", "taken");
		this.lastTaken = [];
	}
}
