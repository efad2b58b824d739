import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { InspectableActorRef, StateMachineLike } from "../types/actor-shapes.js";
import { WebSocketServer, type WebSocket } from "ws";
import { agentMachine } from "../machines/agent-machine.js";
import { type AgentInspector, createAgentInspector } from "./inspector.js";
import { layoutStatechart } from "./layout.js";
import { checkAttachVisualizerOptions, checkVisualizerServerOptions } from "./options.js";
import type { InspectionRecord } from "./records.js";
import { recordToNdjson } from "./sinks.js";
import { toStatechartGraph } from "./statechart-graph.js";
import { ownValue } from "../util/own-keys.js";

/**
 * Where the prebuilt page lives: `dist/visualizer/` (made by `npm run build` from the
 * repository's `visualizer/`). Installed, this module is `dist/inspect/`, so the page is one
 * level up; run from the sources (`src/inspect/`), it is in the repository's `dist/`. Bundled
 * into an application (esbuild and the like), this module is no longer beside the page, and in
 * a CommonJS bundle `import.meta.url` is undefined: then the page is taken from the agentchart
 * package installed where the application runs.
 */
function pageDirectory(): string {
	const here: unknown = import.meta.url;
	const candidates =
		typeof here === "string" ? [fileURLToPath(new URL("../visualizer/", here)), fileURLToPath(new URL("../../dist/visualizer/", here))] : [];
	const installed = installedPageDirectory();
	if (installed !== undefined) candidates.push(installed);
	for (const directory of candidates) {
		if (existsSync(`${directory}index.html`)) return directory;
	}
	throw new Error(
		`agentchart: the visualizer page was not found (looked in ${candidates.join(", ") || "no folder"}). It ships in the agentchart package as dist/visualizer/: ` +
			"an application bundled with agentchart inside needs agentchart installed where it runs (or kept external: esbuild --external:agentchart); " +
			"in the agentchart repository, run `npm run build`",
	);
}

/** `dist/visualizer/` of the agentchart package that the current directory resolves, if any. */
function installedPageDirectory(): string | undefined {
	try {
		const manifest = createRequire(join(process.cwd(), "package.json")).resolve("agentchart/package.json");
		return join(dirname(manifest), "dist", "visualizer", sep);
	} catch {
		return undefined;
	}
}

/**
 * The only interface the server listens on: inspection data stays on this machine.
 *
 * @example
 * const server = await startVisualizerServer({ inspector });
 * new URL(server.url).hostname === VISUALIZER_HOST; // true
 */
export const VISUALIZER_HOST = "127.0.0.1";

/**
 * Options of {@link startVisualizerServer}.
 *
 * @example
 * const options: VisualizerServerOptions = { port: 0, replay: await readRecording("run.ndjson") }; // a recorded run, played back
 * const server = await startVisualizerServer(options);
 */
export interface VisualizerServerOptions {
	/** TCP port; 0 (default) picks a free one. */
	port?: number | undefined;
	/** The machine to draw (default: the agent machine). */
	machine?: StateMachineLike | undefined;
	/** Live mode: stream this inspector's records to the page. */
	inspector?: AgentInspector | undefined;
	/** Replay mode: these records, played back in the page with play/pause/step. */
	replay?: InspectionRecord[] | undefined;
}

/**
 * A running visualizer server.
 *
 * @example
 * const server: VisualizerServer = await startVisualizerServer({ machine: agentMachine, inspector });
 * console.log(`open ${server.url}`);
 * await server.close();
 */
export interface VisualizerServer {
	/** `http://127.0.0.1:<port>/` */
	url: string;
	port: number;
	/**
	 * Resolves once a page has opened and taken the data (live: its WebSocket is connected and
	 * has the history; replay: it fetched the recording). A program can wait for it before it
	 * starts the run it wants watched from the first event. Rejects once the server is closed
	 * with no page opened.
	 */
	waitForPage(): Promise<void>;
	/** Closes the sockets and the server. */
	close(): Promise<void>;
}

/** The page's files; everything it loads comes from this server, nothing from elsewhere. */
const STATIC_FILES: Record<string, { file: string; type: string }> = {
	"/": { file: "index.html", type: "text/html; charset=utf-8" },
	"/index.html": { file: "index.html", type: "text/html; charset=utf-8" },
	"/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
	"/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
	"/app.css.map": { file: "app.css.map", type: "application/json" },
	"/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
	"/app.js.map": { file: "app.js.map", type: "application/json" },
};

function send(response: ServerResponse, status: number, type: string, body: string): void {
	response.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff" });
	response.end(body);
}

/**
 * Rejects requests whose Host is not this server's loopback address, so a web page the user
 * visits cannot reach the inspector through DNS rebinding.
 */
function hostAllowed(request: IncomingMessage, port: number): boolean {
	const host = request.headers.host;
	return host !== undefined && ownAuthorities(port).includes(host);
}

/** This server's `host:port`, also as a browser writes it on HTTP's default port: without it. */
function ownAuthorities(port: number): string[] {
	const own = [`${VISUALIZER_HOST}:${port}`, `localhost:${port}`];
	return port === 80 ? [...own, VISUALIZER_HOST, "localhost"] : own;
}

/**
 * Rejects requests made by a page of another site. A browser sends the right Host to a port it
 * found, so the Host check does not stop a cross-site page; its `Origin` gives it away. A
 * browser always sends one with a WebSocket upgrade, and it must be this server's own:
 * otherwise any page the user visits could read the live conversation (cross-site WebSocket
 * hijacking). Clients that send no Origin are not browsers (a same-origin navigation, curl,
 * a script on this machine) and are served.
 */
function originAllowed(request: IncomingMessage, port: number): boolean {
	const origin = request.headers.origin;
	if (origin === undefined) return true;
	return ownAuthorities(port).some((authority) => origin === `http://${authority}`);
}

/**
 * The request's path, or undefined for a target no URL parser takes (`//`, `///`): any web page
 * can send one (`new WebSocket("ws://127.0.0.1:4777//")`), so it must be answered, not thrown
 * on (thrown in the upgrade handler, it ended the process serving the agent).
 */
function requestPath(request: IncomingMessage): string | undefined {
	try {
		return new URL(request.url ?? "/", "http://localhost").pathname;
	} catch {
		return undefined;
	}
}

/**
 * How far a page may fall behind the live records, in bytes queued for it beyond the history it
 * was sent on connecting. A page that stops reading (a frozen tab, a machine asleep with the
 * connection still open) would otherwise have every record queued for it in this process, for as
 * long as the agent runs. Past it the page is disconnected; a page that is only slow reconnects
 * and starts again from the history.
 *
 * @example
 * console.log(`a page more than ${MAX_PAGE_BACKLOG_BYTES / 2 ** 20} MiB behind is disconnected`);
 */
export const MAX_PAGE_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * Starts the visualizer's HTTP + WebSocket server on 127.0.0.1. It serves the page
 * (`visualizer/index.html`, its script and styles), `/api/chart` (the statechart graph and its
 * layout), and either `/api/live` (a WebSocket of record batches from `inspector`) or
 * `/api/recording` (the replayed records).
 *
 * @example
 * const inspector = createAgentInspector();
 * inspector.attach(agent.actor);
 * const server = await startVisualizerServer({ inspector });
 * console.log(`Visualizer: ${server.url}`);
 *
 * @example
 * // Replay a recording made with recordToNdjson (or `npm run visualize -- --record run.ndjson`).
 * import { readRecording, startVisualizerServer } from "agentchart/inspect";
 * const server = await startVisualizerServer({ replay: await readRecording("run.ndjson") });
 * console.log(`Replay: ${server.url}`);
 */
export async function startVisualizerServer(options: VisualizerServerOptions = {}): Promise<VisualizerServer> {
	checkVisualizerServerOptions(options);
	const graph = toStatechartGraph(options.machine ?? agentMachine);
	const chart = JSON.stringify({
		graph,
		layout: layoutStatechart(graph),
		mode: options.replay ? "replay" : "live",
	});
	const recording = options.replay ? JSON.stringify(options.replay) : undefined;
	const page = pageDirectory();
	let port = 0;
	let pageOpened!: () => void;
	let closedFirst!: (error: Error) => void;
	const opened = new Promise<void>((resolve, reject) => {
		pageOpened = resolve;
		closedFirst = reject;
	});
	// Rejected only for those who wait: a server closed with nobody waiting is no unhandled rejection.
	opened.catch(() => undefined);

	const server = createServer((request, response) => {
		void (async () => {
			if (!hostAllowed(request, port)) return send(response, 403, "text/plain", "Forbidden host");
			if (!originAllowed(request, port)) return send(response, 403, "text/plain", "Forbidden origin");
			const path = requestPath(request);
			const file = path === undefined ? undefined : ownValue(STATIC_FILES, path);
			if (file) return send(response, 200, file.type, await readFile(`${page}${file.file}`, "utf8"));
			if (path === "/api/chart") return send(response, 200, "application/json", chart);
			if (path === "/api/recording" && recording) {
				send(response, 200, "application/json", recording);
				return pageOpened();
			}
			send(response, 404, "text/plain", "Not found");
		})().catch((error: unknown) => {
			if (!response.headersSent) send(response, 500, "text/plain", String(error));
		});
	});

	// The page sends nothing: a client that sends more than a few bytes is not the page.
	const sockets = new WebSocketServer({ noServer: true, maxPayload: 4096 });
	// Each page, with the bytes it may have queued: its history, and MAX_PAGE_BACKLOG_BYTES more.
	const clients = new Map<WebSocket, number>();
	server.on("upgrade", (request, socket, head) => {
		// Node hands the socket over with no error listener: a client's reset would be thrown, and
		// end the process serving the agent. ws listens once it takes the socket.
		socket.on("error", () => socket.destroy());
		if (!options.inspector || !hostAllowed(request, port) || !originAllowed(request, port) || requestPath(request) !== "/api/live") {
			socket.end("HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
			return;
		}
		sockets.handleUpgrade(request, socket, head, (client) => {
			client.on("close", () => clients.delete(client));
			// A frame the page would never send (unmasked, too long): ws closes the connection and
			// reports it here; with no listener the report is thrown and ends the process.
			client.on("error", () => client.terminate());
			// Flushed before the page is among the clients: the records waiting now reach it in its
			// history, once, and not also, ahead of the history, as a live batch.
			options.inspector?.flush();
			const history = JSON.stringify(options.inspector?.history() ?? []);
			clients.set(client, Buffer.byteLength(history) + MAX_PAGE_BACKLOG_BYTES);
			client.send(history, () => pageOpened());
		});
	});

	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(options.port ?? 0, VISUALIZER_HOST, () => resolve());
	});
	port = (server.address() as AddressInfo).port;
	// Subscribed once listening: a server that failed to start (its port taken) must not stay
	// subscribed to the inspector.
	const unsubscribe = options.inspector?.subscribe((records) => {
		if (clients.size === 0) return;
		const message = JSON.stringify(records);
		for (const [client, allowed] of clients) {
			if (client.readyState !== client.OPEN) continue;
			if (client.bufferedAmount > allowed) client.terminate();
			else client.send(message);
		}
	});

	return {
		url: `http://${VISUALIZER_HOST}:${port}/`,
		port,
		waitForPage: () => opened,
		async close() {
			// A page can no longer open: whoever waits for one (or asks later) hears so instead of waiting for ever.
			closedFirst(new Error("agentchart/inspect: the visualizer server was closed before a page opened"));
			unsubscribe?.();
			for (const client of clients.keys()) client.terminate();
			sockets.close();
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}

/**
 * Options of {@link attachVisualizer}.
 *
 * @example
 * const options: AttachVisualizerOptions = { port: 4400, record: "run.ndjson" };
 * const visualizer = await attachVisualizer(agent.actor, options);
 */
export interface AttachVisualizerOptions {
	/** TCP port on 127.0.0.1; 0 (default) picks a free one. */
	port?: number | undefined;
	/** Also record every record to this NDJSON file (replay it with `--replay`). */
	record?: string | undefined;
	/** Use this inspector instead of creating one. */
	inspector?: AgentInspector | undefined;
}

/**
 * A visualizer attached to a running actor.
 *
 * @example
 * const visualizer: AttachedVisualizer = await attachVisualizer(agent.actor);
 * console.log(`open ${visualizer.url}`);
 * await visualizer.waitForPage();
 * // ... run the agent ...
 * await visualizer.close();
 */
export interface AttachedVisualizer {
	url: string;
	inspector: AgentInspector;
	/** Resolves once a page has connected and received the history (see {@link VisualizerServer.waitForPage}). */
	waitForPage(): Promise<void>;
	/** Stops the server, detaches the inspector and closes the recording; called again, returns the first call's promise. */
	close(): Promise<void>;
}

/**
 * Attaches the visualizer to an agent actor that is already running (`agent.actor`) and
 * serves it on 127.0.0.1. This is what `npm start -- --inspect` calls.
 *
 * @example
 * const agent = new Agent({ initialState: { model, tools }, streamFn });
 * const visualizer = await attachVisualizer(agent.actor, { port: 4777 });
 * console.log(`Watch it run: ${visualizer.url}`);
 * await agent.prompt("What time is it?");
 * await visualizer.close();
 */
export async function attachVisualizer(actor: InspectableActorRef, options: AttachVisualizerOptions = {}): Promise<AttachedVisualizer> {
	checkAttachVisualizerOptions(options);
	const inspector = options.inspector ?? createAgentInspector();
	const detach = inspector.attach(actor);
	let server: VisualizerServer;
	try {
		server = await startVisualizerServer({ inspector, ...(options.port !== undefined ? { port: options.port } : {}) });
	} catch (error) {
		// Left attached, a caller that retries on another port would have the agent inspected twice.
		detach();
		throw error;
	}
	// Started once the server is: a server that cannot start leaves no recording behind. The
	// records held so far are written first, so it misses nothing.
	const recording = options.record ? recordToNdjson(inspector, options.record) : undefined;
	try {
		await recording?.opened();
	} catch (error) {
		// Resolved, it would have served a run whose recording was lost from the start, said only at close().
		detach();
		await server.close();
		throw new Error(`attachVisualizer: cannot record to ${JSON.stringify(options.record)}: ${(error as Error).message}`, { cause: error });
	}
	let closing: Promise<void> | undefined;
	return {
		url: server.url,
		inspector,
		waitForPage: server.waitForPage,
		close() {
			// Once: a second close (a test's afterEach after its own) has the first's outcome.
			closing ??= (async () => {
				detach();
				try {
					await recording?.close();
				} finally {
					await server.close();
				}
			})();
			return closing;
		},
	};
}
