// Drives one item through the engine: read rows, poll, write, call, report the outcome, write.
// Two engine calls per attempt (poll, outcome); all decisions come from the engine. This file
// moves row texts between the engine and the store, and bytes between the engine and HTTP.
import type { IDataObject, Logger } from 'n8n-workflow';
import type {
	AttemptLog,
	End,
	Engine,
	Item,
	Outcome,
	Recorded,
	StreamStep,
	Transition,
} from './engine';
import { skipView, transitionView } from './resilience';
import type { ItemResult } from './itemResult';
import { ROW_SEPARATOR } from './engineConstants';
import type { ItemPlan, ProviderRequest } from './params';
import { FailoverStore, StoreUnavailable } from './store/failover';
import { compareAndSet, newTally, type RaceTally } from './store/compareAndSet';
import { Cancelled, offerBody, type CallResult } from './transport';
import { failedCheck } from './responseCheck';
import { sleepUnlessAborted } from './timers';
import { runHedged, type CallStep } from './hedgedCalls';

export interface ItemContext {
	/** One HTTP attempt (n8n's helper in the node; any real HTTP client in store tests). */
	call: (
		req: ProviderRequest,
		headers: IDataObject,
		deadlineMs: number,
		cancel?: AbortSignal,
		/** A streamed item's limits for this attempt (the engine's; absent when not streamed). */
		stream?: StreamStep,
		/** A streamed call runs this before its first committing chunk reaches the caller, with
		 * the ms since it started (its time to first chunk); false: another call of a hedging
		 * item committed first, hand nothing over. */
		claim?: (afterMs: number) => boolean,
	) => Promise<CallResult>;
	logger: Logger;
	engine: Engine;
	store: FailoverStore;
	plan: ItemPlan;
	secrets: Record<string, string>;
	correlationId: string;
	cancel?: AbortSignal;
	/** The item's calls are streamed (the chat model under a root node that streams). */
	streamed?: boolean;
	/** A provider the engine tries first while admissible (the chat model's earlier rounds). */
	prefer?: number;
	/** More items of this execution wait (Call Chain): read their rows while this call is out. */
	more?: () => boolean;
}

export async function runItem(c: ItemContext): Promise<ItemResult> {
	const { engine, store, plan } = c;
	const keys = plan.requests.map((r) => r.name);
	const started = Date.now();
	const transitions: IDataObject[] = [];
	const tally = newTally();
	const dropped: string[] = [];
	let body: unknown;
	const finish = (end: End): ItemResult => ({
		end: end.step,
		body: end.step.kind === 'done' ? body : undefined,
		attempts: end.report.attempts as unknown as IDataObject[],
		skipped: end.report.skipped.map((s) => skipView(keys, s)),
		transitions,
		sleptMs: end.report.slept_ms,
		totalMs: Date.now() - started,
		storeFallback: store.degraded,
		storeWarning: store.warning,
		casRetries: tally.lost,
		droppedWrites: dropped,
		counters: end.counters,
		committed: tally.committed,
		route: end.report.route && {
			routing: end.report.route.routing,
			order: end.report.route.order.map((p) => keys[p]),
		},
	});
	const noteTransition = (provider: number, t?: Transition) => {
		if (t) transitions.push(transitionView(keys[provider], t));
	};
	let item: Item | undefined;
	try {
		item = engine.item(
			await store.now(),
			`${c.correlationId}:${randomTag()}`,
			plan.keys.map((k) => k ?? '').join(ROW_SEPARATOR),
		);
		const live = item;
		if (c.streamed) live.stream();
		if (c.prefer !== undefined) live.prefer(c.prefer);
		for (;;) {
			const { value: poll } = await compareAndSet(engine, store, keys, true, tally, async () => {
				const snap = await store.read(keys);
				return live.poll(snap.now, snap.rows.join(ROW_SEPARATOR));
			});
			if (poll.writes) noteTransition(poll.writes.provider, poll.transition);
			if (poll.end) return finish(poll.end);
			const step = poll.step;
			if (step.kind === 'sleep') {
				await cancellableSleep(step.ms, c.cancel);
				continue;
			}
			if (step.kind !== 'call') throw new Error(`engine returned ${step.kind} without an end`);
			if (c.more?.() && poll.read_ahead) store.readAhead(keys, poll.read_ahead);
			// One call's outcome to the engine, its writes committed. The last answer's body: when
			// the engine says `done`, it is the one that served (an aborted call hands none over).
			const record = async (s: CallStep, result: CallResult) => {
				body = result.body;
				const rec = live.outcome(await store.now(), result.outcome, s.hedging?.call);
				logAttempt(c, s, result.outcome, rec.attempt);
				await commitRecord(c, keys, live, rec, noteTransition, tally, dropped);
				return rec;
			};
			const rec = step.hedging
				? await runHedged(step, {
						send: (s, signal, claim) => send(c, s, signal, claim),
						commit: (call, afterMs) => Array.from(live.commit(call, afterMs)),
						hedge: async () => {
							const { value } = await compareAndSet(
								engine,
								store,
								keys,
								true,
								tally,
								async (again) => {
									// Fresh rows: the grant to rows already read is the next item's.
									const snap = await store.read(keys, false);
									return live.hedge(snap.now, snap.rows.join(ROW_SEPARATOR), again);
								},
							);
							if (value.writes) noteTransition(value.writes.provider, value.transition);
							return value;
						},
						outcome: record,
						abandon: async (call) => {
							const r = live.abandon(await store.now(), call);
							await commitRecord(c, keys, live, r, noteTransition, tally, dropped);
							return r;
						},
						cancel: c.cancel,
					})
				: await record(
						step,
						// A streamed call's first chunk: its time to first chunk, for the engine.
						await send(c, step, c.cancel, (afterMs) => (live.commit(undefined, afterMs), true)),
					);
			if (rec.end) return finish(rec.end);
			if (rec.sleep_ms > 0) await cancellableSleep(rec.sleep_ms, c.cancel);
		}
	} catch (error) {
		if (error instanceof StoreUnavailable && item)
			return finish(item.deferNow(await store.now(), error.reason));
		throw error;
	} finally {
		item?.free();
	}
}

/** One call as the step says, its outcome as the engine reads it: the Idempotency-Key and the
 * secret header added, the response check run (it reads the body; whether it matters is the
 * engine's call), and the body offered (the engine matches a 400's body against the vendors'
 * "context too long" wordings). */
async function send(
	c: ItemContext,
	step: CallStep,
	cancel?: AbortSignal,
	claim?: (afterMs: number) => boolean,
): Promise<CallResult> {
	const req = c.plan.requests[step.provider];
	const headers: IDataObject = {};
	if (step.idempotency_key) headers['Idempotency-Key'] = step.idempotency_key;
	if (req.secretName)
		headers[req.secretHeader] = (req.secretPrefix ?? '') + c.secrets[req.secretName];
	const result = await c.call(req, headers, step.deadline_ms, cancel, step.stream, claim);
	const outcome = result.outcome;
	if (outcome.kind === 'status') {
		const failed = failedCheck(req, result.body);
		if (failed) outcome.failed_check = failed;
	}
	offerBody(outcome, result.body);
	return result;
}

/** Write what an outcome did to the provider's rows; on a lost race the engine records the
 * same outcome again on the provider's fresh rows. */
async function commitRecord(
	c: ItemContext,
	keys: string[],
	item: Item,
	first: Recorded,
	note: (p: number, t?: Transition) => void,
	tally: RaceTally,
	dropped: string[],
) {
	// Only the outcome's provider's rows can have changed under it: re-read those alone.
	const key = first.writes ? keys[first.writes.provider] : '';
	const done = await compareAndSet(c.engine, c.store, keys, false, tally, async (again) => {
		if (!again) return first;
		const snap = await c.store.read([key]);
		return item.rerecord(snap.now, snap.rows.join(ROW_SEPARATOR));
	});
	if (done.dropped) dropped.push(done.dropped);
	else if (done.value.writes) note(done.value.writes.provider, done.value.transition);
}

function randomTag(): string {
	return Math.random().toString(36).slice(2, 10);
}

const cancellableSleep = (ms: number, cancel?: AbortSignal) =>
	sleepUnlessAborted(ms, cancel, () => new Cancelled());

function logAttempt(c: ItemContext, step: CallStep, outcome: Outcome, log: AttemptLog | undefined) {
	const req = c.plan.requests[step.provider];
	if (log?.health === 'success' && step.attempt === 1 && !step.probe) {
		// The healthy path: n8n's logger costs ~0.2 ms a line (stack capture, JSON, stdout), so a
		// first-attempt success is a debug line; retries, failures and probes stay at info.
		c.logger.debug('resilient-provider-call attempt', {
			provider: req.name,
			attempt: 1,
			correlationId: c.correlationId,
		});
		return;
	}
	let url = req.url;
	try {
		const u = new URL(req.url);
		url = `${u.origin}${u.pathname}`; // no query string: it may hold keys
	} catch {
		/* validated earlier */
	}
	c.logger.info('resilient-provider-call attempt', {
		url,
		method: req.method,
		provider: req.name,
		// The engine's reading of the outcome: a status, "5XX", or an error code.
		outcome: log?.outcome,
		streamBroken: outcome.kind === 'broken' || undefined,
		check: outcome.kind === 'status' ? (outcome.failed_check ?? undefined) : undefined,
		attempt: step.attempt,
		probe: step.probe,
		hedge: step.hedging?.hedge || undefined,
		waitMs: log?.wait_ms ?? 0,
		retryAfter: log?.retry_after ?? false,
		correlationId: c.correlationId,
	});
}
