/**
 * The visualizer page: draws the chart from `/api/chart`, keeps every record it receives (live
 * from the `/api/live` WebSocket, or a recording from `/api/recording`) and shows the run as of
 * the replay cursor in every view: the chart, the conversation, the timeline, the event log,
 * the actors. Bundled by `npm run build`; nothing is loaded from anywhere else.
 */
import type { StatechartLayout } from "../src/inspect/layout.js";
import type { InspectionRecord } from "../src/inspect/records.js";
import type { StatechartGraph } from "../src/inspect/statechart-graph.js";
import { indexChart, leafOf } from "./model/chart-index.js";
import { RecordStore } from "./model/record-store.js";
import { type Selection, selectRecord, selectSpan, selectState, selectTurn } from "./model/selection.js";
import { agentStatusLine } from "./model/status.js";
import type { RunModel } from "./model/types.js";
import { ActorsView, ContextView } from "./views/actors-view.js";
import { ChartPane } from "./views/chart-pane.js";
import { byId } from "./views/dom.js";
import { LogView } from "./views/log-view.js";
import { Player } from "./views/player.js";
import { TimelineView } from "./views/timeline-view.js";
import { TranscriptView } from "./views/transcript-view.js";
import { type PageState, setUpTabs, showHeader } from "./views/page-chrome.js";
// Each view's styles, bundled by esbuild into app.css beside app.js.
import "./styles/chart.css";
import "./styles/transcript.css";
import "./styles/timeline.css";
import "./styles/log.css";
import "./styles/actors.css";

interface ChartResponse {
	graph: StatechartGraph;
	layout: StatechartLayout;
	mode: "live" | "replay";
}

declare global {
	interface Window {
		agentchart: PageState;
	}
}

async function main(): Promise<void> {
	const response = (await (await fetch("/api/chart")).json()) as ChartResponse;
	const chart = indexChart(response.graph);
	const store = new RecordStore(chart);
	const page: PageState = { activeState: undefined, visited: [], applied: 0, cursor: 0, end: 0, live: response.mode === "live", status: "none", statusText: "", camera: { x: 0, y: 0, scale: 1, follow: true }, closed: [], selection: undefined };
	window.agentchart = page;
	document.body.dataset["mode"] = response.mode;
	let model: RunModel = store.modelAt(0);
	let selection: Selection | undefined;

	const records = () => store.slice(store.start, player.cursor);
	const select = (next: Selection | undefined, from: "chart" | "transcript" | "log" | "timeline" | "none") => {
		selection = next;
		page.selection = next?.label;
		chartPane.setSelection(next?.stateIds ?? [], from !== "chart");
		transcript.setSelection(next, from !== "transcript");
		log.setSelection(next, from !== "log");
		timeline.setSelection(next);
		showHeader(model, chart, next, page);
	};
	const chartPane = new ChartPane(
		{
			viewport: byId("chart"),
			zoomOut: byId("zoom-out"),
			zoomIn: byId("zoom-in"),
			zoomLevel: byId("zoom-level"),
			fit: byId("zoom-fit"),
			actual: byId("zoom-actual"),
			follow: byId("zoom-follow"),
			openAll: byId("open-all"),
		},
		chart,
		response.layout,
		(stateId) => select(selectState(model, records(), chart, stateId), "chart"),
	);
	// Read when asked: the camera moves between renders (wheel, drag, keys).
	Object.defineProperty(page, "camera", { get: () => chartPane.camera.state, enumerable: true });
	Object.defineProperty(page, "closed", { get: () => chartPane.closed, enumerable: true });
	const transcript = new TranscriptView(byId("transcript"), (entry) => {
		if (entry.turn !== undefined) select(selectTurn(model, records(), chart, entry.turn, entry.id), "transcript");
	});
	const timeline = new TimelineView(byId("timeline"), byId("timeline-scope"), {
		onSelectSpan: (span) => select(selectSpan(model, records(), chart, span), "timeline"),
		onSeekTime: (t) => player.seek(player.positionAt(t)),
	});
	const log = new LogView({ list: byId("log"), filters: byId("log-filters"), search: byId("log-search") }, chart, (seq) => select(selectRecord(model, records(), chart, seq), "log"));
	const actors = new ActorsView(byId("actors"));
	const context = new ContextView(byId("queues"));
	setUpTabs();
	byId("clear-selection").addEventListener("click", () => select(undefined, "none"));
	document.addEventListener("keydown", (event) => {
		if (event.key === "Escape") select(undefined, "none");
	});

	let renderPending = false;
	const render = () => {
		renderPending = false;
		model = store.modelAt(player.cursor);
		const line = agentStatusLine(model, chart);
		const agentActive = line.status === "active";
		// Open bars end at the cursor's time; live, at the wall clock while the agent works. Before
		// the first record (a replay at its start) that is the recording's first moment.
		const now = player.live && agentActive ? Math.max(Date.now(), model.lastT ?? 0) : (model.lastT ?? store.origin ?? Date.now());
		chartPane.show(model, player.live || document.body.dataset["playing"] === "true");
		transcript.render(model);
		timeline.render(model, now, store);
		log.render(store, player.cursor, model);
		actors.render(model, now);
		context.render(model);
		showHeader(model, chart, selection, page);
		page.activeState = agentActive ? leafOf(chart, model.activeIds) : undefined;
		page.visited = [...model.visited];
		page.applied = model.applied;
		page.cursor = player.cursor;
		page.end = store.end;
		page.live = player.live;
		document.body.dataset["activeState"] = page.activeState ?? "";
		document.body.dataset["rendered"] = String(player.cursor);
	};
	const scheduleRender = () => {
		if (renderPending) return;
		renderPending = true;
		requestAnimationFrame(render);
	};
	log.onFilter = scheduleRender;
	const player = new Player(
		{ start: byId("replay-start"), back: byId("replay-back"), play: byId("replay-play"), forward: byId("replay-forward"), end: byId("replay-end"), seek: byId("replay-seek"), position: byId("replay-position"), speed: byId("replay-speed"), pauseOn: byId("replay-pause-on") },
		store,
		response.mode,
		{ isStep: (record) => log.shows(record, model), typeOf: (record) => log.line(record, model)?.title, onCursor: scheduleRender },
	);
	const receive = (batch: InspectionRecord[]) => {
		store.push(batch);
		player.recordsAdded(batch);
	};
	// Running bars and actors' durations grow with the clock while the agent works.
	window.setInterval(() => {
		if (player.live && agentStatusLine(model, chart).status === "active") scheduleRender();
	}, 250);

	const status = byId("status");
	if (response.mode === "replay") {
		status.textContent = "replay";
		status.className = "status replay";
		receive((await (await fetch("/api/recording")).json()) as InspectionRecord[]);
		return;
	}
	const connect = () => {
		const socket = new WebSocket(`ws://${location.host}/api/live`);
		socket.addEventListener("open", () => {
			status.textContent = "live";
			status.className = "status live";
			// The server sends its whole history first: start from a clean page.
			store.clear();
			player.recordsAdded([]);
		});
		socket.addEventListener("message", (message) => receive(JSON.parse(String(message.data)) as InspectionRecord[]));
		socket.addEventListener("close", () => {
			status.textContent = "disconnected, retrying…";
			status.className = "status down";
			window.setTimeout(connect, 1500);
		});
	};
	connect();
}

void main().catch((error: unknown) => {
	const status = document.getElementById("status");
	if (status) {
		status.textContent = `error: ${String(error)}`;
		status.className = "status down";
	}
	console.error(error);
});
