// Workflows around Check Provider and Report Outcome, as n8n stores them: a guarded n8n node
// (On Error: Continue (using error output)) between the two, items one at a time through n8n's
// Loop Over Items so each check sees the outcomes before it. Used by the guard's end-to-end
// tests and the test of one counters path for every entry point.

export const node = (name, type, typeVersion, parameters, extra = {}) => ({
	id: name.replace(/\W/g, ''),
	name,
	type,
	typeVersion,
	position: [0, 0],
	parameters,
	...extra,
});

/** n8n's HTTP Request node, its URL the checked provider's, on header credential `cred`. */
export function httpGuarded(cred = { id: 'guardHeaderCred1', name: 'guard header' }) {
	return node(
		'HTTP Request',
		'n8n-nodes-base.httpRequest',
		4.2,
		{
			url: '={{ $json.provider.url }}',
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			options: {},
		},
		{
			credentials: { httpHeaderAuth: cred },
			onError: 'continueErrorOutput',
		},
	);
}

export function openAiGuarded() {
	return node(
		'OpenAI',
		'@n8n/n8n-nodes-langchain.openAi',
		1.8,
		{
			resource: 'text',
			operation: 'message',
			modelId: { __rl: true, value: 'gpt-4o-mini', mode: 'id' },
			messages: { values: [{ content: '=Say hi to item {{ $json.n }}' }] },
			options: {},
		},
		{
			credentials: { openAiApi: { id: 'guardOpenAiCred1', name: 'guard openai' } },
			onError: 'continueErrorOutput',
		},
	);
}

/** A workflow run by `n8n execute`: a Manual Trigger named Start, then `nodes`. */
export const manualWorkflow = (wid, nodes, connections) => ({
	id: wid,
	name: wid,
	active: false,
	settings: { executionOrder: 'v1' },
	nodes: [node('Start', 'n8n-nodes-base.manualTrigger', 1, {}), ...nodes],
	connections,
});

/** Items → Loop Over Items (one at a time) → Check → guarded → Report (both paths) → Loop;
 * Check's deferred and failed go back to the Loop too; the Loop's done output is `Done`. */
export function guardWorkflow(
	nodeType,
	wid,
	{ items = 10, check, guarded, report = {}, extra = {} },
) {
	const nodes = [
		node('Items', 'n8n-nodes-base.set', 3.4, {
			mode: 'raw',
			jsonOutput: JSON.stringify({
				items: Array.from({ length: items }, (_, i) => ({ n: i + 1 })),
			}),
		}),
		node('Split', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'items' }),
		node('Loop', 'n8n-nodes-base.splitInBatches', 3, { batchSize: 1, options: {} }),
		node('Check', nodeType, 2, { operation: 'checkProvider', ...check }, extra),
		guarded,
		node('Report', nodeType, 2, { operation: 'reportOutcome', ...report }, extra),
		node('Done', 'n8n-nodes-base.noOp', 1, {}),
	];
	const to = (n) => [{ node: n, type: 'main', index: 0 }];
	return manualWorkflow(wid, nodes, {
		Start: { main: [to('Items')] },
		Items: { main: [to('Split')] },
		Split: { main: [to('Loop')] },
		Loop: { main: [to('Done'), to('Check')] },
		Check: { main: [to(guarded.name), to('Loop'), to('Loop')] },
		[guarded.name]: { main: [to('Report'), to('Report')] },
		Report: { main: [to('Loop'), [], to('Loop')] },
	});
}

/** Start -> `count` items {n} (Set, Split Out) -> `target` (a node): a node fed many items. */
export function itemsInto(wid, count, target) {
	return manualWorkflow(
		wid,
		[
			node('Items', 'n8n-nodes-base.set', 3.4, {
				mode: 'raw',
				jsonOutput: JSON.stringify({
					items: Array.from({ length: count }, (_, i) => ({ n: i + 1 })),
				}),
			}),
			node('Split', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'items' }),
			target,
		],
		{
			Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
			Split: { main: [[{ node: target.name, type: 'main', index: 0 }]] },
		},
	);
}
