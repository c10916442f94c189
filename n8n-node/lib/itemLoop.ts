// Drives one item through the engine: read rows, poll, write, call, report the outcome, write.
// Two engine calls per attempt (poll, outcome); all decisions come from the engine. This file is
// the loop; each exchange with the engine and the store is itemConversation.ts's, each call's request
// sendAttempt.ts's, a hedging item's calls side by side hedgedCalls.ts's.
import { ROW_SEPARATOR } from './engineConstants';
import type { ItemContext } from './itemContext';
import type { ItemResult } from './itemResult';
import { ItemConversation } from './itemConversation';
import { rowKeys } from './rowKeys';
import { send } from './sendAttempt';
import { StoreUnavailable } from './store/failover';
import { Cancelled } from './attemptAbort';
import { sleepUnlessAborted } from './timers';
import { runHedged } from './hedgedCalls';

export type { ItemContext } from './itemContext';

export async function runItem(c: ItemContext): Promise<ItemResult> {
	const { engine, store, plan } = c;
	const keys = rowKeys(engine, plan.requests);
	const item = engine.item(
		await store.now(),
		`${c.correlationId}:${randomTag()}`,
		plan.keys.map((k) => k ?? '').join(ROW_SEPARATOR),
	);
	const run = new ItemConversation(c, item, keys);
	try {
		const member = c.line ? item.join(c.line.pool) : 0;
		if (c.streamed) item.stream();
		if (c.prefer !== undefined) item.prefer(c.prefer);
		c.tokens?.forEach(
			(t, provider) => t && item.tokens(provider, t.chars, t.cjkChars, t.counted, t.maxOutput),
		);
		for (;;) {
			const poll = await run.poll();
			if (poll.end) return run.finish(poll.end);
			const step = poll.step;
			if (step.kind === 'sleep') {
				await cancellableSleep(step.ms, c.cancel);
				continue;
			}
			if (step.kind === 'queue') {
				await c.line?.wait(member, step.ms, c.cancel);
				continue;
			}
			if (step.kind !== 'call') throw new Error(`engine returned ${step.kind} without an end`);
			if (c.more?.() && poll.read_ahead) store.readAhead(keys, poll.read_ahead);
			const rec = step.hedging
				? await runHedged(step, {
						send: (s, signal, claim) => send(c, s, signal, claim),
						commit: (call, afterMs) => Array.from(item.commit(call, afterMs)),
						hedge: () => run.hedge(),
						outcome: (s, result) => run.outcome(s, result),
						abandon: (call) => run.abandon(call),
						cancel: c.cancel,
					})
				: await run.outcome(
						step,
						// A streamed call's first chunk: its time to first chunk, for the engine.
						await send(c, step, c.cancel, (afterMs) => (item.commit(undefined, afterMs), true)),
					);
			if (rec.end) return run.finish(rec.end);
			if (rec.sleep_ms > 0) await cancellableSleep(rec.sleep_ms, c.cancel);
		}
	} catch (error) {
		if (error instanceof StoreUnavailable)
			return run.finish(item.deferNow(await store.now(), error.reason));
		if (error instanceof Cancelled) await run.cancelled();
		throw error;
	} finally {
		item.free();
	}
}

function randomTag(): string {
	return Math.random().toString(36).slice(2, 10);
}

const cancellableSleep = (ms: number, cancel?: AbortSignal) =>
	sleepUnlessAborted(ms, cancel, () => new Cancelled());
