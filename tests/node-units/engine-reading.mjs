// What the engine reads an outcome as, through its real boundary: one item of a one-provider
// chain on fresh rows, one call, this outcome. Tests of the functions that hand errors and
// answers to the engine compare these readings (the attempt's label, its health, whether the
// item retries), not the facts' shape: which fact decides is the engine's call.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { ROW_KINDS, ROW_SEPARATOR } = require('../../dist/lib/engineConstants.js');

const engines = new Map();
function engine(method, idempotent) {
	const key = `${method}:${idempotent}`;
	if (!engines.has(key))
		engines.set(
			key,
			new Engine({
				providers: [{ name: 'p', method, idempotent }],
				strategy: 'none',
				max_attempts: 3,
			}),
		);
	return engines.get(key);
}

/** `{ outcome, health, retried, retryAfter }`: the engine's label, health, whether it tries
 * again, and whether a Retry-After header set its wait. */
export function readAs(outcome, { method = 'GET', idempotent = false } = {}) {
	const item = engine(method, idempotent).item(0, 'h', '');
	const rows = ROW_KINDS.map(() => '').join(ROW_SEPARATOR);
	const polled = item.poll(0, rows);
	if (polled.step.kind !== 'call') throw new Error(`expected a call, got ${polled.step.kind}`);
	const rec = item.outcome(0, outcome);
	const next = rec.end ? rec.end.step : item.poll(rec.sleep_ms, rows).step;
	return {
		outcome: rec.attempt.outcome,
		health: rec.attempt.health,
		retried: next.kind === 'call' || next.kind === 'sleep',
		retryAfter: rec.attempt.retry_after,
	};
}

/** Whether the engine's report of this outcome serves the item (Report Outcome's `success`): one
 * Check Provider ticket on fresh rows, reported with this outcome. */
export function servedAs(outcome) {
	const e = engine('GET', false);
	const rows = ROW_KINDS.map(() => '').join(ROW_SEPARATOR);
	const checked = e.check(0, rows, 'lease', 'global');
	if (checked.decision.kind !== 'go') throw new Error(`expected go, got ${checked.decision.kind}`);
	return e.report(1, checked.decision.ticket, 'global', outcome, rows).served;
}
