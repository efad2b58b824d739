/**
 * The conversation beside the chart, as it grows: the user's messages, the assistant's
 * thinking, text and tool calls (arguments as they stream), each tool call's result, approval
 * waits and notes. A click selects the entry's turn in every view.
 */
import type { PreviewJson } from "../../src/inspect/summarize.js";
import { formatDuration, formatOffset } from "../model/format.js";
import { contentText } from "../model/messages.js";
import { turnLabel } from "../model/spans.js";
import { type Selection } from "../model/selection.js";
import type { AssistantEntry, RunModel, SpanEntry, TranscriptEntry } from "../model/types.js";
import { type KeyedItem, TailFollower, element, reconcile } from "./dom.js";
import { payloadView } from "./payload-view.js";

const STATUS_WORDS: Record<string, string> = { open: "running", done: "done", error: "error", stopped: "stopped" };
const APPROVAL_WORDS: Record<string, string> = { open: "waiting", done: "approved", error: "rejected", stopped: "cancelled" };

/** A value shown inline when short, as a tree when not. */
function valueView(value: PreviewJson | undefined, className: string): HTMLElement {
	const inline = JSON.stringify(value ?? null);
	if (inline.length <= 90 && !inline.includes("\\n")) return element("code", `${className} inline-json`, inline);
	const box = element("div", className);
	box.append(payloadView(value));
	return box;
}

/** A tool result: its text content as text, anything else as a tree. */
function resultView(output: PreviewJson | undefined): HTMLElement {
	// A sentence (an approval's decision, a compaction's error) reads as one, not as JSON.
	if (typeof output === "string") return element("span", "result-text", output);
	if (output && typeof output === "object" && !Array.isArray(output) && output["content"] !== undefined) {
		const box = element("div", "result");
		box.append(element("pre", "result-text", contentText(output["content"])));
		const details = output["details"];
		if (details && typeof details === "object" && Object.keys(details).length > 0) {
			const line = element("div", "result-details");
			line.append(element("span", "field", "details"), valueView(details, "details"));
			box.append(line);
		}
		return box;
	}
	return valueView(output, "result");
}

export class TranscriptView {
	private readonly follower: TailFollower;
	private origin = 0;
	private selection: Selection | undefined;

	constructor(
		private readonly list: HTMLElement,
		private readonly onSelectEntry: (entry: TranscriptEntry) => void,
	) {
		this.follower = new TailFollower(list);
	}

	/** Shows the model's transcript (only what changed is drawn again). */
	render(model: RunModel): void {
		this.origin = model.origin ?? 0;
		const items: KeyedItem[] = [];
		let turn: number | undefined;
		for (const entry of model.transcript) {
			if (entry.turn !== undefined && entry.turn !== turn) {
				const index = entry.turn;
				const info = model.turns.find((candidate) => candidate.index === index);
				const duration = info?.endT !== undefined ? ` · ${formatDuration(info.endT - info.startT)}` : "";
				items.push({ key: `turn-${index}`, rev: info?.endT ?? 0, create: () => this.divider(index, `${turnLabel(info)}${duration}`) });
			}
			turn = entry.turn ?? turn;
			items.push({ key: entry.id, rev: entry.rev, create: () => this.entryView(entry) });
		}
		if (items.length === 0) items.push({ key: "empty", rev: 0, create: () => element("li", "empty", model.applied === 0 ? "Nothing yet: the conversation appears here as the agent runs." : "No messages yet.") });
		reconcile(this.list, items);
		this.applySelection(false);
		this.follower.request();
	}

	/** Lights up the selected turns' entries; `reveal` scrolls the first into view. */
	setSelection(selection: Selection | undefined, reveal: boolean): void {
		this.selection = selection;
		this.applySelection(reveal);
	}

	private applySelection(reveal: boolean): void {
		let first: HTMLElement | undefined;
		for (const node of Array.from(this.list.children) as HTMLElement[]) {
			const turn = Number(node.dataset["turn"]);
			const lit = this.selection !== undefined && (this.selection.entryId === node.dataset["key"] || this.selection.turns.includes(turn));
			node.classList.toggle("selected", lit);
			if (lit && !first) first = node;
		}
		if (reveal && first) first.scrollIntoView({ block: "nearest" });
	}

	private divider(turn: number, text: string): HTMLElement {
		const node = element("li", "turn-divider", text);
		node.dataset["turn"] = String(turn);
		return node;
	}

	private entryView(entry: TranscriptEntry): HTMLElement {
		const node = element("li", `entry ${entry.kind}`);
		node.dataset["entryId"] = entry.id;
		node.dataset["kind"] = entry.kind === "span" ? entry.spanKind : entry.kind;
		if (entry.turn !== undefined) node.dataset["turn"] = String(entry.turn);
		const head = element("div", "entry-head");
		node.append(head);
		const time = element("span", "time", formatOffset(entry.t - this.origin));
		if (entry.restored === true) {
			// Told from the agent's state at attach: it began earlier, at a time the state does not
			// keep. What was still going on then (a wait for approval) is timed from the attach.
			const ongoing = entry.kind === "span" && entry.endT !== entry.startT;
			time.textContent = ongoing ? "since attach" : "before attach";
			time.classList.add("restored");
			time.title = ongoing ? "Begun before the visualizer attached; its time counts from the attach" : "Shown from the agent's state when the visualizer attached";
		}
		switch (entry.kind) {
			case "user":
				head.append(element("span", "who", "User"), time);
				node.append(element("div", "text", entry.text));
				break;
			case "assistant":
				this.assistant(node, head, time, entry);
				break;
			case "span":
				this.span(node, head, time, entry);
				break;
			case "note":
				node.classList.add(entry.tone);
				head.append(element("span", "who", "Note"), time);
				node.append(element("div", "text", entry.text));
				break;
		}
		node.addEventListener("click", (event) => {
			if ((event.target as Element).closest("summary")) return;
			this.onSelectEntry(entry);
		});
		return node;
	}

	private assistant(node: HTMLElement, head: HTMLElement, time: HTMLElement, entry: AssistantEntry): void {
		head.append(element("span", "who", "Assistant"));
		if (entry.streaming) head.append(element("span", "badge badge-open", "streaming"));
		head.append(time);
		node.dataset["status"] = entry.streaming ? "open" : entry.stopReason ?? "stop";
		for (const block of entry.blocks) {
			if (block.type === "thinking") {
				const details = element("details", "thinking");
				details.open = true;
				details.append(element("summary", undefined, "Thinking"), element("div", "text", block.text));
				node.append(details);
			} else if (block.type === "text") {
				if (block.text !== "") node.append(element("div", "text", block.text));
			} else {
				const call = element("div", "tool-call");
				call.append(element("span", "call-label", `calls ${block.name || "a tool"}`));
				call.append(block.argsText !== undefined && entry.streaming ? element("code", "inline-json", block.argsText) : valueView(block.args, "args"));
				node.append(call);
			}
		}
		if (entry.errorMessage || (entry.stopReason && entry.stopReason !== "stop" && entry.stopReason !== "toolUse")) {
			node.append(element("div", "stop-reason", `stopped: ${entry.stopReason ?? "?"}${entry.errorMessage ? ` (${entry.errorMessage})` : ""}`));
		}
	}

	private span(node: HTMLElement, head: HTMLElement, time: HTMLElement, entry: SpanEntry): void {
		node.dataset["status"] = entry.status;
		const words = entry.spanKind === "approval" ? APPROVAL_WORDS : STATUS_WORDS;
		const kindLabel = entry.spanKind === "tool" ? "Tool" : entry.spanKind === "approval" ? "Approval" : entry.spanKind[0]?.toUpperCase() + entry.spanKind.slice(1);
		const title = element("span", "span-title", entry.title);
		title.title = entry.title;
		head.append(element("span", "who", kindLabel), title, element("span", `badge badge-${entry.status}`, (entry.status === "open" ? entry.openWord : undefined) ?? words[entry.status] ?? entry.status));
		// A call that had ended before the attach has no known length; a wait that ended after it is timed from the attach.
		if (entry.endT !== undefined && !(entry.restored === true && entry.endT === entry.startT)) head.append(element("span", "duration", formatDuration(entry.endT - entry.startT)));
		head.append(time);
		if (entry.input !== undefined) {
			const args = element("div", "span-input");
			args.append(element("span", "field", entry.spanKind === "tool" ? "arguments" : "request"), valueView(entry.input, "args"));
			node.append(args);
		}
		if (entry.output !== undefined) {
			const output = element("div", "span-output");
			output.append(element("span", "field", entry.spanKind === "tool" ? (entry.status === "open" ? "so far" : "result") : "outcome"), resultView(entry.output));
			node.append(output);
		}
	}
}
