/**
 * pi's coding agent on pi-agent-core and on agentchart, in the modes and features of
 * `mode-scenarios.ts`: queue modes, saved sessions (continue, fork), auto-retry, thinking,
 * images, streamed bash output, refused tool calls, abort during a retry wait, steering while
 * streaming, abort in the middle of a thinking block, a retry and an overflow in the middle of a
 * run.
 */
import {
	jsonAutoRetry,
	jsonBashStreaming,
	jsonContinueSession,
	jsonRefusedToolCalls,
	jsonRetryAfterTool,
	jsonRetryExhausted,
	jsonThinking,
	rpcAbortDuringRetry,
	rpcAbortMidThinking,
	rpcForkSession,
	rpcImages,
	rpcOverflowAfterTool,
	rpcQueueModesAll,
	rpcQueueModesOneAtATime,
	rpcSteerWhileStreaming,
} from "./mode-scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(rpcQueueModesAll);

describeScenario(rpcQueueModesOneAtATime);

describeScenario(jsonContinueSession);

describeScenario(rpcForkSession);

describeScenario(jsonAutoRetry);

describeScenario(jsonRetryExhausted);

describeScenario(jsonRetryAfterTool);

describeScenario(rpcOverflowAfterTool);

describeScenario(jsonThinking);

describeScenario(rpcImages);

describeScenario(jsonBashStreaming);

// Expected: pi with the missing property reported at the object that lacks it (docs/from-pi.md).
describeScenario(jsonRefusedToolCalls);

describeScenario(rpcAbortDuringRetry);

describeScenario(rpcSteerWhileStreaming);

describeScenario(rpcAbortMidThinking);
