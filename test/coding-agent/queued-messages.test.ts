/**
 * pi's coding agent on pi-agent-core and on agentchart, with steers and follow-ups queued over
 * RPC at the moments of `queue-scenarios.ts`: while idle, while waiting to retry, during threshold
 * compaction, with the queue modes changed while a tool runs, and with an abort; and repeated
 * aborts.
 */
import {
	rpcAbortStreamingWithSteer,
	rpcAbortToolWithQueue,
	rpcFollowUpsDuringThresholdCompaction,
	rpcQueuedDuringRetryWait,
	rpcQueuedWhileIdle,
	rpcQueueModeChangedDuringTool,
	rpcRepeatedAbort,
	rpcSteerDuringThresholdCompaction,
} from "./queue-scenarios.js";
import { describeScenario } from "./suite.js";

describeScenario(rpcQueuedWhileIdle);

describeScenario(rpcQueuedDuringRetryWait);

describeScenario(rpcSteerDuringThresholdCompaction);

describeScenario(rpcFollowUpsDuringThresholdCompaction);

describeScenario(rpcQueueModeChangedDuringTool);

// Expected: pi without its doomed extra turn (documented fix 1).
describeScenario(rpcRepeatedAbort);

describeScenario(rpcAbortStreamingWithSteer);

// Expected: pi without its doomed extra turn, the steers kept queued for the next run, which
// takes them after its prompt (documented fixes 1 and 3).
describeScenario(rpcAbortToolWithQueue);
