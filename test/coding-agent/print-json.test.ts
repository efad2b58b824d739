/**
 * pi's coding agent in print mode (`-p`) and JSON mode (`--mode json -p`), on pi-agent-core
 * and on agentchart: same stdout, same JSON event lines, same session file, same requests.
 */
import { jsonOneChunk, jsonOverflow, jsonParallelTools, jsonPlain, jsonToolError, printPlain } from "./scenarios.js";
import { describeScenario } from "./suite.js";

/**
 * Print mode forwards events through a promise queue and unsubscribes as soon as `prompt()`
 * resolves; pi's `prompt()` resolves several microtasks after the `agent_end` listener is
 * called, ours after 2, so the last events never reach stdout. (Issue 13, "Settle when pi
 * settles".)
 */
const SETTLES_EARLY = "prompt() settles before pi's, so the final turn_end and agent_end are not printed";

/** `message_update` is `{type, message, assistantMessageEvent}`; pi's is `{type, assistantMessageEvent, message}`. */
const KEY_ORDER = "message_update keys are not in pi's order";

describeScenario(printPlain);

describeScenario(jsonPlain, {
	"event order": SETTLES_EARLY,
	"event content": SETTLES_EARLY,
	events: `${KEY_ORDER}; ${SETTLES_EARLY}`,
});

describeScenario(jsonParallelTools, {
	"event order": SETTLES_EARLY,
	"event content": SETTLES_EARLY,
	events: `${KEY_ORDER}; ${SETTLES_EARLY}`,
});

describeScenario(jsonToolError, {
	"event order": SETTLES_EARLY,
	"event content": SETTLES_EARLY,
	events: `${KEY_ORDER}; ${SETTLES_EARLY}`,
});

describeScenario(jsonOneChunk, {
	"event order": SETTLES_EARLY,
	// When SSE events arrive back to back, the snapshot of a message_update already contains
	// later stream events (a text_delta's message shows the next tool call).
	"event content": `message_update snapshots run ahead of their stream event; ${SETTLES_EARLY}`,
	events: `${KEY_ORDER}; snapshots run ahead; ${SETTLES_EARLY}`,
});

describeScenario(jsonOverflow, {
	// Here the overflowing reply's message_end, its turn_end and agent_end, and the session's
	// compaction_start are all lost.
	"event order": SETTLES_EARLY,
	"event content": SETTLES_EARLY,
	events: `${KEY_ORDER}; ${SETTLES_EARLY}`,
});
