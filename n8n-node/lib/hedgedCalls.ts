// A hedging item's calls out (issue 30): its call, and the hedges the engine sends while none has
// answered. The engine says when to ask for a hedge, where it goes, which answer wins and which
// calls to abort; this runs the calls side by side, the one timer and the aborts, and hands every
// outcome (and every aborted call) back to the engine in the order they came.
import type { Polled, Recorded, Step } from './engine';
import type { CallResult } from './transport';
import { Watch } from './timers';

export type CallStep = Extract<Step, { kind: 'call' }>;

export interface HedgeLoop {
	/** One call with its own abort signal (the item's cancel signal is folded in). A streamed
	 * call runs `claim()` before its first committing chunk reaches the caller and, when it
	 * answers false, stops without handing anything over (another call committed first). */
	send(
		step: CallStep,
		signal: AbortSignal,
		claim: (afterMs: number) => boolean,
	): Promise<CallResult>;
	/** The engine's hedge, its writes committed (a `call` or an `await`). */
	hedge(): Promise<Polled>;
	/** A call's outcome handed to the engine, its writes committed. */
	outcome(step: CallStep, result: CallResult): Promise<Recorded>;
	/** An aborted call handed back, its writes committed. */
	abandon(call: number): Promise<Recorded>;
	/** A streamed call's first committing chunk, `afterMs` after it started: the engine's list
	 * of calls to abort. */
	commit(call: number, afterMs: number): number[];
	cancel?: AbortSignal;
}

interface Out {
	step: CallStep;
	abort: AbortController;
	settled: Promise<Settled>;
}

type Settled = { call: number; result: CallResult } | { call: number; error: unknown };

/** Runs `first` and its hedges until no call of the item is out; returns the engine's answer to
 * the last call handed back (its `end`, or the wait before the next poll). */
export async function runHedged(first: CallStep, loop: HedgeLoop): Promise<Recorded> {
	const out = new Map<number, Out>();
	/** Calls the engine said to abort: whatever they settle with, they are handed back. */
	const aborted = new Set<number>();
	const abortCalls = (calls: ArrayLike<number>) => {
		for (const call of Array.from(calls)) {
			const o = out.get(call);
			if (!o || aborted.has(call)) continue;
			aborted.add(call);
			o.abort.abort();
		}
	};
	let timer: { watch: Watch; due: Promise<'hedge'> } | undefined;
	const arm = (ms: number | undefined) => {
		timer?.watch.stop();
		timer = undefined;
		if (ms === undefined) return;
		let fire = () => undefined as void;
		const due = new Promise<'hedge'>((resolve) => (fire = () => resolve('hedge')));
		timer = { watch: new Watch(ms, fire), due };
	};
	const start = (step: CallStep) => {
		const call = step.hedging!.call;
		const abort = new AbortController();
		const signal = loop.cancel ? AbortSignal.any([loop.cancel, abort.signal]) : abort.signal;
		const claim = (afterMs: number) => {
			const lost = loop.commit(call, afterMs);
			abortCalls(lost);
			const won = !Array.from(lost).includes(call);
			if (won) arm(undefined); // its answer is reaching the caller: no hedge for it now
			return won;
		};
		const settled = loop.send(step, signal, claim).then(
			(result): Settled => ({ call, result }),
			(error: unknown): Settled => ({ call, error }),
		);
		out.set(call, { step, abort, settled });
	};
	start(first);
	arm(first.hedging!.hedge_after_ms);
	try {
		for (;;) {
			const next = await Promise.race([
				...[...out.values()].map((o) => o.settled),
				...(timer ? [timer.due] : []),
			]);
			if (next === 'hedge') {
				timer = undefined;
				const polled = await loop.hedge();
				const step = polled.step;
				if (step.kind === 'call') start(step);
				arm(
					step.kind === 'call'
						? step.hedging?.hedge_after_ms
						: step.kind === 'await'
							? step.hedge_after_ms
							: undefined,
				);
				continue;
			}
			const settledOut = out.get(next.call)!;
			out.delete(next.call);
			let rec: Recorded;
			// Aborted on the engine's word: its connection is closed, what it says now is not its
			// provider's.
			if (aborted.has(next.call)) rec = await loop.abandon(next.call);
			else if ('error' in next)
				throw next.error; // the item was cancelled, or a fault
			else {
				rec = await loop.outcome(settledOut.step, next.result);
				abortCalls(rec.abort ?? []);
			}
			if (out.size === 0) return rec;
		}
	} finally {
		timer?.watch.stop();
		for (const o of out.values()) o.abort.abort();
	}
}
