/**
 * pi's coding agent in RPC mode (`--mode rpc`, JSON lines on stdin/stdout), on pi-agent-core and
 * on agentchart: abort while streaming, abort during a tool, steer and follow-up during a tool.
 */
import { rpcAbortStreaming, rpcAbortTool, rpcSteerFollowUp } from "./scenarios.js";
import { describeScenario } from "./suite.js";

/** `message_update` is `{type, message, assistantMessageEvent}`; pi's is `{type, assistantMessageEvent, message}`. */
const KEY_ORDER = "message_update keys are not in pi's order";

/**
 * The `abort` command awaits `agent.abort()` then `waitForIdle()`; ours settles before the run's
 * last events are delivered, so the response overtakes them. (Issue 13, "Settle when pi settles".)
 */
const ABORT_SETTLES_EARLY = "the abort response arrives before the run's turn_end and agent_end";

describeScenario(rpcAbortStreaming, {
	"event order": ABORT_SETTLES_EARLY,
	"event content": ABORT_SETTLES_EARLY,
	events: `${KEY_ORDER}; ${ABORT_SETTLES_EARLY}`,
});

// Expected: pi without its doomed extra LLM call after the aborted tool (documented fix 1).
describeScenario(rpcAbortTool, {
	"event order": `${ABORT_SETTLES_EARLY}, even before the tool result message`,
	"event content": ABORT_SETTLES_EARLY,
	events: `${KEY_ORDER}; ${ABORT_SETTLES_EARLY}`,
});

describeScenario(rpcSteerFollowUp, {
	events: KEY_ORDER,
});
