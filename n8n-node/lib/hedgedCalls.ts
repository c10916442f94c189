// A hedging item's calls out (issue 30): its call, and the hedges the engine sends while none has
// answered. The engine says when to ask for a hedge, where it goes, which answer wins and which
// calls to abort; this runs the calls side by side, the one timer and the aborts, and hands every
// outcome (and every aborted call) back to the engine in the order they came.
import type { Polled, Recorded, Step } from './engine';
import type { CallResult } from './transport';
import { Watch } from './timers';

export type CallStep = Extract<Step, { kind: 'call' }>;

export interface HedgeLoop {
	/** One call with its own abort signal (the item's cancel signal is folded in). */
	send(step: CallStep, signal: AbortSignal): Promise<CallResult>;
	/** The engine's hedge, its writes committed (a `call` or an `await`). */
	hedge(): Promise<Polled>;
	/** A call's outcome handed to the engine, its writes committed. */
	outcome(step: CallStep, result: CallResult): Promise<Recorded>;
	/** An aborted call handed back, its writes committed. */
	abandon(call: number): Promise<Recorded>;
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
	const start = (step: CallStep) => {
		const call = step.hedging!.call;
		const abort = new AbortController();
		const signal = loop.cancel ? AbortSignal.any([loop.cancel, abort.signal]) : abort.signal;
		const settled = loop.send(step, signal).then(
			(result): Settled => ({ call, result }),
			(error: unknown): Settled => ({ call, error }),
		);
		out.set(call, { step, abort, settled });
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
	start(first);
	arm(first.hedging!.hedge_after_ms);
	try {
		for (;;) {
			const next = await Promise.race([
				...[...out.values()].map((o) => o.settled),
				...(timer ? [timer.due] : []),
			]);
			if (next === 'hedge') {
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
			if ('error' in next) throw next.error; // the item was cancelled, or a fault: nothing to record
			let rec = await loop.outcome(settledOut.step, next.result);
			for (const call of rec.abort ?? []) {
				const o = out.get(call);
				if (!o) continue;
				out.delete(call);
				o.abort.abort();
				await o.settled; // its connection closed; what it says now is not its provider's
				rec = await loop.abandon(call);
			}
			if (out.size === 0) return rec;
		}
	} finally {
		timer?.watch.stop();
		for (const o of out.values()) o.abort.abort();
	}
}
