/**
 * A payload as a readable tree: objects and arrays open and close (the first levels open),
 * strings keep their line breaks, and a value the inspector cut short says so (the limit can be
 * raised with the inspector's `payload` option).
 */
import type { PreviewJson } from "../../src/inspect/summarize.js";
import { element } from "./dom.js";

/** Levels always shown open when a payload is first expanded; deeper nodes open when small. */
const OPEN_LEVELS = 2;
/** A node with at most this many values inside is shown open, however deep. */
const SMALL = 24;

/** Values inside a value, counted up to `limit`. */
function weight(value: PreviewJson, limit = SMALL + 1): number {
	if (value === null || typeof value !== "object") return 1;
	let total = 1;
	for (const child of Array.isArray(value) ? value : Object.values(value)) {
		total += weight(child, limit - total);
		if (total >= limit) break;
	}
	return total;
}
/** The marks previewValue leaves where it cut: `…(+120)`, `{…4 keys}`, `[Array(9)]`. */
const CUT = /…\(\+\d+\)$|^\{…\d+ keys\}$|^\[Array\(\d+\)\]$|^…\(\+\d+\)$/;

function scalar(value: PreviewJson): HTMLElement {
	if (typeof value === "string") {
		const cut = CUT.test(value);
		const node = element("span", `json-string${value.includes("\n") ? " multiline" : ""}${cut ? " cut" : ""}`, value);
		if (cut) node.title = "Cut short by the inspector (raise createAgentInspector's payload limits to keep more)";
		return node;
	}
	if (value === null) return element("span", "json-null", "null");
	return element("span", typeof value === "number" ? "json-number" : "json-boolean", String(value));
}

function summaryOf(value: PreviewJson[] | { [key: string]: PreviewJson }): string {
	return Array.isArray(value) ? `[${value.length} item${value.length === 1 ? "" : "s"}]` : `{${Object.keys(value).length} key${Object.keys(value).length === 1 ? "" : "s"}}`;
}

function node(key: string | undefined, value: PreviewJson, depth: number): HTMLElement {
	const label = key === undefined ? undefined : element("span", "json-key", `${key}: `);
	if (value === null || typeof value !== "object") {
		const line = element("div", "json-line");
		if (label) line.append(label);
		line.append(scalar(value));
		return line;
	}
	const entries: [string, PreviewJson][] = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
	if (entries.length === 0) {
		const line = element("div", "json-line");
		if (label) line.append(label);
		line.append(element("span", "json-empty", Array.isArray(value) ? "[]" : "{}"));
		return line;
	}
	const details = element("details", "json-node");
	details.open = depth < OPEN_LEVELS || weight(value) <= SMALL;
	const summary = element("summary");
	if (label) summary.append(label);
	summary.append(element("span", "json-count", summaryOf(value)));
	details.append(summary);
	// Children are built when first opened: a closed node of a long payload costs nothing.
	const fill = () => {
		if (details.childElementCount > 1) return;
		const body = element("div", "json-children");
		for (const [childKey, child] of entries) body.append(node(childKey, child, depth + 1));
		details.append(body);
	};
	if (details.open) fill();
	else details.addEventListener("toggle", fill, { once: true });
	return details;
}

/**
 * The tree for a payload.
 *
 * @example
 * row.append(payloadView({ message: { role: "user", content: "hi" } }));
 */
export function payloadView(value: PreviewJson | undefined): HTMLElement {
	const root = element("div", "payload");
	if (value === undefined) {
		root.append(element("span", "json-empty", "no payload"));
		return root;
	}
	if (value !== null && typeof value === "object" && !Array.isArray(value)) {
		for (const [key, child] of Object.entries(value)) root.append(node(key, child, 1));
		if (Object.keys(value).length === 0) root.append(element("span", "json-empty", "no payload"));
	} else {
		root.append(node(undefined, value, 1));
	}
	return root;
}
