/**
 * Removes what legitimately differs between two runs of the same scenario, and nothing else:
 * clock readings, random ids, and the temporary paths.
 *
 * - every `timestamp` field (ms numbers in messages, ISO strings in session entries) → `"<time>"`;
 * - the session's random ids (the header's UUID, the 8-hex entry ids) → `<id1>`, `<id2>`, ... in
 *   order of first appearance in the session file, everywhere they occur (including file names
 *   and references such as `parentId`, `firstKeptEntryId`);
 * - the workspace's temp root → `<root>`, the repository path → `<repo>`;
 * - the date in the system prompt (`Current date: ...`) → `<date>`;
 * - the time stamp in a session file's name (`2026-01-02T03-04-05-678Z_<id1>.jsonl`) → `<time>`;
 * - the model server's port (`http://127.0.0.1:41234`) → `<server>`.
 *
 * Key order is kept: JSON clients print events as they come, so it is part of what is compared.
 */
import { REPO_ROOT } from "./engine.js";
import type { Json, JsonObject } from "./harness.js";
import type { Observation } from "./observe.js";

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ENTRY_ID = /^[0-9a-f]{8}$/;

/** Collects the random ids of the session files, in order of first appearance. */
function collectIds(sessions: JsonObject[][]): string[] {
	const ids: string[] = [];
	for (const entry of sessions.flat()) {
		for (const key of ["id", "parentId"]) {
			const value = entry[key];
			if (typeof value === "string" && (SESSION_ID.test(value) || ENTRY_ID.test(value)) && !ids.includes(value)) ids.push(value);
		}
	}
	return ids;
}

function replaceAll(text: string, from: string, to: string): string {
	return from === "" ? text : text.split(from).join(to);
}

function normalizeString(text: string, root: string, ids: readonly string[]): string {
	let out = replaceAll(text, root, "<root>");
	out = replaceAll(out, REPO_ROOT, "<repo>");
	out = out.replace(/Current date: \d{4}-\d{2}-\d{2}/g, "Current date: <date>");
	out = out.replace(/\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z_/g, "<time>_");
	out = out.replace(/http:\/\/127\.0\.0\.1:\d+/g, "<server>");
	ids.forEach((id, i) => {
		out = replaceAll(out, id, `<id${i + 1}>`);
	});
	return out;
}

function normalizeValue(value: Json, root: string, ids: readonly string[]): Json {
	if (typeof value === "string") return normalizeString(value, root, ids);
	if (Array.isArray(value)) return value.map((item) => normalizeValue(item, root, ids));
	if (value !== null && typeof value === "object") {
		const out: JsonObject = {};
		for (const [key, item] of Object.entries(value)) {
			out[key] = key === "timestamp" && (typeof item === "number" || typeof item === "string") ? "<time>" : normalizeValue(item, root, ids);
		}
		return out;
	}
	return value;
}

function normalizeObjects(values: JsonObject[], root: string, ids: readonly string[]): JsonObject[] {
	return values.map((value) => normalizeValue(value, root, ids) as JsonObject);
}

/**
 * Normalises one observation (its workspace path is `raw.root`).
 *
 * @example
 * normalizeObservation(raw).records[0]; // {"type":"session","version":3,"id":"<id1>",...}
 */
export function normalizeObservation(raw: Observation): Observation {
	const { root } = raw;
	const ids = collectIds(raw.sessions);
	return {
		...raw,
		root: "<root>",
		stdout: normalizeString(raw.stdout, root, ids),
		records: normalizeObjects(raw.records, root, ids),
		sessions: raw.sessions.map((entries) => normalizeObjects(entries, root, ids)),
		requests: normalizeObjects(raw.requests, root, ids),
		stderr: normalizeString(raw.stderr, root, ids),
	};
}
