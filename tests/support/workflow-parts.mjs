// The parts test workflows are built from: a node at column x, and connections written as
// [from, [to of output 0, to of output 1 …]] (null: that output goes nowhere).
import { randomUUID } from 'node:crypto';

export const node = (name, type, typeVersion, x, parameters, extra = {}) => ({
	id: randomUUID(),
	name,
	type,
	typeVersion,
	position: [x, 0],
	parameters,
	...extra,
});

/** A POST webhook at `path` that answers at once, named Webhook (queue mode's way in). */
export const webhook = (path) =>
	node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2,
		0,
		{ httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
		{ webhookId: randomUUID() },
	);

export const link = (...pairs) =>
	Object.fromEntries(
		pairs.map(([from, outputs]) => [
			from,
			{ main: outputs.map((to) => (to ? [{ node: to, type: 'main', index: 0 }] : [])) },
		]),
	);
