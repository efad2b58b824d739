/**
 * The documented fixes (docs/from-pi.md, "Differences from pi-agent-core 0.73.1"), applied to what pi
 * showed, to get what agentchart must show. Only fixes that a scenario here can observe are
 * written out; each takes a raw (not yet normalised) observation.
 */
import type { Json, JsonObject } from "./harness.js";
import type { Observation } from "./observe.js";

function asObject(value: Json | undefined): JsonObject | undefined {
	return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

/** pi's empty assistant message from the LLM call it makes after an abort during tools. */
function isDoomedAbortMessage(message: JsonObject | undefined): boolean {
	return (
		message !== undefined &&
		message["role"] === "assistant" &&
		message["stopReason"] === "aborted" &&
		Array.isArray(message["content"]) &&
		message["content"].length === 0
	);
}

function recordMessage(record: JsonObject | undefined): JsonObject | undefined {
	return record ? asObject(record["message"]) : undefined;
}

/**
 * Fix 1, "Abort during tool execution": after the aborted batch, pi starts another turn and
 * calls the model with the aborted signal, which records an empty aborted assistant message
 * (`turn_start`, `message_start`/`message_end`, `turn_end`; one more message in `agent_end`
 * and in the session). agentchart ends the run after the batch's `turn_end`.
 *
 * @example
 * const expected = withoutDoomedTurn(rawPiObservation);
 */
export function withoutDoomedTurn(raw: Observation): Observation {
	const records: JsonObject[] = [];
	for (let i = 0; i < raw.records.length; i++) {
		const record = raw.records[i] as JsonObject;
		const doomed =
			record["type"] === "turn_start" &&
			raw.records[i + 1]?.["type"] === "message_start" &&
			isDoomedAbortMessage(recordMessage(raw.records[i + 1])) &&
			raw.records[i + 2]?.["type"] === "message_end" &&
			raw.records[i + 3]?.["type"] === "turn_end";
		if (doomed) {
			i += 3;
			continue;
		}
		if (record["type"] === "agent_end" && Array.isArray(record["messages"])) {
			const messages = record["messages"].filter((message) => !isDoomedAbortMessage(asObject(message)));
			records.push({ ...record, messages });
			continue;
		}
		records.push(record);
	}
	const sessions = raw.sessions.map((entries) => {
		const kept: JsonObject[] = [];
		const replacedParent = new Map<string, Json>();
		for (const entry of entries) {
			if (entry["type"] === "message" && isDoomedAbortMessage(asObject(entry["message"]))) {
				replacedParent.set(String(entry["id"]), entry["parentId"] ?? null);
				continue;
			}
			const parentId = entry["parentId"];
			kept.push(typeof parentId === "string" && replacedParent.has(parentId) ? { ...entry, parentId: replacedParent.get(parentId) ?? null } : entry);
		}
		return kept;
	});
	return { ...raw, records, sessions };
}

/** pi-ai's message for one missing required property at the top level: `- path: must have required properties path`. */
const PI_MISSING_TOP_LEVEL_PROPERTY = /( {2}- )([A-Za-z_$][\w$]*)(: must have required properties )\2(?![\w$,])/g;

function withRootPath(value: Json): Json {
	if (typeof value === "string") return value.replace(PI_MISSING_TOP_LEVEL_PROPERTY, "$1root$3$2");
	if (Array.isArray(value)) return value.map(withRootPath);
	if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withRootPath(item)]));
	return value;
}

/**
 * "A missing required property is reported at the object that lacks it" (docs/from-pi.md, "Also
 * observable, and deliberate"): pi-ai's `- path: must have required properties path` for a
 * top-level property is agentchart's `- root: must have required properties path`, in every
 * record, session entry and request that carries the tool result.
 *
 * @example
 * const expected = withMissingPropertyAtRoot(rawPiObservation);
 */
export function withMissingPropertyAtRoot(raw: Observation): Observation {
	const objects = (values: JsonObject[]) => values.map((value) => withRootPath(value) as JsonObject);
	return { ...raw, records: objects(raw.records), sessions: raw.sessions.map(objects), requests: objects(raw.requests) };
}
