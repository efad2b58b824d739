/**
 * `applyRecord`: the page's reducer. Each inspection record updates the run model: the actors
 * and their status, the agent's active states, its turns, the transcript and the timeline.
 * Completion is read from what XState reports publicly: an actor's own final snapshot, its
 * parent's snapshot no longer listing it, the AgentEvents that end a call.
 */
import type { ActorRecord, InspectionRecord, SnapshotRecord, TurnPosition } from "../../src/inspect/records.js";
import type { AgentContextSummary } from "../../src/inspect/summarize.js";
import { type ChartIndex, afterTransitions, leafOf } from "./chart-index.js";
import { applyDeltas, applyMessageEvent, endStreamingReply } from "./messages.js";
import type { EmittedEvent } from "./span-rules.js";
import { type RecordPlace, addEntry, applySpanRules, closeAllOpen, closeOpen, isStreamActor, isToolActor, openModelCall } from "./spans.js";
import type { ActorInfo, RunModel, TurnInfo } from "./types.js";

/** Bounds that keep a long session's model small. */
const MAX_VISITED = 300;
const MAX_TURNS = 1000;
const MAX_ENDED_ACTORS = 200;

/**
 * An empty model for a chart whose machine id is `machineId`.
 *
 * @example
 * const model = createRunModel("agent");
 */
export function createRunModel(machineId: string): RunModel {
	return {
		machineId,
		applied: 0,
		actors: {},
		activeIds: [],
		lastTaken: [],
		visited: [],
		runs: 0,
		currentRun: 0,
		turns: [],
		turnCount: 0,
		spans: [],
		open: {},
		transcript: [],
		dropped: 0,
		deltas: { count: 0, chars: 0 },
	};
}

function isAgentSummary(value: unknown): value is AgentContextSummary {
	return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "agent";
}

function setActive(model: RunModel, chart: ChartIndex, activeIds: string[]): void {
	model.activeIds = activeIds;
	const leaf = leafOf(chart, activeIds);
	if (leaf !== undefined && model.visited[model.visited.length - 1] !== leaf) {
		model.visited.push(leaf);
		if (model.visited.length > MAX_VISITED) model.visited.splice(0, model.visited.length - MAX_VISITED);
	}
}

/** An actor stopped, finished or failed: what it was doing is over. */
function actorEnded(model: RunModel, actor: ActorInfo, status: ActorInfo["status"], seq: number, t: number): void {
	if (actor.endedT !== undefined) return;
	actor.status = status;
	actor.endedT = t;
	const parent = actor.parentId;
	if (actor.name === model.machineId) {
		agentEnded(model, actor, seq, t);
		return;
	}
	if (parent === undefined) return;
	const place: RecordPlace = { seq, t, sessionId: parent };
	if (isStreamActor(actor.actorId)) closeOpen(model, place, "model", actor.sessionId, status === "error" ? "error" : "stopped");
	// The batch ends after its calls report; a call still open then ended without a word.
	else if (actor.actorId === "tools") closeAllOpen(model, place, status === "error" ? "error" : "stopped", "tool");
	else if (isToolActor(actor.actorId)) closeOpen(model, place, "tool", actor.actorId.slice("tool:".length), status === "error" ? "error" : "stopped");
	pruneEndedActors(model);
}

/** The agent machine stopped (its parent stopped it, `agent.dispose()`, the loop API's run ended). */
function agentEnded(model: RunModel, agent: ActorInfo, seq: number, t: number): void {
	const place: RecordPlace = { seq, t, sessionId: agent.sessionId };
	endStreamingReply(model, agent.sessionId, seq);
	closeAllOpen(model, place, agent.status === "error" ? "error" : "stopped");
	for (const child of Object.values(model.actors)) if (child.parentId === agent.sessionId && child.endedT === undefined) actorEnded(model, child, "stopped", seq, t);
	const how = agent.status === "done" ? "finished (final state)" : agent.status === "error" ? "failed" : "stopped";
	addEntry(model, { id: `e${seq}-end`, kind: "note", tone: agent.status === "error" ? "error" : "info", text: `The agent machine ${how}.`, seq, endSeq: seq, t, run: model.currentRun, turn: model.currentTurn, rev: 0 });
}

function pruneEndedActors(model: RunModel): void {
	const ended = Object.values(model.actors).filter((actor) => actor.endedT !== undefined && actor.sessionId !== model.agent);
	if (ended.length <= MAX_ENDED_ACTORS) return;
	ended.sort((a, b) => (a.endedT ?? 0) - (b.endedT ?? 0));
	for (const actor of ended.slice(0, ended.length - MAX_ENDED_ACTORS)) delete model.actors[actor.sessionId];
}

function applyActor(model: RunModel, chart: ChartIndex, record: ActorRecord): void {
	const actor: ActorInfo = { sessionId: record.sessionId, actorId: record.actorId, name: record.name, status: record.snapshot.status, createdT: record.t };
	if (record.parentId !== undefined) actor.parentId = record.parentId;
	if (record.src !== undefined) actor.src = record.src;
	// XState reports an actor before it has a snapshot: it is starting, whatever a recording made
	// by an older inspector says (it read the status later).
	if (actor.status !== "active" && record.snapshot.value === undefined && record.snapshot.context === undefined) actor.status = "active";
	model.actors[record.sessionId] = actor;
	if (record.name === chart.graph.machineId) {
		// The newest agent machine is the one followed (the loop API starts one per run).
		model.agent = record.sessionId;
		model.activeIds = [];
		return;
	}
	if (record.parentId !== undefined && record.parentId === model.agent && isStreamActor(record.actorId)) {
		openModelCall(model, { seq: record.seq, t: record.t, sessionId: record.parentId }, record.sessionId);
	}
}

function applySnapshot(model: RunModel, chart: ChartIndex, record: SnapshotRecord): void {
	const actor = model.actors[record.sessionId];
	const status = record.snapshot.status;
	if (record.sessionId === model.agent && status === "active" && record.activeIds) setActive(model, chart, record.activeIds);
	if (record.sessionId === model.agent && isAgentSummary(record.snapshot.context)) model.context = record.snapshot.context;
	if (!actor) return;
	if (status !== "active") {
		actorEnded(model, actor, status, record.seq, record.t);
		return;
	}
	// A child the parent no longer lists was stopped by it: XState may say nothing more about it.
	const children = record.snapshot.children;
	if (!children) return;
	for (const child of Object.values(model.actors)) {
		if (child.parentId === record.sessionId && child.endedT === undefined && !children.includes(child.actorId)) actorEnded(model, child, "stopped", record.seq, record.t);
	}
}

function applyEmitted(model: RunModel, place: RecordPlace, event: EmittedEvent, position: TurnPosition | undefined): void {
	if (event.type === "agent_start") {
		model.runs++;
		model.currentRun = model.runs;
	} else if (event.type === "turn_start") {
		model.turnCount++;
		model.currentTurn = model.turnCount;
		const turn: TurnInfo = { index: model.turnCount, run: model.currentRun, startSeq: place.seq, startT: place.t, sessionId: place.sessionId };
		if (position) turn.position = position;
		model.turns.push(turn);
		if (model.turns.length > MAX_TURNS) model.turns.splice(0, model.turns.length - MAX_TURNS);
	}
	applySpanRules(model, place, event);
	if (event.type === "message_start" || event.type === "message_end") applyMessageEvent(model, place, event);
	if (event.type === "turn_end") {
		const turn = model.turns[model.turns.length - 1];
		if (turn && turn.endSeq === undefined) {
			turn.endSeq = place.seq;
			turn.endT = place.t;
		}
	}
}

/**
 * Applies one record to the model.
 *
 * @example
 * const model = createRunModel(graph.machineId);
 * for (const record of records) applyRecord(model, record, chart);
 * model.transcript; // the conversation so far
 */
export function applyRecord(model: RunModel, record: InspectionRecord, chart: ChartIndex): void {
	model.applied++;
	model.origin ??= record.t;
	model.lastT = Math.max(model.lastT ?? record.t, record.t);
	model.lastSeq = record.seq;
	const place: RecordPlace = { seq: record.seq, t: record.t, sessionId: record.sessionId };
	switch (record.type) {
		case "@xstate.actor":
			applyActor(model, chart, record);
			break;
		case "@xstate.snapshot":
			applySnapshot(model, chart, record);
			break;
		case "@xstate.microstep": {
			if (record.sessionId !== model.agent) break;
			const moving = record.transitions.filter((transition) => transition.targetIds.length > 0);
			if (moving.length > 0) setActive(model, chart, afterTransitions(chart, model.activeIds, moving));
			if (record.transitions.length > 0) model.lastTaken = record.transitions.map((transition) => transition.edgeId);
			break;
		}
		case "@agentchart.emitted":
			// Only the followed agent's events: a parent's or another agent's would mix conversations.
			if (record.sessionId !== model.agent) break;
			model.restoring = record.restored === true;
			applyEmitted(model, place, record.event, record.turn);
			model.restoring = undefined;
			break;
		case "@agentchart.deltas":
			model.deltas.count += record.count;
			model.deltas.chars += record.chars;
			if (record.segments) applyDeltas(model, record.sessionId, record.seq, record.segments);
			break;
		case "@agentchart.dropped":
			model.dropped += record.count;
			addEntry(model, { id: `e${record.seq}-dropped`, kind: "note", tone: "warn", text: `The inspector lost ${record.count} events in a burst.`, seq: record.seq, endSeq: record.seq, t: record.t, run: model.currentRun, turn: model.currentTurn, rev: 0 });
			break;
		default:
			break;
	}
}
