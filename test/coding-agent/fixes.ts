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
 * (`turn_start`, `message_start`/`message_end`, `turn_end`; one more message in `agent_end`,
 * in the session, and in what `get_state` counts and `get_messages` lists from then on).
 * agentchart ends the run after the batch's `turn_end`.
 *
 * @example
 * const expected = withoutDoomedTurn(rawPiObservation);
 */
export function withoutDoomedTurn(raw: Observation): Observation {
	const records: JsonObject[] = [];
	// The doomed messages seen so far: `get_state` counts them and `get_messages` lists them.
	const doomedMessages: string[] = [];
	for (let i = 0; i < raw.records.length; i++) {
		const record = raw.records[i] as JsonObject;
		const doomedMessage = recordMessage(raw.records[i + 1]);
		const doomed =
			record["type"] === "turn_start" &&
			raw.records[i + 1]?.["type"] === "message_start" &&
			isDoomedAbortMessage(doomedMessage) &&
			raw.records[i + 2]?.["type"] === "message_end" &&
			raw.records[i + 3]?.["type"] === "turn_end";
		if (doomed) {
			doomedMessages.push(JSON.stringify(recordMessage(raw.records[i + 2])));
			i += 3;
			continue;
		}
		if (record["type"] === "agent_end" && Array.isArray(record["messages"])) {
			const messages = record["messages"].filter((message) => !isDoomedAbortMessage(asObject(message)));
			records.push({ ...record, messages });
			continue;
		}
		const command = record["type"] === "response" ? record["command"] : undefined;
		if (command === "get_state" && doomedMessages.length > 0) {
			records.push(withData(record, (data) => ({ ...data, messageCount: Number(data["messageCount"]) - doomedMessages.length })));
			continue;
		}
		if (command === "get_messages" && doomedMessages.length > 0) {
			records.push(
				withData(record, (data) => {
					const messages = data["messages"];
					return Array.isArray(messages) ? { ...data, messages: messages.filter((message) => !doomedMessages.includes(JSON.stringify(message))) } : data;
				}),
			);
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

function isUserMessageRecord(record: JsonObject | undefined, type: "message_start" | "message_end"): boolean {
	return record?.["type"] === type && recordMessage(record)?.["role"] === "user";
}

/** The text of a user message whose content is one text block (as the RPC `steer` sends it). */
function userText(message: JsonObject | undefined): string | undefined {
	const content = message?.["content"];
	const first = Array.isArray(content) && content.length === 1 ? asObject(content[0]) : undefined;
	return first?.["type"] === "text" && typeof first["text"] === "string" ? first["text"] : undefined;
}

/** pi's doomed turn opened by queued steers: the steers' records, the doomed message, and where the turn ends. */
interface DoomedTurnWithSteers {
	steerRecords: JsonObject[];
	steers: JsonObject[];
	doomed: JsonObject;
	lastIndex: number;
}

/**
 * At `records[start]`, a `turn_start` followed by the steers pi injects (each a `queue_update`
 * and the user message's `message_start`/`message_end`), then the empty aborted assistant
 * message of the doomed call and the `turn_end`.
 */
function doomedTurnWithSteers(records: readonly JsonObject[], start: number): DoomedTurnWithSteers | undefined {
	if (records[start]?.["type"] !== "turn_start") return undefined;
	const steerRecords: JsonObject[] = [];
	const steers: JsonObject[] = [];
	let index = start + 1;
	for (;;) {
		const record = records[index];
		if (record?.["type"] === "queue_update") {
			steerRecords.push(record);
			index++;
		} else if (isUserMessageRecord(record, "message_start") && isUserMessageRecord(records[index + 1], "message_end")) {
			steerRecords.push(record as JsonObject, records[index + 1] as JsonObject);
			steers.push(recordMessage(records[index + 1]) as JsonObject);
			index += 2;
		} else break;
	}
	const doomed = recordMessage(records[index]);
	const doomedTurn =
		steers.length > 0 &&
		records[index]?.["type"] === "message_start" &&
		isDoomedAbortMessage(doomed) &&
		records[index + 1]?.["type"] === "message_end" &&
		records[index + 2]?.["type"] === "turn_end";
	return doomedTurn && doomed ? { steerRecords, steers, doomed, lastIndex: index + 2 } : undefined;
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
	return JSON.stringify(a) === JSON.stringify(b);
}

/** `messages` without `removed`, and with `moved` right after `after` when it is given and present. */
function rearranged(messages: Json[], removed: readonly JsonObject[], moved: readonly JsonObject[], after: JsonObject | undefined): Json[] {
	const kept = messages.filter((message) => !removed.some((gone) => sameJson(gone, message)) && !moved.some((steer) => sameJson(steer, message)));
	if (!after) return kept;
	const at = kept.findIndex((message) => sameJson(message, after));
	if (at === -1) return kept;
	return [...kept.slice(0, at + 1), ...moved, ...kept.slice(at + 1)];
}

/** A response record with its `data` changed. */
function withData(record: JsonObject, change: (data: JsonObject) => JsonObject): JsonObject {
	const data = asObject(record["data"]);
	return data ? { ...record, data: change(data) } : record;
}

/**
 * Fixes 1 and 3 together, for an abort during a tool while a steer is queued: pi's doomed turn
 * after the aborted batch opens with the queued steers (each its `queue_update`, `message_start`,
 * `message_end`), then the empty aborted assistant message. agentchart ends the run after the
 * batch and keeps the steers queued; the next run takes them at its start, as pi's loop takes
 * any steer queued before a run: right after the run's prompt. So, in pi's observation:
 *
 * - the doomed turn goes (fix 1); its steer records move to just after the next prompt's
 *   `message_end`;
 * - the aborted run's `agent_end` loses the doomed message and the steers; the next run's lists
 *   the steers after its prompt;
 * - between the runs, `get_state` counts the steers as pending, not as messages, and
 *   `get_messages` leaves them out; after the next prompt, both have them after it, and no
 *   doomed message;
 * - in the session file and in each request of the next run, the steers follow the prompt (a
 *   request's cache mark stays on its last message).
 *
 * A follow-up queued beside the steer stays queued in both engines: nothing changes for it.
 *
 * @example
 * const expected = withAbortedQueue(rawPiObservation);
 */
export function withAbortedQueue(raw: Observation): Observation {
	const records: JsonObject[] = [];
	let turn: DoomedTurnWithSteers | undefined;
	let phase: "before" | "queued" | "next run" | "delivered" = "before";
	let prompt: JsonObject | undefined;
	let nextRunEnded = false;
	for (let i = 0; i < raw.records.length; i++) {
		const record = raw.records[i] as JsonObject;
		const doomedTurn = phase === "before" ? doomedTurnWithSteers(raw.records, i) : undefined;
		if (doomedTurn) {
			turn = doomedTurn;
			phase = "queued";
			i = doomedTurn.lastIndex;
			continue;
		}
		if (!turn || phase === "before") {
			records.push(record);
			continue;
		}
		const { steers, doomed } = turn;
		const command = record["type"] === "response" ? record["command"] : undefined;
		if (record["type"] === "agent_end" && Array.isArray(record["messages"]) && !nextRunEnded) {
			const delivered = phase === "delivered";
			nextRunEnded = delivered;
			records.push({ ...record, messages: rearranged(record["messages"], [doomed], steers, delivered ? prompt : undefined) });
		} else if (command === "get_state") {
			const pending = phase === "delivered" ? 0 : steers.length;
			records.push(
				withData(record, (data) => ({
					...data,
					messageCount: Number(data["messageCount"]) - 1 - pending,
					pendingMessageCount: Number(data["pendingMessageCount"]) + pending,
				})),
			);
		} else if (command === "get_messages") {
			records.push(
				withData(record, (data) => {
					const messages = data["messages"];
					return Array.isArray(messages) ? { ...data, messages: rearranged(messages, [doomed], steers, phase === "delivered" ? prompt : undefined) } : data;
				}),
			);
		} else if (phase === "next run" && isUserMessageRecord(record, "message_end")) {
			prompt = recordMessage(record);
			phase = "delivered";
			records.push(record, ...turn.steerRecords);
		} else {
			if (phase === "queued" && record["type"] === "agent_start") phase = "next run";
			records.push(record);
		}
	}
	if (!turn) throw new Error("withAbortedQueue: pi made no doomed turn with a queued steer");
	const { steers, doomed } = turn;
	const sessions = raw.sessions.map((entries) => relinked(entries, doomed, steers, prompt));
	const promptText = userText(prompt);
	const steerTexts = steers.map(userText);
	const requests = raw.requests.map((request) => {
		const messages = request["messages"];
		if (!Array.isArray(messages) || promptText === undefined) return request;
		const at = messages.findIndex((message, index) => index >= steers.length && userText(asObject(message)) === promptText && steerTexts.every((text, k) => userText(asObject(messages[index - steers.length + k])) === text));
		if (at === -1) return request;
		const first = at - steers.length;
		const moved = [messages[at] as Json, ...messages.slice(first, at)];
		const reordered = [...messages.slice(0, first), ...moved, ...messages.slice(at + 1)];
		return { ...request, messages: at === messages.length - 1 ? withCacheMarkOnLast(reordered, messages.length - 1, first) : reordered };
	});
	return { ...raw, records, sessions, requests };
}

/**
 * pi-ai marks the last message of a request for caching (`cache_control` on its last block):
 * after the reorder the prompt that had the mark is at `from`, and the mark belongs at `to`.
 */
function withCacheMarkOnLast(messages: Json[], to: number, from: number): Json[] {
	const blocks = (message: Json | undefined) => {
		const content = asObject(message)?.["content"];
		return Array.isArray(content) ? content : undefined;
	};
	const fromBlocks = blocks(messages[from]);
	const toBlocks = blocks(messages[to]);
	const marked = asObject(fromBlocks?.[fromBlocks.length - 1]);
	const target = asObject(toBlocks?.[toBlocks.length - 1]);
	if (!fromBlocks || !toBlocks || !marked || !target || marked["cache_control"] === undefined) return messages;
	const { cache_control: mark, ...unmarked } = marked;
	const out = [...messages];
	out[from] = { ...(asObject(messages[from]) as JsonObject), content: [...fromBlocks.slice(0, -1), unmarked] };
	out[to] = { ...(asObject(messages[to]) as JsonObject), content: [...toBlocks.slice(0, -1), { ...target, cache_control: mark as Json }] };
	return out;
}

/**
 * A linear session's entries without the doomed message, with the steers after the prompt, each
 * entry's `parentId` the entry before it (as a session written in that order has).
 */
function relinked(entries: JsonObject[], doomed: JsonObject, steers: readonly JsonObject[], prompt: JsonObject | undefined): JsonObject[] {
	const isOneOf = (entry: JsonObject, messages: readonly JsonObject[]) => messages.some((message) => sameJson(message, entry["message"]));
	const linear = entries.every((entry, index) => index < 2 || entry["parentId"] === entries[index - 1]?.["id"]);
	if (!linear) throw new Error("withAbortedQueue: the session is not one branch");
	const moved = entries.filter((entry) => isOneOf(entry, steers));
	const kept = entries.filter((entry) => !isOneOf(entry, [doomed]) && !isOneOf(entry, steers));
	const at = prompt ? kept.findIndex((entry) => isOneOf(entry, [prompt])) : -1;
	const ordered = at === -1 ? kept : [...kept.slice(0, at + 1), ...moved, ...kept.slice(at + 1)];
	return ordered.map((entry, index) => (index < 2 || entry["parentId"] === ordered[index - 1]?.["id"] ? entry : { ...entry, parentId: ordered[index - 1]?.["id"] ?? null }));
}
