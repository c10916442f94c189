// Drives one item through the engine's step machine: read rows, poll, write, call, record.
// All decisions come from the engine; this file only moves bytes between it, the store and HTTP.
import type { IDataObject, Logger } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';
import type {
	Counters,
	Effect,
	Engine,
	Item,
	Outcome,
	ProviderView,
	Step,
	Transition,
} from './engine';
import type { ItemPlan, ProviderRequest } from './params';
import { FailoverStore, StoreUnavailable } from './store/failover';
import { Cancelled, missingPath, type CallResult } from './transport';

/** Lost compare-and-set races tolerated per write before giving up (bounded: no livelock). */
const MAX_RACES = 20;

export interface ItemResult {
	end: Extract<Step, { kind: 'done' | 'defer' | 'fail' }>;
	/** The serving provider's response body (done only). */
	body?: unknown;
	attempts: IDataObject[];
	skipped: IDataObject[];
	transitions: IDataObject[];
	sleptMs: number;
	totalMs: number;
	/** Why the shared store was left for this process's memory (fail-open), if it was. */
	storeFallback?: string;
	/** Compare-and-set races this item lost (each one a re-read and retry; bounded by MAX_RACES
	 * per write before the store is given up as configured). */
	casRetries: number;
	/** This item's contribution to each provider's counters (index = provider). */
	counters: Counters[];
}

export interface ItemContext {
	/** One HTTP attempt (n8n's helper in the node; any real HTTP client in store tests). */
	call: (
		req: ProviderRequest,
		headers: IDataObject,
		deadlineMs: number,
		cancel?: AbortSignal,
	) => Promise<CallResult>;
	logger: Logger;
	engine: Engine;
	store: FailoverStore;
	plan: ItemPlan;
	secrets: Record<string, string>;
	correlationId: string;
	cancel?: AbortSignal;
}

export async function runItem(c: ItemContext): Promise<ItemResult> {
	const { engine, store, plan } = c;
	const keys = plan.requests.map((r) => r.name);
	const transitions: IDataObject[] = [];
	const noteTransition = (provider: number, t: Transition | null) => {
		if (t)
			transitions.push({
				provider: plan.requests[provider].name,
				from: t.from,
				to: t.to,
				at: new Date(t.at_ms).toISOString(),
			});
	};
	const started = Date.now();
	let item: Item | undefined;
	let body: unknown;
	const lost = { n: 0 };
	const finish = (end: ItemResult['end']): ItemResult => {
		const report = item!.report();
		return {
			end,
			body: end.kind === 'done' ? body : undefined,
			attempts: report.attempts.map((a) => ({ ...a })) as unknown as IDataObject[],
			skipped: report.skipped.map((s) => ({
				provider: plan.requests[s.provider].name,
				reason: s.reason,
				until: new Date(s.until_ms).toISOString(),
			})),
			transitions,
			sleptMs: report.slept_ms,
			totalMs: Date.now() - started,
			storeFallback: store.degraded,
			casRetries: lost.n,
			counters: item!.counters(),
		};
	};
	try {
		item = engine.item(
			await store.now(),
			`${c.correlationId}:${Math.random().toString(36).slice(2, 10)}`,
			plan.keys,
		);
		for (let races = 0; ;) {
			const snap = await store.read(keys);
			const poll = item.poll(snap.now, snap.views);
			if (poll.writes && !(await store.write(keys, poll.writes))) {
				lost.n++;
				if (++races > MAX_RACES)
					await store.fallBack(
						`${MAX_RACES + 1} compare-and-set races lost in a row`,
						async () => undefined,
					);
				continue; // nothing committed: re-read and poll again
			}
			races = 0;
			if (poll.writes) {
				noteTransition(poll.writes.provider, poll.transition);
				// Keep the snapshot current with what we just wrote, so recording the outcome against
				// it does not lose a compare-and-set race to ourselves.
				const v = snap.views[poll.writes.provider] as Record<string, unknown>;
				for (const kind of ['breaker', 'gate', 'in_flight'] as const)
					if (poll.writes[kind]) v[kind] = poll.writes[kind];
			}
			const step = poll.step;
			if (step.kind === 'sleep') {
				await cancellableSleep(step.ms, c.cancel);
				continue;
			}
			if (step.kind !== 'call') return finish(step);
			const req = plan.requests[step.provider];
			const headers: IDataObject = {};
			if (step.idempotency_key) headers['Idempotency-Key'] = step.idempotency_key;
			if (req.secretName) headers[req.secretHeader] = c.secrets[req.secretName];
			const result = await c.call(req, headers, step.deadline_ms, c.cancel);
			const outcome = result.outcome;
			// The check is run here (it reads the body); whether it matters is the engine's call.
			if (
				outcome.kind === 'status' &&
				req.requiredPath &&
				missingPath(result.body, req.requiredPath)
			) {
				outcome.failed_check = `required_path:${req.requiredPath}`;
			}
			// The last answer's body: when the engine says `done`, it is the one that served.
			body = result.body;
			const effect = item.onOutcome(await store.now(), outcome, false);
			logAttempt(c, step, outcome, item.lastAttempt());
			await recordEffect(c, keys, effect, snap.views[step.provider], noteTransition, lost);
			const end = item.finished();
			if (end) return finish(end as ItemResult['end']); // done: no need to read the rows again
		}
	} catch (error) {
		if (error instanceof StoreUnavailable && item)
			return finish(item.deferNow(Date.now(), 'store_unavailable') as ItemResult['end']);
		throw error;
	} finally {
		item?.free();
	}
}

/** Apply an outcome to the provider's rows. First against the rows read for the call (in the
 * healthy steady state nothing changes, so nothing is read or written again), then re-read on
 * a lost race. When the races run out: fail closed (throws StoreUnavailable) or fail open, and
 * then the outcome is recorded in this process's memory, as after a store timeout. */
async function recordEffect(
	c: ItemContext,
	keys: string[],
	effect: Effect,
	seen: ProviderView,
	note: (p: number, t: Transition | null) => void,
	lost: { n: number },
) {
	const one = [keys[effect.provider]];
	let view = seen;
	let now = await c.store.now();
	for (let races = 0; ;) {
		const rec = c.engine.record(view, effect, now);
		if (!rec.writes) return; // unchanged: nothing to write
		if (await c.store.write(one, { ...rec.writes, provider: 0 })) {
			note(effect.provider, rec.transition);
			return;
		}
		lost.n++;
		if (++races > MAX_RACES) {
			if (c.store.degraded) return; // even this process's memory keeps losing: stop (bounded)
			await c.store.fallBack(
				`${MAX_RACES + 1} compare-and-set races lost in a row`,
				async () => undefined,
			);
			races = 0; // fail-open: the next rounds read and write this process's memory
		}
		const snap = await c.store.read(one);
		view = snap.views[0];
		now = snap.now;
	}
}

async function cancellableSleep(ms: number, cancel?: AbortSignal) {
	if (!cancel) return sleep(ms);
	if (cancel.aborted) throw new Cancelled();
	await new Promise<void>((resolve, reject) => {
		const timer = setTimeout(() => {
			cancel.removeEventListener('abort', onAbort);
			resolve();
		}, ms);
		const onAbort = () => {
			clearTimeout(timer);
			reject(new Cancelled());
		};
		cancel.addEventListener('abort', onAbort, { once: true });
	});
}

function logAttempt(
	c: ItemContext,
	step: Extract<Step, { kind: 'call' }>,
	outcome: Outcome,
	log: { wait_ms: number; retry_after: boolean } | null,
) {
	const req = c.plan.requests[step.provider];
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
		status: outcome.kind === 'status' ? outcome.status : undefined,
		code: outcome.kind === 'error' ? outcome.code : undefined,
		check: outcome.kind === 'status' ? (outcome.failed_check ?? undefined) : undefined,
		attempt: step.attempt,
		probe: step.probe,
		waitMs: log?.wait_ms ?? 0,
		retryAfter: log?.retry_after ?? false,
		correlationId: c.correlationId,
	});
}
