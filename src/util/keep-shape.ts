/**
 * One instance of each of a run's classes, kept for the life of the process.
 *
 * V8 gives every object a hidden class (a map), and optimized code is compiled against the maps
 * it saw, holding them weakly. A map that no live object has dies at a full collection (one that
 * optimized code embeds is spared for two at most), and every function compiled against it is
 * thrown away. A run's objects (its chart snapshots and steps, its actors with their scopes and
 * system, its cancellation, its tool batch) all die when the run ends; so a full collection
 * while no run was in progress (an idle CLI between prompts, V8's memory reducer, a gateway
 * between bursts) discarded about 90 of agentchart's optimized functions, and the next runs
 * paid for compiling them again: 1,000 concurrent runs after such a collection took 1.5 times
 * as long as without it. pi's run objects are mostly object literals, whose maps the literal
 * sites keep. An inert instance of each class keeps its map, and the code built for it, alive.
 *
 * test/util/keep-shape.test.ts checks that each kept instance has the map of the instances a
 * run makes; `npx tsx bench/concurrency.ts` measures the bursts.
 */

const kept: object[] = [];

/**
 * Keeps `instance` alive for the life of the process (see the module comment), and returns it.
 * Call it once per class, with an instance that holds nothing of a user's: it is never freed.
 *
 * @example
 * class Step {
 *   constructor(readonly context: object) {}
 *   static {
 *     keepShape(new Step({}));
 *   }
 * }
 */
export function keepShape<T extends object>(instance: T): T {
	kept.push(instance);
	return instance;
}

/**
 * The instances kept so far (for the test that checks their maps outlive a full collection).
 *
 * @example
 * for (const instance of keptShapes()) console.log(instance.constructor.name);
 */
export function keptShapes(): readonly object[] {
	return kept;
}
