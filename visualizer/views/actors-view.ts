/**
 * The actors and the agent's counters. Actors: every actor of the system with its status and
 * how long it lived (the agent's children first, newest on top), and a row per tool call with
 * its own status. Counters: queue lengths, messages, turn, calls, from the context summary.
 */
import { formatDuration } from "../model/format.js";
import type { RunModel } from "../model/types.js";
import { element } from "./dom.js";

const MAX_ROWS = 60;
const SPAN_BADGES: Record<string, string> = { open: "running", done: "done", error: "error", stopped: "stopped" };

export class ActorsView {
	constructor(private readonly list: HTMLElement) {}

	/** `now` is the cursor's time (the clock of what is shown). */
	render(model: RunModel, now: number): void {
		const rows: HTMLElement[] = [];
		const actors = Object.values(model.actors).sort((a, b) => b.createdT - a.createdT);
		for (const actor of actors) {
			const row = element("li", `actor status-${actor.status}`);
			row.dataset["actorId"] = actor.actorId;
			row.dataset["sessionId"] = actor.sessionId;
			row.dataset["status"] = actor.status;
			const role = actor.sessionId === model.agent ? " (followed)" : actor.parentId === undefined ? " (root)" : "";
			const name = actor.parentId === undefined || actor.sessionId === model.agent ? `${actor.name}${role}` : actor.actorId;
			row.append(element("span", "actor-name", `${name}${actor.src && actor.src !== actor.actorId ? ` · ${actor.src}` : ""}`), element("span", `badge badge-${actor.status}`, actor.status), element("span", "duration", formatDuration((actor.endedT ?? now) - actor.createdT)));
			rows.push(row);
		}
		const calls = model.spans.filter((span) => span.kind === "tool").reverse();
		for (const call of calls) {
			const row = element("li", `actor tool-call status-${call.status}`);
			const key = call.id;
			row.dataset["actorId"] = `call:${call.label}`;
			row.dataset["spanId"] = key;
			row.dataset["status"] = call.status === "open" ? "running" : call.status;
			row.append(element("span", "actor-name", `tool call · ${call.label}`), element("span", `badge badge-${call.status}`, SPAN_BADGES[call.status] ?? call.status), element("span", "duration", formatDuration((call.endT ?? now) - call.startT)));
			rows.push(row);
		}
		this.list.replaceChildren(...rows.slice(0, MAX_ROWS));
	}
}

export class ContextView {
	constructor(private readonly table: HTMLElement) {}

	render(model: RunModel): void {
		const summary = model.context;
		const rows: [string, string, string][] = [
			["steering", "Steering queue", summary ? `${summary.steeringQueue}${summary.steeringMode ? ` (${summary.steeringMode})` : ""}` : "–"],
			["followUp", "Follow-up queue", summary ? `${summary.followUpQueue}${summary.followUpMode ? ` (${summary.followUpMode})` : ""}` : "–"],
			["messages", "Messages", summary ? String(summary.messages) : "–"],
			["turn", "Turn of this run", summary?.run?.turn !== undefined ? String(summary.run.turn) : "–"],
			["attempt", "LLM calls this run", summary?.run?.attempt !== undefined ? String(summary.run.attempt) : "–"],
			["tools", "Tools", summary ? String(summary.tools) : "–"],
			["model", "Model", summary?.model ?? "–"],
			["runs", "Runs seen", String(model.runs)],
			["deltas", "Token deltas seen", `${model.deltas.count} (${model.deltas.chars} characters)`],
			["dropped", "Events lost", String(model.dropped)],
		];
		this.table.replaceChildren(
			...rows.map(([key, name, value]) => {
				const row = element("tr");
				row.dataset["key"] = key;
				row.append(element("th", undefined, name), element("td", undefined, value));
				return row;
			}),
		);
	}
}
