// What the trigger consumers hold in the store, read as the store keeps it: whether a consumer
// has started (a Redis consumer group, a Postgres consumer row) and whether it has taken every
// event written so far. Tests wait on these rather than sleeping a fixed time: once a consumer has
// taken and acknowledged every event, no delivery of those events is still to come.
import { execFileSync } from 'node:child_process';
import { REDIS_PORT, psql } from '../services.mjs';

const STREAM = 'rpc:{global}:events';
const TABLE = 'resilient_provider_state';
const consumerOf = (workflowId) => `n8n-workflow:${workflowId}`;

const redis = (...args) =>
	JSON.parse(String(execFileSync('redis-cli', ['-p', String(REDIS_PORT), '--json', ...args])));

/** XINFO GROUPS of the global scope's stream: one object per group (name, pending, …). */
function redisGroups() {
	if (redis('EXISTS', STREAM) === 0) return []; // no stream yet: no group either
	return redis('XINFO', 'GROUPS', STREAM);
}

/** The consumer of this trigger workflow has started reading (its group or row exists). */
export function started(store, workflowId) {
	const consumer = consumerOf(workflowId);
	if (store === 'redis') return redisGroups().some((g) => g.name === consumer);
	try {
		return (
			psql(
				`SELECT count(*) FROM ${TABLE}_event_consumers WHERE consumer = '${consumer}' AND scope = 'global'`,
			) === '1'
		);
	} catch {
		return false; // the first trigger to start makes the tables
	}
}

/** Events of the global scope this consumer has not yet taken (and, on Redis, acknowledged). */
export function untaken(store, workflowId) {
	const consumer = consumerOf(workflowId);
	if (store === 'redis') {
		const g = redisGroups().find((x) => x.name === consumer);
		if (!g) return Infinity;
		// Delivered up to the stream's last entry, and every delivery acknowledged.
		const last = redis('XINFO', 'STREAM', STREAM)['last-generated-id'];
		return Number(g.pending) + (g['last-delivered-id'] === last ? 0 : 1);
	}
	return Number(
		psql(`SELECT count(*) FROM ${TABLE}_events e JOIN ${TABLE}_event_consumers c
          ON c.scope = e.scope AND e.id > c.since_id
        WHERE c.consumer = '${consumer}' AND c.scope = 'global' AND NOT EXISTS (
          SELECT 1 FROM ${TABLE}_event_claims k WHERE k.consumer = c.consumer AND k.event_id = e.id)`),
	);
}
