/**
 * The chart pane: the drawing, its camera, the toolbar (zoom, fit, 1:1, follow, open all), and
 * compound states that close and open (the layout is made again in the page, with dagre).
 */
import { layoutStatechart, type StatechartLayout } from "../../src/inspect/layout.js";
import { type ChartIndex, leafOf } from "../model/chart-index.js";
import type { RunModel } from "../model/types.js";
import { type CameraState, ChartCamera, ZOOM_STEP } from "./chart-camera.js";
import { ChartView } from "./chart-view.js";
import { svg } from "./dom.js";
import { iconButton } from "./icons.js";

/** The keys that zoom or fit the chart (see ChartCamera.handleKey). */
const ZOOM_KEYS: ReadonlySet<string> = new Set(["+", "=", "-", "_", "1", "0", "f"]);

/** The pane's elements in index.html. */
export interface ChartPaneElements {
	viewport: HTMLElement;
	zoomOut: HTMLButtonElement;
	zoomIn: HTMLButtonElement;
	zoomLevel: HTMLOutputElement;
	fit: HTMLButtonElement;
	actual: HTMLButtonElement;
	follow: HTMLButtonElement;
	openAll: HTMLButtonElement;
}

export class ChartPane {
	private readonly view: ChartView;
	readonly camera: ChartCamera;
	private readonly collapsed = new Set<string>();
	private followedLeaf: string | undefined;
	private lastTakenKey = "";

	constructor(
		private readonly elements: ChartPaneElements,
		private readonly chart: ChartIndex,
		layout: StatechartLayout,
		onSelectState: (stateId: string) => void,
	) {
		const root = svg("svg", { class: "chart", role: "img", "aria-label": "Agent statechart" });
		const defs = svg("defs");
		for (const [id, className] of [["arrow", "arrowhead"], ["arrow-taken", "arrowhead taken"]] as const) {
			const marker = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
			marker.append(svg("path", { d: "M0,0L10,5L0,10z", class: className }));
			defs.append(marker);
		}
		const content = svg("g", { class: "content" });
		root.append(defs, content);
		elements.viewport.replaceChildren(root);
		this.camera = new ChartCamera(elements.viewport, root, (state) => this.showCamera(state));
		this.camera.followed = () => this.followedBox();
		this.view = new ChartView(content, layout, { onToggle: (id) => this.toggle(id), onSelectState });
		this.camera.setContent(this.view.size);
		const start = this.view.boxOf(this.chart.graph.nodes[0]?.initialId ?? this.chart.graph.rootId);
		this.camera.actualSize(start);

		iconButton(elements.zoomOut, "minus", "Zoom out (-)", false).addEventListener("click", () => this.camera.zoomBy(1 / ZOOM_STEP));
		iconButton(elements.zoomIn, "plus", "Zoom in (+)", false).addEventListener("click", () => this.camera.zoomBy(ZOOM_STEP));
		iconButton(elements.fit, "fit", "Fit").addEventListener("click", () => {
			this.camera.follow = false;
			this.camera.fit();
		});
		iconButton(elements.actual, "target", "1:1").addEventListener("click", () => {
			this.camera.follow = true;
			this.camera.actualSize(this.followedBox());
		});
		iconButton(elements.follow, "live", "Follow").addEventListener("click", () => {
			this.camera.follow = !this.camera.follow;
			const box = this.followedBox();
			if (this.camera.follow && box) this.camera.ensureVisible(box);
			this.showCamera(this.camera.state);
		});
		iconButton(elements.openAll, "expand", "Open all").addEventListener("click", () => {
			this.collapsed.clear();
			this.relayout();
		});
		elements.fit.title = "Fit the whole chart in the pane (f)";
		elements.actual.title = "True size, labels 12 px (1)";
		elements.follow.title = "Keep the active state in view";
		elements.openAll.title = "Open every closed state";
		elements.viewport.addEventListener("keydown", (event) => {
			if (this.camera.handleKey(event)) event.preventDefault();
		});
		// The zoom keys work from anywhere on the page, as the player's do; the arrows pan only a
		// chart that has focus (elsewhere they scroll the conversation and the log).
		document.addEventListener("keydown", (event) => {
			const target = event.target as HTMLElement;
			if (event.ctrlKey || event.metaKey || event.altKey || elements.viewport.contains(target)) return;
			if (target.closest("input, select, textarea, button, [role=button], details > summary")) return;
			if (ZOOM_KEYS.has(event.key) && this.camera.handleKey(event)) event.preventDefault();
		});
		this.showCamera(this.camera.state);
	}

	/** The states closed now. */
	get closed(): string[] {
		return [...this.collapsed];
	}

	/** Closes or opens a compound state. */
	toggle(stateId: string): void {
		if (this.collapsed.has(stateId)) this.collapsed.delete(stateId);
		else this.collapsed.add(stateId);
		this.relayout();
		const box = this.view.boxOf(stateId);
		if (box) this.camera.ensureVisible(box, false);
	}

	private relayout(): void {
		this.view.draw(layoutStatechart(this.chart.graph, { collapsed: this.collapsed }));
		this.camera.setContent(this.view.size);
		this.lastTakenKey = "";
		this.elements.openAll.hidden = this.collapsed.size === 0;
	}

	/** Shows the model's agent: active states, latest transitions; keeps the active state in view. */
	show(model: RunModel, flash: boolean): void {
		const running = model.agent !== undefined && model.actors[model.agent]?.status === "active";
		this.view.setActive(running ? model.activeIds : []);
		this.elements.viewport.classList.toggle("agent-stopped", !running && model.agent !== undefined);
		const takenKey = model.lastTaken.join(" ");
		if (takenKey !== this.lastTakenKey) {
			this.lastTakenKey = takenKey;
			this.view.markTaken(model.lastTaken, flash);
		}
		const leaf = leafOf(this.chart, model.activeIds);
		if (leaf !== this.followedLeaf) {
			this.followedLeaf = leaf;
			const box = this.followedBox();
			if (this.camera.follow && box) this.camera.ensureVisible(box, flash);
		}
	}

	/**
	 * Lights up the selection's states; `reveal` brings them into view (the selection came from
	 * another view) and stops following the active state until the selection is cleared.
	 */
	setSelection(stateIds: readonly string[], reveal: boolean): void {
		this.view.setSelection(stateIds);
		if (stateIds.length === 0) {
			if (!this.camera.follow) {
				this.camera.follow = true;
				const box = this.followedBox();
				if (box) this.camera.ensureVisible(box);
			}
			return;
		}
		const boxes = this.view.selectedBoxes(stateIds);
		if (!reveal || boxes.length === 0) return;
		const left = Math.min(...boxes.map((box) => box.x));
		const top = Math.min(...boxes.map((box) => box.y));
		const right = Math.max(...boxes.map((box) => box.x + box.width));
		const bottom = Math.max(...boxes.map((box) => box.y + box.height));
		this.camera.follow = false;
		this.camera.showBox({ id: "selection", x: left, y: top, width: right - left, height: bottom - top });
	}

	private followedBox() {
		return this.followedLeaf === undefined ? undefined : this.view.boxOf(this.followedLeaf);
	}

	private showCamera(state: CameraState): void {
		this.elements.zoomLevel.value = `${Math.round(state.scale * 100)}%`;
		this.elements.follow.setAttribute("aria-pressed", String(state.follow));
		this.elements.viewport.dataset["scale"] = String(state.scale);
	}
}
