/**
 * Paired, order-balanced repetitions. A comparison on a shared machine is only fair when both
 * contenders see the same conditions, so every repetition (a "round") takes one sample of each
 * contender back to back, and the ratio is computed per round, then summarized: a burst of
 * load from a neighbour moves both samples of its round, and shows as spread, not as a bias.
 *
 * Who goes first in a round matters too (the first runs right after a full collection, the
 * second after the first's garbage and JIT work), so the orders are balanced: with k
 * contenders every contender takes every position equally often over each k rounds (rotations
 * of a Latin square), and the sequence of rotations is shuffled by a seeded generator whose
 * seed the report prints, so a run can be repeated exactly.
 */
import { type Summary, summarize } from "./stats.js";
import { seededRandom } from "../../src/util/seeded-random.js";

/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

/**
 * A small seeded generator (mulberry32): the same seed gives the same orders.
 *
 * @example
 * const random = createRandom(42);
 * random(); // always the same first number for seed 42
 */
export function createRandom(seed: number): Random {
	return seededRandom(seed);
}

/**
 * A fresh seed (what a run uses when none is given on the command line).
 *
 * @example
 * const seed = randomSeed(); // e.g. 1804289383
 */
export function randomSeed(): number {
	return Math.floor(Math.random() * 2 ** 31);
}

/**
 * A shuffled copy (Fisher–Yates).
 *
 * @example
 * shuffle([1, 2, 3], createRandom(1)); // a permutation of 1, 2, 3
 */
export function shuffle<T>(items: readonly T[], random: Random): T[] {
	const copy = [...items];
	for (let i = copy.length - 1; i > 0; i--) {
		const j = Math.floor(random() * (i + 1));
		[copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
	}
	return copy;
}

/**
 * The order of the contenders in each of `rounds` rounds: rotations of a shuffled base order,
 * each rotation used once per block of k rounds, the blocks shuffled. Over every complete block
 * each contender runs first (and second, ...) exactly once.
 *
 * @example
 * roundOrders(["ours", "pi"], 4, createRandom(7)); // e.g. [[pi, ours], [ours, pi], [ours, pi], [pi, ours]]
 */
export function roundOrders<Name>(names: readonly Name[], rounds: number, random: Random): Name[][] {
	const base = shuffle(names, random);
	const k = base.length;
	const orders: Name[][] = [];
	while (orders.length < rounds) {
		const rotations = shuffle(
			base.map((_, offset) => offset),
			random,
		);
		for (const offset of rotations) {
			if (orders.length === rounds) break;
			orders.push(base.map((_, index) => base[(index + offset) % k] as Name));
		}
	}
	return orders;
}

/** How many rounds, and how they are ordered. */
export interface PairedOptions {
	/** Recorded rounds. */
	repetitions: number;
	/** Unrecorded rounds first (JIT, lazy module state, first-use caches). */
	warmups: number;
	/** The seeded generator that orders the rounds. */
	random: Random;
	/**
	 * Start every sample at once instead of one after another (smoke runs of child-process
	 * figures only: concurrent samples disturb each other, so nothing they give is a figure).
	 */
	concurrent?: boolean;
}

/**
 * Runs `measure` once per contender per round, in balanced shuffled orders (see
 * {@link roundOrders}), and returns the recorded samples per contender, aligned by round:
 * `samples[a][i]` and `samples[b][i]` were taken back to back.
 *
 * @example
 * const samples = await runPaired(["agentchart", "pi"], { repetitions: 5, warmups: 1, random }, (name) => timeOne(name));
 * pairedRatio(samples.agentchart, samples.pi).median;
 */
export async function runPaired<Name extends string>(
	names: readonly Name[],
	options: PairedOptions,
	measure: (name: Name, round: number) => Promise<number>,
): Promise<Record<Name, number[]>> {
	const samples = {} as Record<Name, number[]>;
	for (const name of names) samples[name] = [];
	const orders = roundOrders(names, options.warmups + options.repetitions, options.random);
	if (options.concurrent) {
		const rounds = await Promise.all(orders.map((order, round) => Promise.all(order.map(async (name) => ({ name, value: await measure(name, round) })))));
		for (const [round, values] of rounds.entries()) {
			if (round >= options.warmups) for (const { name, value } of values) samples[name].push(value);
		}
		return samples;
	}
	for (const [round, order] of orders.entries()) {
		for (const name of order) {
			const value = await measure(name, round);
			if (round >= options.warmups) samples[name].push(value);
		}
	}
	return samples;
}

/**
 * The ratio of two contenders' samples round by round (`numerator[i] / denominator[i]`),
 * summarized: the median ratio and the smallest and largest of the rounds.
 *
 * @example
 * pairedRatio([2, 4], [1, 1]); // { median: 3, min: 2, max: 4, samples: [2, 4] }
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): Summary {
	const ratios: number[] = [];
	const n = Math.min(numerator.length, denominator.length);
	for (let i = 0; i < n; i++) ratios.push((numerator[i] as number) / (denominator[i] as number));
	return summarize(ratios);
}
