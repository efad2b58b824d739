import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import type { AgentInspector } from "./inspector.js";
import type { ActorStatus, InspectionRecord, SnapshotSummary } from "./records.js";

/**
 * A recording in progress.
 *
 * @example
 * const recording: Recording = recordToNdjson(inspector, "run.ndjson");
 * await recording.close();
 */
export interface Recording {
	/**
	 * Flushes the inspector, writes what is left and closes the file. Rejects with the error that
	 * stopped the recording if the file could not be written (it then stopped at that error).
	 * Called again, it returns the first call's promise (a `finally` that closes once more is no error).
	 */
	close(): Promise<void>;
	/**
	 * Resolves once the file is open; rejects with why it could not be (a directory, a folder
	 * that does not exist, no permission), and that error is then not printed: the caller has it.
	 *
	 * @example
	 * const recording = recordToNdjson(inspector, "runs/today.ndjson");
	 * await recording.opened(); // throws ENOENT at once if runs/ is missing, not at close()
	 */
	opened(): Promise<void>;
}

/**
 * Records an inspector's output to an NDJSON file, one record per line, for replay with
 * `npm run visualize -- --replay run.ndjson`. Records already in the inspector's history are
 * written first, so a recording started after `attach` still begins with the actor tree.
 *
 * @example
 * const inspector = createAgentInspector();
 * inspector.attach(agent.actor);
 * const recording = recordToNdjson(inspector, "run.ndjson");
 * await agent.prompt("hi");
 * await recording.close();
 */
export function recordToNdjson(inspector: AgentInspector, path: string): Recording {
	const stream = createWriteStream(path, { encoding: "utf8" });
	let failed: Error | undefined;
	let open = false;
	let openAwaited = false;
	let closing: Promise<void> | undefined;
	const opening = new Promise<void>((resolve, reject) => {
		stream.once("open", () => {
			open = true;
			resolve();
		});
		stream.once("error", reject);
	});
	// Rejected with no one waiting is no unhandled rejection: the error is told below instead.
	opening.catch(() => undefined);
	const write = (records: readonly InspectionRecord[]) => {
		if (failed) return;
		let chunk = "";
		for (const record of records) chunk += `${JSON.stringify(record)}\n`;
		stream.write(chunk);
	};
	inspector.flush();
	write(inspector.history());
	const unsubscribe = inspector.subscribe(write);
	// A file that cannot be written (a full disk, a missing directory) ends the recording, not the
	// process: a write stream's error with no listener is thrown, and it would take the agent
	// down with it. The error is told now (a run can go on for hours) and again by `close`.
	stream.once("error", (error) => {
		failed = error;
		unsubscribe();
		if (open || !openAwaited) console.error(`agentchart: recording to ${path} stopped`, error);
	});
	return {
		opened() {
			openAwaited = true;
			return opening;
		},
		close() {
			closing ??= finish();
			return closing;
		},
	};

	function finish(): Promise<void> {
		inspector.flush();
		unsubscribe();
		if (failed) return Promise.reject(failed);
		return new Promise((resolve, reject) => {
			stream.once("error", reject);
			// The file may fail to open after close() was called: end's callback then has the error
			// before the stream's "error" listeners have run.
			stream.end((error?: Error | null) => {
				const stopped = error ?? failed;
				if (stopped) reject(stopped);
				else resolve();
			});
		});
	}
}

/**
 * Parses NDJSON recording text; blank lines are skipped, malformed lines and lines that are
 * not inspection records (JSON without a string `type`: a log line, a number) throw with their
 * line number, except a last line without its newline (a recording cut short when its process
 * was killed): it is left out, and the records before it are returned.
 *
 * @example
 * const records = parseRecording(readFileSync("run.ndjson", "utf8"));
 */
export function parseRecording(text: string): InspectionRecord[] {
	if (typeof text !== "string") throw new TypeError(`parseRecording takes a recording's text (JSON lines), got ${text === null ? "null" : typeof text}`);
	const records: InspectionRecord[] = [];
	const lines = text.split("\n");
	lines.forEach((line, index) => {
		if (line.trim() === "") return;
		let parsed: unknown;
		try {
			parsed = JSON.parse(line);
		} catch (error) {
			// A last line without its newline is a write the process's end cut short (a kill, a crash):
			// the recording up to it is whole.
			if (index === lines.length - 1) return;
			throw new Error(`Recording line ${index + 1} is not JSON: ${(error as Error).message}`);
		}
		// Told here, by its line, rather than by the replay server later as replay[n] (a log file given for a recording).
		if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || typeof (parsed as { type?: unknown }).type !== "string") {
			throw new Error(`Recording line ${index + 1} is not an inspection record ({ "type": "@xstate.…", … }, as recordToNdjson writes one per line), got ${line.length > 80 ? `${line.slice(0, 80)}…` : line}`);
		}
		records.push(parsed as InspectionRecord);
	});
	return records;
}

/**
 * Reads an NDJSON recording file.
 *
 * @example
 * const records = await readRecording("run.ndjson");
 */
export async function readRecording(path: string): Promise<InspectionRecord[]> {
	return parseRecording(await readFile(path, "utf8"));
}

/**
 * What {@link forwardToStately} needs of a `@statelyai/inspect` inspector: its adapter.
 *
 * @example
 * const stately: StatelyInspectorLike = { adapter: { send: (event) => console.log(event.type) } }; // or @statelyai/inspect's inspector
 * const stop = forwardToStately(inspector, stately);
 */
export interface StatelyInspectorLike {
	adapter: { send(event: StatelyWireEvent): void };
}

/**
 * Fields every message of the `@statelyai/inspect` wire protocol carries.
 *
 * @example
 * const actorOf = (message: StatelyWireCommon) => message.sessionId;
 */
export interface StatelyWireCommon {
	rootId: string | undefined;
	sessionId: string;
	createdAt: string;
	id: string;
	_version: string;
}

/**
 * A message of the `@statelyai/inspect` wire protocol, written out here (the shape of that
 * package's `StatelyInspectionEvent`) so that our published types do not depend on it: it is
 * needed only by users who forward to Stately, and they install it themselves.
 *
 * @example
 * const wire: StatelyWireEvent | undefined = toStatelyEvent(record);
 * if (wire) stately.adapter.send(wire);
 */
export type StatelyWireEvent =
	| (StatelyWireCommon & {
			type: "@xstate.actor";
			name: string;
			snapshot: { status?: ActorStatus; context?: unknown; value?: unknown; output?: unknown };
			definition: string | undefined;
			parentId: string | undefined;
	  })
	| (StatelyWireCommon & { type: "@xstate.event"; event: { type: string }; sourceId: string | undefined })
	| (StatelyWireCommon & { type: "@xstate.snapshot"; event: { type: string }; snapshot: { status?: ActorStatus; context?: unknown; value?: unknown; output?: unknown } });

/** A snapshot as Stately's viewer reads it: children as `{ id: { id } }`. */
interface StatelySnapshot {
	status: ActorStatus;
	value?: unknown | undefined;
	context?: unknown | undefined;
	children: Record<string, { id: string; xstate$$type: 1 }>;
	output?: unknown | undefined;
	error?: unknown | undefined;
}

function toStatelySnapshot(snapshot: SnapshotSummary): StatelySnapshot {
	const children: StatelySnapshot["children"] = {};
	for (const id of snapshot.children ?? []) children[id] = { id, xstate$$type: 1 };
	const { children: _ids, ...rest } = snapshot;
	return { ...rest, children };
}

/**
 * Converts a record to the `@statelyai/inspect` wire format, or undefined for records
 * Stately does not know (microsteps, emitted events).
 *
 * @example
 * const message = toStatelyEvent(record);
 * if (message) socket.send(JSON.stringify(message));
 */
export function toStatelyEvent(record: InspectionRecord): StatelyWireEvent | undefined {
	// Stately types `id` as a string but sends null; keep its observed wire value.
	const common = { sessionId: record.sessionId, rootId: record.rootId ?? record.sessionId, createdAt: record.createdAt, id: null as unknown as string, _version: record._version };
	switch (record.type) {
		case "@xstate.actor":
			return {
				...common,
				type: "@xstate.actor",
				name: record.name,
				parentId: record.parentId,
				definition: record.definition,
				snapshot: toStatelySnapshot(record.snapshot),
			};
		case "@xstate.event":
			return { ...common, type: "@xstate.event", event: record.event, sourceId: record.sourceId };
		case "@xstate.snapshot":
			// Stately types this as XState's full Snapshot; on the wire it is the same plain object.
			return {
				...common,
				type: "@xstate.snapshot",
				event: record.event,
				snapshot: toStatelySnapshot(record.snapshot),
			};
		default:
			return undefined;
	}
}

/**
 * Sends an inspector's records to a Stately inspector (`createBrowserInspector()` or
 * `createWebSocketInspector()` from `@statelyai/inspect`), already summarised: Stately's own
 * `inspect` observer would serialise every full snapshot, transcript included. Returns the
 * unsubscribe function.
 *
 * @example
 * import { createWebSocketInspector } from "@statelyai/inspect";
 * const stately = createWebSocketInspector({ url: "ws://127.0.0.1:8080" });
 * const inspector = createAgentInspector();
 * inspector.attach(agent.actor);
 * forwardToStately(inspector, stately);
 */
export function forwardToStately(inspector: AgentInspector, stately: StatelyInspectorLike): () => void {
	// Checked before anything is sent: a later record would otherwise fail inside the inspector's flush.
	if (typeof (stately as Partial<StatelyInspectorLike> | null)?.adapter?.send !== "function") throw new TypeError("forwardToStately takes the inspector made by @statelyai/inspect's createBrowserInspector() or createWebSocketInspector() (an object whose adapter has send), got something else");
	const send = (records: readonly InspectionRecord[]) => {
		for (const record of records) {
			const message = toStatelyEvent(record);
			if (message) stately.adapter.send(message);
		}
	};
	inspector.flush();
	send(inspector.history());
	return inspector.subscribe(send);
}
