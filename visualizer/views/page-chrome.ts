/**
 * The page around the views: the header's state line and counters, the selection line, the
 * detail tabs, and `window.agentchart`, what tests (and curious users) read of the page.
 */
import type { ChartIndex } from "../model/chart-index.js";
import type { Selection } from "../model/selection.js";
import { agentStatusLine } from "../model/status.js";
import type { RunModel } from "../model/types.js";
import type { CameraState } from "./chart-camera.js";
import { byId, element } from "./dom.js";

/** What `window.agentchart` holds. */
export interface PageState {
	/** Innermost active state of the agent (`agent.running.streaming`); undefined once it stopped. */
	activeState: string | undefined;
	/** Distinct active leaves the agent went through, in order. */
	visited: string[];
	/** Records applied (the cursor), and how many the page holds. */
	applied: number;
	cursor: number;
	end: number;
	/** Whether the cursor follows the newest record. */
	live: boolean;
	/** The header's state line. */
	status: string;
	statusText: string;
	camera: CameraState;
	/** Compound states drawn closed. */
	closed: string[];
	/** What is selected, if anything. */
	selection: string | undefined;
}

/** Writes the header: the agent's state, its counters, the selection. */
export function showHeader(model: RunModel, chart: ChartIndex, selection: Selection | undefined, page: PageState): void {
	const line = agentStatusLine(model, chart);
	const state = byId("active-state");
	state.textContent = line.text;
	state.dataset["status"] = line.status;
	page.status = line.status;
	page.statusText = line.text;
	const context = model.context;
	const counters = context
		? [`turn ${context.run?.turn ?? "–"}`, `${context.messages} messages`, `steering ${context.steeringQueue}`, `follow-up ${context.followUpQueue}`]
		: [];
	byId("counters").replaceChildren(...counters.map((text) => element("span", "counter", text)));
	const selected = byId("selection");
	selected.hidden = selection === undefined;
	byId("selection-label").textContent = selection ? `selected: ${selection.label}` : "";
}

/** The detail tabs (event log, actors, counters): one panel shown at a time. */
export function setUpTabs(): void {
	const tabs = Array.from(document.querySelectorAll<HTMLButtonElement>("[role=tab]"));
	const show = (chosen: HTMLButtonElement) => {
		for (const tab of tabs) {
			const selected = tab === chosen;
			tab.setAttribute("aria-selected", String(selected));
			tab.tabIndex = selected ? 0 : -1;
			const panel = document.getElementById(tab.getAttribute("aria-controls") ?? "");
			if (panel) panel.hidden = !selected;
		}
	};
	for (const tab of tabs) tab.addEventListener("click", () => show(tab));
}
