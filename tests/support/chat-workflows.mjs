// Workflows around the Resilient Chat Model, built as n8n stores them: a Manual Trigger, items
// from a Set (raw JSON) and a Split Out, a root node (Basic LLM Chain or AI Agent) and its chat
// model sub-nodes (n8n's OpenAI Chat Model on the OpenAI credential whose Base URL is a loopback
// vendor). Used by the end-to-end test and README's example.
export const CHAT_NODE = 'n8n-nodes-resilient-provider-call.resilientChatModel';

/** An n8n OpenAI credential pointed at loopback vendor instance `id`. */
export const openAiCredential = (vendors, id, apiKey) => ({
	id: `oa${id}`
		.replace(/[^A-Za-z0-9]/g, '')
		.padEnd(16, '0')
		.slice(0, 16),
	name: `openai ${id}`,
	type: 'openAiApi',
	data: { apiKey, url: `${vendors.url(id)}/v1` },
});

/** n8n's OpenAI Chat Model on credential `cred` (chat completions, no built-in tools). */
export const openAiModel = (name, cred, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
	typeVersion: 1.2,
	position,
	parameters: { model: { __rl: true, mode: 'list', value: 'gpt-4o-mini' }, options: {} },
	credentials: { openAiApi: { id: cred.id, name: cred.name } },
});

/** Basic LLM Chain over each item's `q`, one item per batch unless told otherwise. */
export const llmChain = (name, position, extra = {}) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.chainLlm',
	typeVersion: 1.7,
	position,
	parameters: {
		promptType: 'define',
		text: '={{ $json.q }}',
		batching: { batchSize: 1 },
		...extra,
	},
	continueOnFail: true,
});

export const resilientChatModel = (name, parameters, position, nodeType = CHAT_NODE) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: nodeType,
	typeVersion: 1,
	position,
	parameters,
});

/** Start -> n items {q} -> every root in `roots`; `models` wire sub-nodes: [from, to, index]. */
export function chatWorkflow(id, { items, nodes, roots, models }) {
	const qs = Array.from({ length: items }, (_, i) => ({ n: i + 1, q: `Question ${i + 1}` }));
	const all = [
		{
			id: 'start',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: 'items',
			name: 'Items',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 0],
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ items: qs }) },
		},
		{
			id: 'split',
			name: 'Split',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [400, 0],
			parameters: { fieldToSplitOut: 'items' },
		},
		...nodes,
	];
	const connections = {
		Start: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
		Items: { main: [[{ node: 'Split', type: 'main', index: 0 }]] },
		Split: { main: [roots.map((r) => ({ node: r, type: 'main', index: 0 }))] },
	};
	for (const [from, to, index] of models) {
		connections[from] ??= { ai_languageModel: [[]] };
		connections[from].ai_languageModel[0].push({ node: to, type: 'ai_languageModel', index });
	}
	return {
		id,
		name: id,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: all,
		connections,
	};
}
