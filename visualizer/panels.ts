/**
 * The side panels: child actors, queues and counters, and the event log with filters.
 * Each panel keeps its own small model and re-renders only its part of the page.
 */
import type { InspectionRecord } from "../src/inspect/records.js";
import type { AgentContextSummary, ToolCallSummary } from "../src/inspect/summarize.js";

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
	const node = document.createElement(tag);
	if (className) node.className = className;
	if (text !== undefined) node.textContent = text;
	return node;
}

function formatDuration(ms: number): string {
	return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

interface ActorRow {
	sessionId: string;
	actorId: string;
	src?: string;
	startedAt: number;
	endedAt?: number;
	status: string;
	tool?: ToolCallSummary;
	row: HTMLLIElement;
}

/**
 * Child actors of the agent (the stream actor, the tool batch, compaction) and a row per tool
 * call: the calls share one batch actor, and the context summary says where each one is.
 */
export class ActorsPanel {
	private readonly rows = new Map<string, ActorRow>();
	/** Clock of the data being shown: wall time live, the record's time in replays. */
	private now = 0;

	constructor(private readonly list: HTMLElement) {}

	addActor(record: Extract<InspectionRecord, { type: "@xstate.actor" }>): void {
		const row = element("li", "actor");
		row.dataset["actorId"] = record.actorId;
		row.dataset["sessionId"] = record.sessionId;
		const entry: ActorRow = { sessionId: record.sessionId, actorId: record.actorId, startedAt: record.t, status: record.snapshot.status, row };
		if (record.src) entry.src = record.src;
		this.rows.set(record.sessionId, entry);
		this.list.prepend(row);
		this.trim();
		this.render(entry);
	}

	updateStatus(sessionId: string, status: string, t: number): void {
		const entry = this.rows.get(sessionId);
		if (!entry || entry.status === status) return;
		entry.status = status;
		if (status !== "active") entry.endedAt ??= t;
		this.render(entry);
	}

	/**
	 * Tool call states from the agent's context summary: a `tool:<key>` row per call (two calls
	 * with one id have two keys), active until it settles.
	 */
	updateToolCalls(calls: readonly ToolCallSummary[], t: number): void {
		for (const call of calls) {
			const callKey = call.key ?? call.id;
			const key = `call:${callKey}`;
			let entry = this.rows.get(key);
			if (!entry) {
				const row = element("li", "actor");
				row.dataset["actorId"] = `tool:${callKey}`;
				row.dataset["sessionId"] = key;
				entry = { sessionId: key, actorId: `tool:${callKey}`, startedAt: t, status: "active", row };
				this.rows.set(key, entry);
				this.list.prepend(row);
				this.trim();
			}
			const status = call.status === "settled" ? "done" : "active";
			if (call.status === entry.tool?.status && call.isError === entry.tool?.isError && status === entry.status) continue;
			entry.tool = call;
			entry.status = status;
			if (status !== "active") entry.endedAt ??= t;
			this.render(entry);
		}
	}

	/** Re-renders running actors' durations. */
	tick(now: number): void {
		this.now = now;
		for (const entry of this.rows.values()) if (entry.endedAt === undefined) this.render(entry);
	}

	clear(): void {
		this.rows.clear();
		this.list.replaceChildren();
	}

	private trim(): void {
		// Old, finished actors scroll away; a long session keeps the panel small.
		while (this.list.children.length > 60) {
			const last = this.list.lastElementChild as HTMLElement | null;
			if (!last) break;
			this.rows.delete(last.dataset["sessionId"] ?? "");
			last.remove();
		}
	}

	private render(entry: ActorRow): void {
		const { row } = entry;
		const status = entry.tool && entry.status === "active" ? entry.tool.status : entry.status;
		row.dataset["status"] = entry.status;
		row.className = `actor ${entry.actorId.startsWith("tool:") ? "tool" : entry.actorId} status-${status}${entry.tool?.isError ? " error" : ""}`;
		const end = entry.endedAt ?? Math.max(this.now, entry.startedAt);
		const label = entry.tool ? `${entry.actorId} · ${entry.tool.name}` : entry.actorId;
		const badge = entry.tool?.status === "settled" || entry.status !== "active" ? (entry.tool?.isError ? "error" : entry.status === "active" ? "settled" : entry.status) : status;
		row.replaceChildren(
			element("span", "actor-name", label),
			element("span", `badge badge-${badge}`, badge),
			element("span", "duration", formatDuration(end - entry.startedAt)),
		);
	}
}

/** Queue lengths and run counters from the agent's context summary. */
export class QueuesPanel {
	constructor(private readonly table: HTMLElement) {}

	update(summary: AgentContextSummary): void {
		const rows: [string, string, string][] = [
			["steering", "Steering queue", `${summary.steeringQueue}${summary.steeringMode ? ` (${summary.steeringMode})` : ""}`],
			["followUp", "Follow-up queue", `${summary.followUpQueue}${summary.followUpMode ? ` (${summary.followUpMode})` : ""}`],
			["messages", "Messages", String(summary.messages)],
			["turn", "Turn", summary.run?.turn !== undefined ? String(summary.run.turn) : "–"],
			["attempt", "LLM calls this run", summary.run?.attempt !== undefined ? String(summary.run.attempt) : "–"],
			["tools", "Tools", String(summary.tools)],
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

/** Log categories the filter checkboxes toggle. */
export type LogCategory = "received" | "emitted" | "transition" | "actor" | "delta";

const MAX_LOG_ROWS = 1500;

/** The scrolling event log with category and text filters. */
export class EventLog {
	private readonly hidden = new Set<LogCategory>();
	private text = "";
	private firstT: number | undefined;
	/** Follow the tail unless the user scrolled up to read. */
	private follow = true;
	private scrollPending = false;

	constructor(private readonly list: HTMLElement, filters: HTMLElement, search: HTMLInputElement) {
		list.addEventListener("scroll", () => {
			this.follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 24;
		});
		for (const input of Array.from(filters.querySelectorAll<HTMLInputElement>("input[type=checkbox][data-category]"))) {
			const category = input.dataset["category"] as LogCategory;
			if (!input.checked) this.hidden.add(category);
			input.addEventListener("change", () => {
				if (input.checked) this.hidden.delete(category);
				else this.hidden.add(category);
				this.applyFilters();
			});
		}
		search.addEventListener("input", () => {
			this.text = search.value.trim().toLowerCase();
			this.applyFilters();
		});
	}

	add(record: InspectionRecord, describeSession: (sessionId: string | undefined) => string): void {
		const entry = this.describe(record, describeSession);
		if (!entry) return;
		this.firstT ??= record.t;
		const row = element("li", `row ${entry.category}`);
		row.dataset["category"] = entry.category;
		row.dataset["type"] = entry.type;
		row.append(
			element("span", "seq", String(record.seq)),
			element("span", "time", `+${((record.t - this.firstT) / 1000).toFixed(3)}`),
			element("span", "who", entry.who),
			element("span", "type", entry.type),
			element("span", "detail", entry.detail),
		);
		row.hidden = !this.visible(row);
		this.list.append(row);
		while (this.list.children.length > MAX_LOG_ROWS) this.list.firstElementChild?.remove();
		// One scroll per frame, not per row: reading scrollHeight forces a layout.
		if (this.follow && !this.scrollPending) {
			this.scrollPending = true;
			requestAnimationFrame(() => {
				this.scrollPending = false;
				if (this.follow) this.list.scrollTop = this.list.scrollHeight;
			});
		}
	}

	clear(): void {
		this.list.replaceChildren();
		this.firstT = undefined;
		this.follow = true;
	}

	private visible(row: HTMLElement): boolean {
		if (this.hidden.has(row.dataset["category"] as LogCategory)) return false;
		return this.text === "" || (row.textContent ?? "").toLowerCase().includes(this.text);
	}

	private applyFilters(): void {
		for (const row of Array.from(this.list.children)) (row as HTMLElement).hidden = !this.visible(row as HTMLElement);
	}

	private describe(
		record: InspectionRecord,
		describeSession: (sessionId: string | undefined) => string,
	): { category: LogCategory; who: string; type: string; detail: string } | undefined {
		switch (record.type) {
			case "@xstate.event": {
				const { type, ...rest } = record.event;
				if (type.startsWith("xstate.init") || type === "xstate.promise.resolve") return undefined;
				const inner = (rest["event"] as { type?: string } | undefined)?.type;
				const category: LogCategory = type === "stream.event" && inner !== "start" ? "delta" : "received";
				return { category, who: `${describeSession(record.sourceId)} → ${describeSession(record.sessionId)}`, type, detail: JSON.stringify(rest) };
			}
			case "@agentchart.emitted": {
				const { type, ...rest } = record.event;
				const category: LogCategory = type === "message_update" || type === "agentchart.barrier" ? "delta" : "emitted";
				return { category, who: `${describeSession(record.sessionId)} emits`, type, detail: JSON.stringify(rest) };
			}
			case "@xstate.microstep": {
				if (record.transitions.every((transition) => transition.targetIds.length === 0)) return undefined;
				const detail = record.transitions
					.map((transition) => `${transition.sourceId.split(".").pop()} → ${transition.targetIds.map((id) => id.split(".").pop()).join(", ")}`)
					.join("; ");
				return { category: "transition", who: describeSession(record.sessionId), type: record.event.type || "(eventless)", detail };
			}
			case "@xstate.actor":
				return { category: "actor", who: describeSession(record.parentId), type: "spawn", detail: `${record.actorId}${record.src ? ` (${record.src})` : ""}` };
			case "@agentchart.deltas":
				return { category: "delta", who: `${describeSession(record.sessionId)} streams`, type: "message_update", detail: `×${record.count} (${record.chars} characters)` };
			case "@agentchart.dropped":
				return { category: "actor", who: "inspector", type: "dropped", detail: `${record.count} events lost in a burst` };
			default:
				return undefined;
		}
	}
}
