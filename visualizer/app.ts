/**
 * The visualizer page: draws the chart from `/api/chart`, then applies inspection records,
 * live from the `/api/live` WebSocket or replayed from `/api/recording`. Bundled by the
 * server with esbuild; nothing is loaded from anywhere else.
 */
import type { StatechartLayout } from "../src/inspect/layout.js";
import type { InspectionRecord } from "../src/inspect/records.js";
import type { StatechartGraph } from "../src/inspect/statechart-graph.js";
import type { AgentContextSummary } from "../src/inspect/summarize.js";
import { ChartView } from "./chart.js";
import { ActorsPanel, EventLog, QueuesPanel } from "./panels.js";

interface ChartResponse {
	graph: StatechartGraph;
	layout: StatechartLayout;
	mode: "live" | "replay";
}

/** What tests and curious users can read off `window.agentchart`. */
interface PageState {
	/** Innermost active state of the agent, e.g. `agent.running.streaming`. */
	activeState: string | undefined;
	/** Every distinct active leaf the agent went through, in order (consecutive repeats merged). */
	visited: string[];
	/** Records applied so far. */
	applied: number;
}

declare global {
	interface Window {
		agentchart: PageState;
	}
}

function byId<T extends HTMLElement>(id: string): T {
	const found = document.getElementById(id);
	if (!found) throw new Error(`visualizer: #${id} is missing from index.html`);
	return found as T;
}

function isAgentSummary(value: unknown): value is AgentContextSummary {
	return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "agent";
}

async function main(): Promise<void> {
	const chart = (await (await fetch("/api/chart")).json()) as ChartResponse;
	const view = new ChartView(byId("chart"), chart.layout);
	const pane = byId("chart-pane");
	const zoom = byId<HTMLButtonElement>("zoom-toggle");
	zoom.addEventListener("click", () => {
		// Fit shows the whole chart; 1:1 is readable and scrolls.
		const fit = pane.classList.toggle("fit");
		zoom.textContent = fit ? "1:1" : "fit";
	});
	const actors = new ActorsPanel(byId("actors"));
	const queues = new QueuesPanel(byId("queues"));
	const log = new EventLog(byId("log"), byId("log-filters"), byId<HTMLInputElement>("log-search"));
	const status = byId("status");
	const stateLabel = byId("active-state");
	const page: PageState = { activeState: undefined, visited: [], applied: 0 };
	window.agentchart = page;

	/** The agent machine's actor: the first actor whose machine id is the chart's. */
	let agentSession: string | undefined;
	const names = new Map<string, string>();
	const describeSession = (sessionId: string | undefined) => (sessionId === undefined ? "outside" : names.get(sessionId) ?? sessionId);

	const apply = (record: InspectionRecord): void => {
		page.applied++;
		switch (record.type) {
			case "@xstate.actor":
				names.set(record.sessionId, record.actorId === record.sessionId ? record.name : record.actorId);
				if (agentSession === undefined && record.name === chart.graph.machineId) agentSession = record.sessionId;
				else if (record.parentId !== undefined && record.parentId === agentSession) actors.addActor(record);
				break;
			case "@xstate.snapshot":
				if (record.sessionId === agentSession) {
					if (record.activeIds) {
						view.setActive(record.activeIds);
						const leaf = record.activeIds[record.activeIds.length - 1];
						page.activeState = leaf;
						if (leaf && page.visited[page.visited.length - 1] !== leaf) page.visited.push(leaf);
						document.body.dataset["activeState"] = leaf ?? "";
						stateLabel.textContent = leaf ? leaf.replace(`${chart.graph.rootId}.`, "") : "–";
					}
					if (isAgentSummary(record.snapshot.context)) {
						queues.update(record.snapshot.context);
						actors.updateToolCalls(record.snapshot.context.run?.toolCalls ?? [], record.t);
					}
				} else {
					actors.updateStatus(record.sessionId, record.snapshot.status, record.t);
				}
				break;
			case "@xstate.microstep":
				if (record.sessionId === agentSession) view.markTaken(record.transitions.map((transition) => transition.edgeId));
				break;
			default:
				break;
		}
		log.add(record, describeSession);
	};

	const reset = () => {
		agentSession = undefined;
		names.clear();
		page.visited = [];
		page.applied = 0;
		page.activeState = undefined;
		view.reset();
		actors.clear();
		log.clear();
	};

	if (chart.mode === "live") {
		document.body.dataset["mode"] = "live";
		const connect = () => {
			const socket = new WebSocket(`ws://${location.host}/api/live`);
			socket.addEventListener("open", () => {
				status.textContent = "live";
				status.className = "status live";
			});
			socket.addEventListener("message", (message) => {
				for (const record of JSON.parse(String(message.data)) as InspectionRecord[]) apply(record);
			});
			socket.addEventListener("close", () => {
				status.textContent = "disconnected, retrying…";
				status.className = "status down";
				// The history is resent on connect, so start from a clean page.
				window.setTimeout(() => {
					reset();
					connect();
				}, 1500);
			});
		};
		connect();
		window.setInterval(() => actors.tick(Date.now()), 100);
		return;
	}

	document.body.dataset["mode"] = "replay";
	const records = (await (await fetch("/api/recording")).json()) as InspectionRecord[];
	startReplay(records, apply, reset, actors, status);
}

/** Play / pause / step over a recording, paced by the records' own timestamps. */
function startReplay(
	records: InspectionRecord[],
	apply: (record: InspectionRecord) => void,
	reset: () => void,
	actors: ActorsPanel,
	status: HTMLElement,
): void {
	const controls = byId("replay-controls");
	controls.hidden = false;
	const play = byId<HTMLButtonElement>("replay-play");
	const step = byId<HTMLButtonElement>("replay-step");
	const restart = byId<HTMLButtonElement>("replay-restart");
	const speed = byId<HTMLSelectElement>("replay-speed");
	const position = byId("replay-position");
	let cursor = 0;
	let playing = false;
	let timer: number | undefined;

	const show = () => {
		position.textContent = `${cursor} / ${records.length}`;
		status.textContent = playing ? "replaying" : cursor >= records.length ? "replay finished" : "replay paused";
		status.className = `status ${playing ? "live" : "paused"}`;
		play.textContent = playing ? "Pause" : "Play";
		const last = records[cursor - 1];
		if (last) actors.tick(last.t);
	};
	const applyNext = (): InspectionRecord | undefined => {
		const record = records[cursor];
		if (!record) return undefined;
		cursor++;
		apply(record);
		return record;
	};
	const schedule = () => {
		if (!playing) return;
		const current = records[cursor - 1];
		const next = records[cursor];
		if (!next) {
			playing = false;
			show();
			return;
		}
		// Real gaps, capped so a long idle stretch does not stall the replay.
		const gap = current ? Math.min(800, Math.max(0, next.t - current.t)) : 0;
		timer = window.setTimeout(() => {
			applyNext();
			show();
			schedule();
		}, gap / Number(speed.value));
	};
	play.addEventListener("click", () => {
		playing = !playing;
		if (timer !== undefined) window.clearTimeout(timer);
		show();
		schedule();
	});
	step.addEventListener("click", () => {
		// One step = up to and including the agent's next transition, so each click moves the chart.
		playing = false;
		if (timer !== undefined) window.clearTimeout(timer);
		for (let record = applyNext(); record; record = applyNext()) {
			if (record.type === "@xstate.microstep" && record.transitions.some((transition) => transition.targetIds.length > 0)) {
				const following = records[cursor];
				if (following?.type === "@xstate.snapshot") applyNext();
				break;
			}
		}
		show();
	});
	restart.addEventListener("click", () => {
		playing = false;
		if (timer !== undefined) window.clearTimeout(timer);
		cursor = 0;
		reset();
		show();
	});
	show();
}

void main().catch((error: unknown) => {
	const status = document.getElementById("status");
	if (status) {
		status.textContent = `error: ${String(error)}`;
		status.className = "status down";
	}
	console.error(error);
});
